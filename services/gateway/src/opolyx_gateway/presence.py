"""Who is connected to this gateway, reported to progression (`PresenceReport`).

Progression shows followers whether a player is online from these reports alone, and
counts a player offline once no report named them within its ``presence_ttl_seconds``
(75 s by default). So this gateway reports a player's first socket and last socket as they
happen (folded: a burst of sign-ins costs one request), and everyone connected every
`REPORT_INTERVAL` seconds, in chunks of the contract's 1,000 players. A gateway that dies
sends nothing more, and its players fall offline at the TTL.

Reports are sent one at a time, in the order they were made: progression keeps the last
word it hears about a player, so an "offline" overtaking the "online" that came after it (a
page reconnecting) would show a connected player offline until the next full report.

Reports are best effort: without a progression service they are dropped (logged once).
"""

from __future__ import annotations

import asyncio

from opolyx_contracts.progression import PRESENCE, PresenceAck, PresenceReport
from opolyx_service.logs import get_logger
from opolyx_service.tasks import cancel_and_wait

from opolyx_gateway.errors import GatewayError
from opolyx_gateway.upstream import Upstream

__all__ = ["CHUNK", "FOLD_SECONDS", "REPORT_INTERVAL", "Presence"]

log = get_logger("opolyx.gateway.presence")

REPORT_INTERVAL = 30.0
"""Seconds between full reports (well inside progression's 75 s TTL, so one lost report
does not show anyone offline)."""
FOLD_SECONDS = 0.05
"""Connects and disconnects within this are sent as one report."""
CHUNK = 1000
"""Players per report (`PresenceReport` bound)."""


class Presence:
    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.sockets: dict[str, int] = {}
        """Connected players -> how many sockets each has here."""
        self.names: dict[str, str] = {}
        self._came: set[str] = set()
        self._went: set[str] = set()
        self._flush: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_order = asyncio.Lock()
        """Held while a report is in flight; its waiters queue in the order they came (FIFO)."""
        self._loop_task: asyncio.Task[None] | None = None
        self._warned = False

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._every_interval())

    async def stop(self) -> None:
        """Report everyone here offline (a clean shutdown), then stop."""
        if self._loop_task is not None:
            await cancel_and_wait(self._loop_task)
        if self._flush is not None:
            self._flush.cancel()
        for task in list(self._tasks):
            task.cancel()
        gone = sorted(set(self.sockets) | self._went)
        self.sockets.clear()
        for start in range(0, len(gone), CHUNK):
            await self._send(PresenceReport(offline=gone[start : start + CHUNK]))

    # ------------------------------------------------------------- sockets
    def connected(self, player_id: str, name: str) -> None:
        count = self.sockets.get(player_id, 0)
        self.sockets[player_id] = count + 1
        self.names[player_id] = name
        if count == 0:
            self._went.discard(player_id)
            self._came.add(player_id)
            self._soon()

    def disconnected(self, player_id: str) -> None:
        count = self.sockets.get(player_id, 0)
        if count > 1:
            self.sockets[player_id] = count - 1
            return
        self.sockets.pop(player_id, None)
        self.names.pop(player_id, None)
        self._came.discard(player_id)
        self._went.add(player_id)
        self._soon()

    # ------------------------------------------------------------- reports
    def _soon(self) -> None:
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FOLD_SECONDS, self._fold)

    def _fold(self) -> None:
        self._flush = None
        came, self._came = sorted(self._came), set()
        went, self._went = sorted(self._went), set()
        for start in range(0, max(len(came), len(went)), CHUNK):
            online = came[start : start + CHUNK]
            report = PresenceReport(
                online=online,
                offline=went[start : start + CHUNK],
                names={p: self.names[p] for p in online if p in self.names},
            )
            task = asyncio.create_task(self._send_in_turn(report))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _every_interval(self) -> None:
        while True:
            await asyncio.sleep(REPORT_INTERVAL)
            await self.report_all()

    async def report_all(self) -> None:
        # Who is here is read once the reports before it have gone, so a full report never
        # names a player whose "offline" was sent ahead of it.
        async with self._in_order:
            everyone = sorted(self.sockets)
            for start in range(0, len(everyone), CHUNK):
                online = everyone[start : start + CHUNK]
                names = {p: self.names[p] for p in online if p in self.names}
                await self._send(PresenceReport(online=online, names=names))

    async def _send_in_turn(self, report: PresenceReport) -> None:
        async with self._in_order:
            await self._send(report)

    async def _send(self, report: PresenceReport) -> None:
        try:
            await self.upstream.progression(PRESENCE, report, PresenceAck)
        except GatewayError as exc:
            if not self._warned:
                log.warning("presence_not_reported", code=exc.code, error=exc.message)
                self._warned = True
        except Exception:
            log.exception("presence_report_failed")
