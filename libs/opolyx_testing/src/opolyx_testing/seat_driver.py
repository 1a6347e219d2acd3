"""Play every seat of one table from its live updates, as the gateway and the bots would.

    driver = SeatDriver(table_id, seats, humans=TableClient(as_gateway),
                        bots=TableClient(as_bots), policy=TradingPolicy().choose)
    final_view = await driver.play(watch=as_gateway, decisions=admin_nc, timeout=240)

The driver follows `table_update(table_id)` (the push every watcher gets), decides for the
seat that must act (the receiver of an open offer first, then the pending seat) and sends
one command at a time with the update's version as the expected version, as the seat's
player: a human seat's as the gateway sends it (`table_command`), a bot seat's as a bot
worker answers the table's decision request for it (the request's subject and command id,
sent through the bots' role; the requests are read from `BOTS_DECIDE` by `decisions`, a
connection allowed to subscribe there, with no bot worker running). When no update comes
for `idle` seconds (core NATS may drop one) it reads the table's view instead. A command
the rules refuse is replaced by the simple policy's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.errors import COMMAND_STALE
from opolyx_contracts.game import GameCommand, parse_command
from opolyx_contracts.subjects import BOTS_DECIDE, table_update
from opolyx_contracts.table import DecisionRequest, SeatSpec, TableCommand, TableUpdate
from opolyx_rules import Command, State, awaiting, command_to_json, simple_policy, state_from_json
from opolyx_service import flush_in_order

from opolyx_testing.table_client import TableClient

__all__ = ["SeatDriver"]

Policy = Callable[[State, int], Command]


class SeatDriver:
    def __init__(
        self,
        table_id: str,
        seats: list[SeatSpec],
        *,
        humans: TableClient,
        bots: TableClient,
        policy: Policy,
        idle: float = 2.0,
    ) -> None:
        self.table_id = table_id
        self.seats = seats
        self.humans = humans
        self.bots = bots
        self.policy = policy
        self.idle = idle
        self.commands = 0
        self.refused: Counter[str] = Counter()
        """Refusals by error code (stale versions included: a timer fired first)."""
        self.views_read = 0
        """Times no update came in time and the view was read instead."""
        self._asked: dict[tuple[int, int], DecisionRequest] = {}
        """(seat, version) -> the table's newest decision request for it."""
        self._asked_now = asyncio.Event()

    async def play(self, watch: Client, decisions: Client, timeout: float) -> dict[str, Any]:
        """Play until the game ends; returns the final public view."""
        updates: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_update(msg: Msg) -> None:
            updates.put_nowait(msg.data)

        async def on_decision(msg: Msg) -> None:
            request = DecisionRequest.model_validate_json(msg.data)
            if request.table_id == self.table_id:
                self._asked[(request.seat, request.version)] = request
                self._asked_now.set()

        subs = [
            await watch.subscribe(table_update(self.table_id), cb=on_update),
            await decisions.subscribe(BOTS_DECIDE, cb=on_decision),
        ]
        await flush_in_order(watch)
        await flush_in_order(decisions)
        try:
            return await self._play(updates, time.monotonic() + timeout)
        finally:
            for sub in subs:
                await sub.unsubscribe()

    async def _play(self, updates: asyncio.Queue[bytes], deadline: float) -> dict[str, Any]:
        current = await self.humans.view(self.table_id)
        version, view = current["version"], current["state"]
        while not view["finished"]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the game did not end in time (at version {version})")
            state = state_from_json(view)
            waiting = awaiting(state)
            if waiting:
                offered = [o.to for o in state.offers]
                await self._act(state, offered[0] if offered else waiting[0], version)
            version, view = await self._next(updates, version)
        final: dict[str, Any] = view
        return final

    async def _next(
        self, updates: asyncio.Queue[bytes], version: int
    ) -> tuple[int, dict[str, Any]]:
        """The newest state after `version`: from the updates, else from the table's view."""
        newest: TableUpdate | None = None
        try:
            while newest is None or not updates.empty():
                data = await asyncio.wait_for(updates.get(), self.idle)
                update = TableUpdate.model_validate_json(data)
                if update.version > version and (newest is None or update.version > newest.version):
                    newest = update
        except TimeoutError:
            pass
        if newest is not None:
            return newest.version, newest.view.model_dump(mode="json")
        self.views_read += 1
        current = await self.humans.view(self.table_id)
        return current["version"], current["state"]

    async def _act(self, state: State, seat: int, version: int) -> None:
        spec = self.seats[seat]
        for choose in (self.policy, simple_policy):
            command = parse_command(command_to_json(choose(state, seat)))
            if spec.bot:
                reply = await self._answer_as_bot(seat, version, command)
            else:
                reply = await self.humans.command(
                    self.table_id, spec.player_id, command, uuid.uuid4().hex, version
                )
            if reply is None:
                return  # never asked (the table moved on): decide again on what comes
            self.commands += 1
            if reply.get("ok"):
                return
            code = reply["error"]["code"]
            self.refused[code] += 1
            if code == COMMAND_STALE:
                return  # a timer fired first: decide again on the newer state

    async def _answer_as_bot(
        self, seat: int, version: int, command: GameCommand
    ) -> dict[str, Any] | None:
        """Answer the table's decision request for (seat, version) as a bot worker does;
        None when none came (the table asks again after its re-ask delay)."""
        deadline = time.monotonic() + 2 * self.idle
        while (request := self._asked.get((seat, version))) is None:
            if time.monotonic() > deadline:
                return None
            self._asked_now.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._asked_now.wait(), self.idle)
        for key in [key for key in self._asked if key[1] <= version]:
            del self._asked[key]  # answered or superseded
        body = TableCommand(
            command_id=request.command_id,
            player_id=request.player_id,
            command=command,
            expected_version=request.version,
        )
        return await self.bots.request(request.command_subject, body.model_dump_json().encode())
