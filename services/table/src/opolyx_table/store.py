"""Durable storage of tables on JetStream: events in stream TABLE_EVENTS, snapshots in KV.

Write path of one command: one events message (all of the command's events, so a crash
never stores half a command) published with `Nats-Expected-Last-Subject-Sequence` set to
the last stream sequence this instance knows for the table, then the snapshot written
with compare-and-set on its KV revision. The expected-sequence header is the fence: if any
other writer touched the table since, JetStream refuses the publish and this instance
stops serving the table instead of forking its history.

The snapshot and the events message are written concurrently (one round trip instead of
two); the snapshot names the `write_id` of the last message it includes. Read path (taking
a table over): the snapshot, checked against the table's last stored message. When they
match (the usual case) that is all; when the stream is ahead (a crash between the two
writes) the missing messages are replayed through the rules' `evolve`; when the snapshot
is not on the stream's history at all (its events write failed) the state is rebuilt from
the seed and every stored event.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import APIError, KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue
from opolyx_contracts.subjects import (
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
    TABLE_EVENTS_STREAM,
    TABLE_EVENTS_SUBJECTS,
    TABLE_LEASES_BUCKET,
    TABLES_BUCKET,
    table_events,
)
from opolyx_contracts.table import TableEvents, event_message_id
from opolyx_service import ensure_kv, ensure_stream, inject_headers

__all__ = ["Fenced", "Storage", "StoreUnavailable", "snapshot_key"]

WRONG_LAST_SEQUENCE = 10071
WRONG_LAST_SEQUENCE_CONSTANT = 10164
NO_RESPONDERS = "503"


class Fenced(Exception):
    """Another writer changed the table: this instance no longer owns it."""


class StoreUnavailable(Exception):
    """JetStream did not confirm a write in time; whether it landed is unknown."""


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


class _Ack(asyncio.Future[Msg]):
    """The reply to one JetStream publish, found by its inbox token."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token


def _pub_ack(msg: Msg) -> dict[str, Any] | tuple[int, str]:
    """A JetStream publish reply: the ack (`seq`, `duplicate`) or (error code, text)."""
    if msg.headers and msg.headers.get("Status") == NO_RESPONDERS:
        return 0, "no stream answered"
    try:
        reply = orjson.loads(msg.data)
    except orjson.JSONDecodeError:
        return 0, f"unreadable reply {msg.data[:100]!r}"
    error = reply.get("error")
    if error is not None:
        return int(error.get("err_code") or 0), str(error.get("description", error))
    return dict(reply)


def snapshot_key(partition: int, table_id: str) -> str:
    return f"{partition}.{table_id}"


class Storage:
    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        tables: KeyValue,
        leases: KeyValue,
        timeout: float = 5.0,
    ):
        self.nc = nc
        self.js = js
        self.tables = tables
        self.leases = leases
        self.timeout = timeout
        """Seconds to wait for JetStream to confirm a write."""
        self._ack_prefix: str | None = None
        self._acks: dict[str, _Ack] = {}
        self._ack_tokens = itertools.count(1)

    @classmethod
    async def open(
        cls,
        nc: Client,
        *,
        lease_ttl: float,
        replicas: int = 1,
        duplicate_window: float = 120.0,
        events_max_age: float | None = None,
    ) -> Storage:
        """Declare (idempotently) the stream, the GAMES stream and both buckets."""
        timeout = 5.0
        js = nc.jetstream(timeout=timeout)
        await ensure_stream(
            js,
            TABLE_EVENTS_STREAM,
            [TABLE_EVENTS_SUBJECTS],
            duplicate_window=duplicate_window,
            max_age=events_max_age,
            replicas=replicas,
        )
        await ensure_stream(
            js,
            GAMES_STREAM,
            [GAMES_STREAM_SUBJECTS],
            duplicate_window=duplicate_window,
            replicas=replicas,
        )
        tables = await ensure_kv(js, TABLES_BUCKET, history=1, replicas=replicas)
        leases = await ensure_kv(js, TABLE_LEASES_BUCKET, ttl=lease_ttl, replicas=replicas)
        return cls(nc, js, tables, leases, timeout)

    # --- events ---------------------------------------------------------------------

    async def append_events(
        self, table_id: str, first_seq: int, payload: bytes, expected_stream_seq: int
    ) -> int:
        """Store one events message (a `TableEvents` body); returns its stream sequence.

        Raises `Fenced` when the table's last stored message is not `expected_stream_seq`
        (someone else wrote), `StoreUnavailable` when the outcome is unknown.
        """
        headers = inject_headers(
            {
                "Nats-Msg-Id": event_message_id(table_id, first_seq),
                "Nats-Expected-Last-Subject-Sequence": str(expected_stream_seq),
            }
        )
        try:
            ack = await self.js.publish(
                table_events(table_id),
                payload,
                stream=TABLE_EVENTS_STREAM,
                headers=headers,
            )
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                raise Fenced(f"table {table_id}: {exc.description}") from None
            raise StoreUnavailable(repr(exc)) from None
        except (NatsTimeoutError, TimeoutError) as exc:
            raise StoreUnavailable(f"no ack for events of {table_id}: {exc!r}") from None
        if ack.duplicate:
            # The same message id is already stored: written before by an earlier owner
            # (or an earlier attempt); the in-memory table is behind the store.
            raise Fenced(f"table {table_id}: events {first_seq} already stored")
        return int(ack.seq)

    async def commit(
        self,
        table_id: str,
        first_seq: int,
        payload: bytes,
        expected_stream_seq: int,
        key: str,
        snapshot: dict[str, Any],
        revision: int,
    ) -> tuple[int, int]:
        """Store a command's events message and its snapshot concurrently.

        Same messages and guarantees as `append_events` plus `write_snapshot` (returns the
        stream sequence and the new KV revision; raises `Fenced` or `StoreUnavailable`,
        the events' outcome first), but both go out in one socket write and their acks
        are awaited directly: no task per write and no timer per request.
        """
        if self._ack_prefix is None:
            # `subscribe` queues the SUB before it first yields: no publish can overtake it.
            self._ack_prefix = self.nc.new_inbox() + "."
            await self.nc.subscribe(self._ack_prefix + "*", cb=self._on_ack)
        events_ack = _Ack(str(next(self._ack_tokens)))
        snapshot_ack = _Ack(str(next(self._ack_tokens)))
        self._acks[events_ack.token] = events_ack
        self._acks[snapshot_ack.token] = snapshot_ack
        try:
            await self.nc.publish(
                table_events(table_id),
                payload,
                reply=self._ack_prefix + events_ack.token,
                headers=inject_headers(
                    {
                        "Nats-Msg-Id": event_message_id(table_id, first_seq),
                        "Nats-Expected-Last-Subject-Sequence": str(expected_stream_seq),
                        "Nats-Expected-Stream": TABLE_EVENTS_STREAM,
                    }
                ),
            )
            # What `KeyValue.update(key, value, last=revision)` publishes.
            await self.nc.publish(
                f"$KV.{TABLES_BUCKET}.{key}",
                _dumps(snapshot),
                reply=self._ack_prefix + snapshot_ack.token,
                headers={"Nats-Expected-Last-Subject-Sequence": str(revision)},
            )
            async with asyncio.timeout(self.timeout):
                await events_ack
                await snapshot_ack
        except TimeoutError:
            raise StoreUnavailable(f"no ack for the writes of {table_id}") from None
        finally:
            self._acks.pop(events_ack.token, None)
            self._acks.pop(snapshot_ack.token, None)
        events = _pub_ack(events_ack.result())
        if isinstance(events, tuple):
            if events[0] == WRONG_LAST_SEQUENCE:
                raise Fenced(f"table {table_id}: {events[1]}")
            raise StoreUnavailable(f"events of {table_id}: {events[1]}")
        if events.get("duplicate"):
            # See `append_events`.
            raise Fenced(f"table {table_id}: events {first_seq} already stored")
        saved = _pub_ack(snapshot_ack.result())
        if isinstance(saved, tuple):
            if saved[0] in (WRONG_LAST_SEQUENCE, WRONG_LAST_SEQUENCE_CONSTANT):
                raise Fenced(f"snapshot {key} was written by someone else")
            raise StoreUnavailable(f"snapshot {key}: {saved[1]}")
        return int(events["seq"]), int(saved["seq"])

    async def _on_ack(self, msg: Msg) -> None:
        assert self._ack_prefix is not None
        ack = self._acks.pop(msg.subject[len(self._ack_prefix) :], None)
        if ack is not None and not ack.done():
            ack.set_result(msg)

    async def last_events(self, table_id: str) -> tuple[int, TableEvents] | None:
        """The table's last stored events message and its stream sequence."""
        try:
            raw = await self.js.get_last_msg(TABLE_EVENTS_STREAM, table_events(table_id))
        except NotFoundError:
            return None
        return int(raw.seq or 0), TableEvents.model_validate_json(raw.data or b"")

    async def read_events(self, table_id: str) -> AsyncIterator[tuple[int, TableEvents]]:
        """Every events message of a table, in order, with its stream sequence."""
        last = await self.last_events(table_id)
        if last is None:
            return
        subject = table_events(table_id)
        sub = await self.js.subscribe(
            subject,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
            stream=TABLE_EVENTS_STREAM,
        )
        try:
            while True:
                msg = await sub.next_msg(timeout=5.0)
                stream_seq = int(msg.metadata.sequence.stream)
                yield stream_seq, TableEvents.model_validate_json(msg.data)
                if stream_seq >= last[0]:
                    return
        finally:
            await sub.unsubscribe()

    # --- snapshots ------------------------------------------------------------------

    async def create_snapshot(self, key: str, snapshot: dict[str, Any]) -> int:
        return int(await self.tables.create(key, _dumps(snapshot)))

    async def write_snapshot(self, key: str, snapshot: dict[str, Any], revision: int) -> int:
        """Compare-and-set on `revision`; returns the new revision."""
        try:
            return int(await self.tables.update(key, _dumps(snapshot), last=revision))
        except KeyWrongLastSequenceError:
            raise Fenced(f"snapshot {key} was written by someone else") from None
        except (NatsTimeoutError, TimeoutError) as exc:
            raise StoreUnavailable(f"no ack for snapshot {key}: {exc!r}") from None

    async def read_snapshot(self, key: str) -> tuple[dict[str, Any], int] | None:
        try:
            entry = await self.tables.get(key)
        except KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return orjson.loads(entry.value), int(entry.revision or 0)

    async def partition_snapshots(
        self, partition: int
    ) -> AsyncIterator[tuple[str, dict[str, Any], int]]:
        """Every stored snapshot of a partition (key, snapshot, revision)."""
        watcher = await self.tables.watch(f"{partition}.*", ignore_deletes=True)
        try:
            while True:
                entry = await watcher.updates(timeout=10.0)  # type: ignore[no-untyped-call]
                if entry is None:
                    return
                if entry.value:
                    yield entry.key, orjson.loads(entry.value), int(entry.revision or 0)
        finally:
            await watcher.stop()  # type: ignore[no-untyped-call]

    # --- GAMES stream ---------------------------------------------------------------

    async def publish_game_event(self, subject: str, body: bytes, message_id: str) -> None:
        await self.js.publish(
            subject,
            body,
            stream=GAMES_STREAM,
            headers=inject_headers({"Nats-Msg-Id": message_id}),
        )
