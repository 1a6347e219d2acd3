"""Seated players' presence at their tables, reported to the table (`SeatPresence`).

A table hands a dropped player's seat to the autopilot once its grace period is over, and
back at once when the player returns; it learns both from here. This gateway reports a
player's first socket watching their table (connected) and the last one going (gone), per
table and player. Only the last wanted state is sent, in order, one request at a time per
seat: a socket that drops and comes back before the first report is answered costs two
reports at most, never a stale "gone" after a "connected". Every `REFRESH_SECONDS` the
"connected" of every seated player here is said again: a table stops counting a gateway it
has not heard from for a while (one that died cannot say its players went).

The player's own switch ("autopilot for me") goes the same way, as a request whose answer
the client gets. Reports are best effort: a table that does not answer keeps the seat as
it was (a seat never reported counts as present, the plain R16 rules).
"""

from __future__ import annotations

import asyncio
import uuid

from nats.aio.client import Client as NatsClient
from opolyx_contracts import subjects
from opolyx_contracts.envelope import ErrorReply
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import TableAutopilotResult
from opolyx_contracts.table import SeatPresence, SeatStatus
from opolyx_service.logs import get_logger
from pydantic import TypeAdapter, ValidationError

from opolyx_gateway.errors import GatewayError

__all__ = ["REFRESH_SECONDS", "REPORT_TIMEOUT", "SeatPresenceReports"]

log = get_logger("opolyx.gateway.seat_presence")

REPORT_TIMEOUT = 2.0
"""Seconds a table has to answer one report (tried twice)."""

REFRESH_SECONDS = 30.0
"""Seconds between repeats of "connected" (the table's `presence_ttl` is 90 s)."""

_reply: TypeAdapter[SeatStatus | ErrorReply] = TypeAdapter(SeatStatus | ErrorReply)

Key = tuple[str, str]
"""(table id, player id)"""


class SeatPresenceReports:
    def __init__(self, nc: NatsClient, gateway_id: str | None = None) -> None:
        self.nc = nc
        self.gateway_id = gateway_id or f"gw-{uuid.uuid4().hex[:12]}"
        """Who reports: the table counts a player present while any gateway says so."""
        self.sockets: dict[Key, set[object]] = {}
        """The sockets of a seated player watching their table here."""
        self._wanted: dict[Key, bool] = {}
        self._told: dict[Key, bool] = {}
        self._senders: dict[Key, asyncio.Task[None]] = {}
        self._refresher: asyncio.Task[None] | None = None

    def joined(self, sink: object, table_id: str, player_id: str) -> None:
        """A seated player's socket watches their table."""
        key = (table_id, player_id)
        sockets = self.sockets.setdefault(key, set())
        sockets.add(sink)
        if len(sockets) == 1:
            self._want(key, True)
        if self._refresher is None:
            self._refresher = asyncio.create_task(self._refresh())

    def left(self, sink: object, table_id: str) -> None:
        """A socket stopped watching `table_id` (unwatched, or closed)."""
        for key in [k for k in self.sockets if k[0] == table_id]:
            sockets = self.sockets[key]
            if sink in sockets:
                sockets.discard(sink)
                if not sockets:
                    del self.sockets[key]
                    self._want(key, False)

    async def switch(self, table_id: str, player_id: str, on: bool) -> TableAutopilotResult:
        """The player switches autopilot for their seat (the reply tells them the outcome)."""
        status = await self._send(
            table_id, SeatPresence(player_id=player_id, gateway=self.gateway_id, autopilot=on)
        )
        return TableAutopilotResult(
            seat=status.seat, autopilot=status.autopilot, chosen=status.chosen
        )

    async def stop(self) -> None:
        for task in [*self._senders.values(), self._refresher]:
            if task is not None:
                task.cancel()

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            for table_id, player_id in list(self.sockets):
                if (table_id, player_id) in self._senders:
                    continue  # a report is on its way anyway
                report = SeatPresence(player_id=player_id, gateway=self.gateway_id, connected=True)
                try:
                    await self._send(table_id, report)
                except GatewayError as exc:
                    log.debug(
                        "seat_presence_refresh_failed",
                        player_id=player_id,
                        table_id=table_id,
                        error=repr(exc),
                    )

    # ------------------------------------------------------------- reports
    def _want(self, key: Key, connected: bool) -> None:
        self._wanted[key] = connected
        if key not in self._senders:
            task = asyncio.create_task(self._report(key))
            self._senders[key] = task

    async def _report(self, key: Key) -> None:
        table_id, player_id = key
        try:
            while self._told.get(key) != self._wanted[key]:
                connected = self._wanted[key]
                report = SeatPresence(
                    player_id=player_id, gateway=self.gateway_id, connected=connected
                )
                for attempt in (1, 2):
                    try:
                        await self._send(table_id, report)
                        break
                    except GatewayError as exc:
                        if exc.code == UNAVAILABLE and attempt == 1:
                            continue  # moving between instances, say: once more
                        log.info(
                            "seat_presence_not_told",
                            player_id=player_id,
                            table_id=table_id,
                            error=repr(exc),
                        )
                        break
                self._told[key] = connected
        finally:
            self._senders.pop(key, None)
            if self._told.get(key) is False and self._wanted.get(key) is False:
                self._told.pop(key, None)
                self._wanted.pop(key, None)

    async def _send(self, table_id: str, message: SeatPresence) -> SeatStatus:
        try:
            msg = await self.nc.request(
                subjects.table_seat(table_id),
                message.model_dump_json(exclude_none=True).encode(),
                timeout=REPORT_TIMEOUT,
            )
        except Exception as exc:  # no responders, timeout, disconnected
            why = f"the table did not answer ({type(exc).__name__})"
            raise GatewayError(UNAVAILABLE, why) from None
        try:
            reply = _reply.validate_json(msg.data)
        except ValidationError:
            raise GatewayError(UNAVAILABLE, "the table sent an unreadable reply") from None
        if isinstance(reply, ErrorReply):
            raise GatewayError(reply.error.code, reply.error.message)
        return reply
