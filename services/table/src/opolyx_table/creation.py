"""Creating tables: `opolyx.table.create` (any instance) and `opolyx.table.<p>.create`.

Any instance answers a create request: it picks the table id (in a partition it owns when
the caller did not choose one) and creates the table itself, or forwards the request to
the partition's owner. Creation is idempotent by table id: the snapshot is created with
KV `create` (which fails when the key exists), and a resent request gets the same table.
"""

from __future__ import annotations

import asyncio
import secrets
import time

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from opolyx_contracts import ContractError, decode, error_reply
from opolyx_contracts import errors as codes
from opolyx_contracts.subjects import table_partition, table_partition_create
from opolyx_contracts.table import CreateTable
from opolyx_rules import RulesError, seed_commitment
from opolyx_service import get_logger
from opolyx_service.replies import safe_reply_subject

from opolyx_table.engine import new_game
from opolyx_table.forks import forked_state
from opolyx_table.messages import created_event, created_reply, encode
from opolyx_table.partitions import Partitions
from opolyx_table.settings import TableConfig
from opolyx_table.store import Fenced, StoreUnavailable, snapshot_key
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = ["Creation"]

log = get_logger("opolyx_table.creation")


def _error(code: str, message: str) -> bytes:
    return encode(error_reply(code, message))


class Creation:
    def __init__(
        self,
        nc: Client,
        partitions: Partitions,
        writer: Writer,
        config: TableConfig,
        rules_version: str,
    ) -> None:
        self.nc = nc
        self.partitions = partitions
        self.writer = writer
        self.config = config
        self.rules_version = rules_version
        self._locks: dict[str, asyncio.Lock] = {}

    async def _reply(self, msg: Msg, body: bytes) -> None:
        # Only to an inbox: a request may name any subject as its reply, and the reply
        # would go out with the table's rights (e.g. onto opolyx.game.finished).
        reply = safe_reply_subject(msg)
        if reply is not None:
            try:
                await self.nc.publish(reply, body)
            except Exception as exc:
                log.warning("reply_failed", error=repr(exc))

    async def route(self, msg: Msg) -> None:
        """Pick the table id (in a partition we own when we can) and reach its owner."""
        try:
            request = decode(CreateTable, msg.data)
        except ContractError as exc:
            await self._reply(msg, _error(exc.code, exc.message))
            return
        table_id = request.table_id
        if table_id is None:
            owned = set(self.partitions.subs)
            for _ in range(64):
                table_id = secrets.token_hex(8)
                if not owned or table_partition(table_id, self.config.partitions) in owned:
                    break
        assert table_id is not None
        partition = table_partition(table_id, self.config.partitions)
        request = request.model_copy(update={"table_id": table_id})
        if self.partitions.owns(partition):
            await self._reply(msg, await self.create_here(request, table_id, partition))
            return
        try:
            answer = await self.nc.request(
                table_partition_create(partition), encode(request), timeout=5.0
            )
            await self._reply(msg, answer.data)
        except (NoRespondersError, NatsTimeoutError):
            await self._reply(
                msg,
                _error(
                    codes.UNAVAILABLE,
                    f"no table-service instance owns partition {partition} yet; retry shortly",
                ),
            )

    async def create_local(self, msg: Msg) -> None:
        try:
            request = decode(CreateTable, msg.data)
        except ContractError as exc:
            await self._reply(msg, _error(exc.code, exc.message))
            return
        table_id = request.table_id or secrets.token_hex(8)
        partition = table_partition(table_id, self.config.partitions)
        if not self.partitions.owns(partition):
            await self._reply(msg, _error(codes.NOT_OWNER, "partition moved; retry"))
            return
        await self._reply(msg, await self.create_here(request, table_id, partition))

    async def create_here(self, request: CreateTable, table_id: str, partition: int) -> bytes:
        lock = self._locks.setdefault(table_id, asyncio.Lock())
        try:
            async with lock:
                return await self._create(request, table_id, partition)
        except (Fenced, StoreUnavailable) as exc:
            return _error(codes.UNAVAILABLE, f"could not store the table ({exc}); retry")
        except Exception:
            log.exception("create_failed", table_id=table_id)
            return _error(codes.INTERNAL, "the table could not be created")
        finally:
            if not lock.locked():
                self._locks.pop(table_id, None)

    async def _create(self, request: CreateTable, table_id: str, partition: int) -> bytes:
        existing = self.partitions.tables.get(table_id)
        if existing is not None:
            return encode(created_reply(existing, self.config.partitions))
        key = snapshot_key(partition, table_id)
        stored = await self.partitions.storage.read_snapshot(key)
        if stored is not None:
            return encode(
                created_reply(
                    Table.from_snapshot(stored[0], key, stored[1]), self.config.partitions
                )
            )
        seed = request.seed if request.seed is not None else secrets.randbelow(2**63)
        try:
            if request.fork is not None:
                state = await forked_state(
                    self.partitions.storage, request.fork, request.mode, len(request.seats), seed
                )
            else:
                state = new_game(request.mode, [s.boosts for s in request.seats], seed)
        except RulesError as exc:
            return _error(exc.code, exc.message)
        except (ValueError, KeyError, TypeError) as exc:
            return _error(codes.BAD_REQUEST, f"cannot start this game: {exc}")
        table = Table(
            table_id=table_id,
            partition=partition,
            key=key,
            room_id=request.room_id,
            mode=request.mode,
            rules_version=self.rules_version,
            seats=list(request.seats),
            seed=seed,
            seed_commitment=seed_commitment(seed),
            started_at=time.time(),
            state=state,
            clock_rate=self.config.clock_rate,
            autopilot_on_drop=request.autopilot,
            fork=request.fork,
        )
        try:
            await self.writer.create_snapshot(table)
        except Exception:
            # Created concurrently by a retry through another path: answer with that table.
            stored = await self.partitions.storage.read_snapshot(key)
            if stored is None:
                raise
            return encode(
                created_reply(
                    Table.from_snapshot(stored[0], key, stored[1]), self.config.partitions
                )
            )
        creation = await self.writer.store_table_events(table, [created_event(table)])
        self.partitions.register(table, [creation.message])
        log.info("table_created", table_id=table_id, partition=partition, mode=request.mode)
        return encode(created_reply(table, self.config.partitions))
