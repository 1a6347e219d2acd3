"""Drive the table service through NATS as a client and as the bots' queue group would.

    client = TableClient(nc)
    created = await client.create("classic", [SeatSpec(player_id="a", bot=True), ...])
    async with BotSeats(nc, client) as bots:          # answers opolyx.bots.decide
        finished = await client.wait_finished(created.table_id, timeout=120)
    batches = await client.read_events(created.table_id)   # every events message, in order

Requests are retried while a table moves between instances (no responders, timeouts,
`table/not_owner`, `service/unavailable`) with the same command id, as any client must.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import NotFoundError
from opolyx_contracts.errors import BUSY, NOT_OWNER, UNAVAILABLE
from opolyx_contracts.game import CommandModel, GameCommand, parse_command
from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    BOTS_QUEUE,
    GAME_FINISHED,
    GAME_SEAT_OUT,
    GAMES_STREAM,
    TABLE_CREATE,
    TABLE_EVENTS_STREAM,
    table_command,
    table_events,
    table_view,
)
from opolyx_contracts.table import (
    CreateTable,
    DecisionRequest,
    GameFinished,
    SeatOut,
    SeatSpec,
    TableCommand,
    TableCreated,
    TableEvents,
)
from opolyx_rules import command_to_json, state_from_json
from opolyx_rules import simple_policy as rules_simple_policy
from opolyx_service import flush_in_order

from opolyx_testing.streams import read_stored

__all__ = ["RETRYABLE_CODES", "BotSeats", "TableClient", "check_contiguous", "simple_policy"]

RETRYABLE_CODES = frozenset({NOT_OWNER, UNAVAILABLE, BUSY})

Policy = Callable[[DecisionRequest], GameCommand | None]


def simple_policy(request: DecisionRequest) -> GameCommand | None:
    """The rules library's simple policy (``opolyx_rules.simple_policy``) for the asked
    seat, on the request's public view; None when the seat has nothing to decide."""
    if not request.legal:
        return None
    state = state_from_json(request.state.model_dump(mode="json"))
    return parse_command(command_to_json(rules_simple_policy(state, request.seat)))


class TableClient:
    def __init__(self, nc: Client, timeout: float = 5.0, retry_for: float = 30.0) -> None:
        self.nc = nc
        self.timeout = timeout
        self.retry_for = retry_for

    async def request(self, subject: str, body: bytes) -> dict[str, Any]:
        """Request with retries while the answer is 'try again'; returns the decoded reply."""
        deadline = time.monotonic() + self.retry_for
        while True:
            try:
                reply = await self.nc.request(subject, body, timeout=self.timeout)
                decoded: dict[str, Any] = json.loads(reply.data)
                retry = not decoded.get("ok") and decoded["error"]["code"] in RETRYABLE_CODES
                if not retry or time.monotonic() > deadline:
                    return decoded
            except (NoRespondersError, NatsTimeoutError):
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.1)

    async def create(
        self,
        mode: str,
        seats: list[SeatSpec],
        seed: int | None = None,
        table_id: str | None = None,
    ) -> TableCreated:
        body = CreateTable(mode=mode, seats=seats, seed=seed, table_id=table_id)
        reply = await self.request(TABLE_CREATE, body.model_dump_json().encode())
        if not reply.get("ok"):
            raise AssertionError(f"create failed: {reply}")
        return TableCreated.model_validate(reply)

    async def command(
        self,
        table_id: str,
        player_id: str,
        command: dict[str, Any] | GameCommand,
        command_id: str,
        expected_version: int | None = None,
        subject: str | None = None,
    ) -> dict[str, Any]:
        """Sent on the players' subject unless `subject` (e.g. a request's bots subject)."""
        body = TableCommand(
            command_id=command_id,
            player_id=player_id,
            command=command if isinstance(command, CommandModel) else parse_command(command),
            expected_version=expected_version,
        )
        return await self.request(
            subject or table_command(table_id), body.model_dump_json().encode()
        )

    async def view(self, table_id: str, seat: int | None = None) -> dict[str, Any]:
        body = json.dumps({"v": 1, "seat": seat}).encode()
        return await self.request(table_view(table_id), body)

    async def read_events(self, table_id: str) -> list[TableEvents]:
        """Every events message of a table stored so far, in stream order."""
        return await read_stored(self.nc, TABLE_EVENTS_STREAM, table_events(table_id), TableEvents)

    async def seats_out(self, table_id: str) -> list[SeatOut]:
        """Every `opolyx.game.seat_out` message of a table stored so far."""
        found = await read_stored(self.nc, GAMES_STREAM, GAME_SEAT_OUT, SeatOut)
        return [out for out in found if out.table_id == table_id]

    async def wait_finished(self, table_id: str, timeout: float) -> GameFinished:
        """The table's `opolyx.game.finished` message from the GAMES stream.

        Reads the stream message by message (no consumer to lose), so it rides out a NATS
        restart or reconnect while waiting.
        """
        js = self.nc.jetstream()
        deadline = time.monotonic() + timeout
        next_seq = 1
        while time.monotonic() < deadline:
            try:
                raw = await js.get_msg(GAMES_STREAM, next_seq, GAME_FINISHED, next=True)
            except NotFoundError:
                await asyncio.sleep(0.1)
                continue
            except Exception:
                await asyncio.sleep(0.2)  # reconnecting, or JetStream still recovering
                continue
            next_seq = int(raw.seq or next_seq) + 1
            finished = GameFinished.model_validate_json(raw.data or b"")
            if finished.table_id == table_id:
                return finished
        raise TimeoutError(f"table {table_id} did not finish within {timeout} s")


def check_contiguous(batches: list[TableEvents]) -> int:
    """Assert the events form one sequence 1..N without gap or repeat; returns N."""
    expected = 1
    for batch in batches:
        seqs = [record.seq for record in batch.events]
        if batch.first_seq != expected or seqs != list(range(expected, batch.last_seq + 1)):
            raise AssertionError(f"events not contiguous at {expected}: got {seqs}")
        expected = batch.last_seq + 1
    return expected - 1


class BotSeats:
    """Plays bot seats: answers decision requests in the bots' queue group."""

    def __init__(
        self,
        nc: Client,
        client: TableClient,
        policy: Policy = simple_policy,
        delay: Callable[[], float] | None = None,
    ) -> None:
        self.nc = nc
        self.client = client
        self.policy = policy
        self.delay = delay
        self.answered = 0
        self.accepted_ids: list[str] = []
        self.refused: list[dict[str, Any]] = []
        self._sub: Any = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._random = random.Random(7)

    async def __aenter__(self) -> BotSeats:
        self._sub = await self.nc.subscribe(BOTS_DECIDE, queue=BOTS_QUEUE, cb=self._on_request)
        await flush_in_order(self.nc)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _on_request(self, msg: Msg) -> None:
        task = asyncio.create_task(self._answer(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: Msg) -> None:
        request = DecisionRequest.model_validate_json(msg.data)
        command = self.policy(request)
        if command is None:
            return
        if self.delay is not None:
            await asyncio.sleep(self.delay())
        try:
            reply = await self.client.command(
                request.table_id,
                request.player_id,
                command,
                request.command_id,
                expected_version=request.version,
                subject=request.command_subject,
            )
        except (NoRespondersError, NatsTimeoutError):
            return  # the table re-asks
        if reply.get("ok"):
            self.answered += 1
            self.accepted_ids.append(request.command_id)
        else:
            self.refused.append(reply["error"])
