"""Starting a game so that a crash at any step converges: room and table always agree.

A start is recorded in the room before the table is asked for (``start_id``, status
"starting", seats frozen). The table id is derived from the room and the start id, and the
table service creates a table at most once per id, so the start can be carried on from
where it stopped by any instance, any number of times:

1. ``marked_starting``: the room says starting, with a start id.
2. ``table_created``: the table service answered with the table (created now or before).
3. ``room_started``: the room records the table.
4. ``players_seated``: every human's slot points at the table; ``room_started`` is
   published, then the room is marked ``seated`` (nothing left to do).

A start is undone (the room reopens) only when it is known that its table does not exist:
the table service refused the request for good (a table that exists is returned, never
refused), or no table service was subscribed at the very first request of a new start (no
request of that start was ever delivered). When the answer is unknown (timeout,
"unavailable", "busy", or no table service for a start that was asked for before) the room
stays "starting" and the sweep (`resume_starts`) sends the same request again until the
table service answers.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
import typing
from collections.abc import Callable

from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from opolyx_contracts.envelope import ErrorReply, decode, encode
from opolyx_contracts.errors import BUSY, NOT_OWNER, UNAVAILABLE, ContractError
from opolyx_contracts.lobby import LOBBY_TABLE_UNAVAILABLE
from opolyx_contracts.progression import BOOSTS, BoostsReply, BoostsRequest
from opolyx_contracts.subjects import TABLE_CREATE
from opolyx_contracts.table import CreateTable, SeatSpec, TableCreated
from opolyx_service.logs import get_logger
from opolyx_service.telemetry import inject_headers

from opolyx_lobby import rooms
from opolyx_lobby.errors import LobbyError
from opolyx_lobby.events import RoomEvents
from opolyx_lobby.rooms import Room
from opolyx_lobby.settings import LobbySection, StartStep
from opolyx_lobby.store import LobbyStore

__all__ = ["START_STEPS", "Starter"]

START_STEPS: tuple[StartStep, ...] = typing.get_args(StartStep)
"""The named steps of a start, in order (``OPOLYX_LOBBY__FAULT_STOP_AT`` takes one)."""

#: table-service answers that say nothing about whether the table exists: try again later
_UNKNOWN_OUTCOME = frozenset({UNAVAILABLE, NOT_OWNER, BUSY})

log = get_logger("opolyx.lobby")


class _TableNotCreated(Exception):
    """The table of this start certainly does not exist: the start may be undone."""


class _OutcomeUnknown(Exception):
    """The table of this start may or may not exist: the start must be carried on later."""


class _NoTableService(_OutcomeUnknown):
    """Nobody subscribed to table creation: this request was not delivered (an earlier one
    of the same start may have been)."""


class Starter:
    def __init__(
        self,
        nc: Client,
        store: LobbyStore,
        settings: LobbySection,
        events: RoomEvents,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.nc = nc
        self.store = store
        self.settings = settings
        self.events = events
        self.clock = clock

    async def start(self, room_id: str, player_id: str) -> Room:
        """The creator's ``start``: begin a start, or carry on the one under way."""
        now = self.clock()
        start_id = secrets.token_hex(4)
        before, room = await self.store.change_room(
            room_id, lambda r: rooms.mark_starting(r, player_id, now, start_id)
        )
        assert room is not None
        new_start = room.status == "starting" and before.status == "open"
        if new_start:
            await self.events.publish("room_changed", room_id, after=room)
        self._reached("marked_starting")
        return await self.carry_on(room, reply_errors=True, new_start=new_start)

    async def resume_starts(self) -> int:
        """Carry on the starts that stopped (their instance died or the table service did
        not answer); returns how many rooms were resolved (started or reopened)."""
        now = self.clock()
        resolved = 0
        for listed in await self.store.all_rooms():
            if not self._unfinished(listed, now):
                continue
            # The index may be a moment behind: act on the room as stored now.
            found = await self.store.get_room(listed.room_id)
            if found is None or not self._unfinished(found[0], now):
                continue
            room = found[0]
            try:
                after = await self.carry_on(room, reply_errors=False)
            except LobbyError:
                continue
            if after.status != "starting":
                resolved += 1
                log.warning("unfinished_start_resolved", room_id=room.room_id, status=after.status)
        return resolved

    def _unfinished(self, room: Room, now: float) -> bool:
        """A start to carry on: "starting" for a while (its instance may be dead), or
        started with players not all seated yet."""
        if room.status == "starting":
            since = room.starting_since if room.starting_since is not None else now
            return now - since >= self.settings.start_resume_after_seconds
        return room.status == "started" and not room.seated

    async def carry_on(self, room: Room, *, reply_errors: bool, new_start: bool = False) -> Room:
        """Take ``room``'s start from wherever it is to its end (idempotent). ``new_start``:
        this instance recorded the start just now, so no request of it was sent before."""
        if room.status == "starting":
            room = await self._create_and_record(room, reply_errors, new_start)
        if room.status == "started" and not room.seated:
            room = await self._seat_players(room)
        return room

    async def _create_and_record(self, room: Room, reply_errors: bool, new_start: bool) -> Room:
        start_id = room.start_id
        if start_id is None:  # a start recorded before start ids existed: begin it again
            return await self._reopen(room, None, "start recorded without a start id")
        try:
            table_id = await self._create_table(room)
        except _TableNotCreated as exc:
            return await self._reopen(room, start_id, str(exc), raise_error=reply_errors)
        except _NoTableService as exc:
            # Undo only a start no other instance can have resumed (and so asked for) yet.
            since = room.starting_since if room.starting_since is not None else 0.0
            alone = self.clock() - since < self.settings.start_resume_after_seconds
            if new_start and alone:
                return await self._reopen(room, start_id, str(exc), raise_error=reply_errors)
            log.warning("start_waits_for_a_table_service", room_id=room.room_id)
            raise LobbyError(
                LOBBY_TABLE_UNAVAILABLE,
                "no table service is running; the game starts as soon as one is"
                " (the room says starting until then)",
            ) from exc
        except _OutcomeUnknown as exc:
            log.warning("start_outcome_unknown_will_retry", room_id=room.room_id, error=str(exc))
            raise LobbyError(
                LOBBY_TABLE_UNAVAILABLE,
                "the table service has not answered yet; the game starts as soon as it does"
                " (the room says starting until then)",
            ) from None
        self._reached("table_created")
        _, started = await self.store.change_room(
            room.room_id, lambda r: rooms.mark_started(r, start_id, table_id)
        )
        assert started is not None
        self._reached("room_started")
        log.info("game_started", room_id=room.room_id, table_id=table_id)
        return started

    async def _seat_players(self, room: Room) -> Room:
        table_id = room.table_id
        assert table_id is not None
        for member in room.humans:
            await self.store.set_table(member.player_id, room.room_id, table_id)
        self._reached("players_seated")
        await self.events.publish("room_started", room.room_id, after=room, table_id=table_id)
        _, seated = await self.store.change_room(
            room.room_id, lambda r: rooms.mark_seated(r, table_id)
        )
        assert seated is not None
        return seated

    async def _reopen(
        self, room: Room, start_id: str | None, why: str, *, raise_error: bool = False
    ) -> Room:
        try:
            _, reopened = await self.store.change_room(
                room.room_id, lambda r: rooms.reopen(r, start_id)
            )
        except LobbyError:
            # Another instance resolved this start meanwhile: report the room as it is.
            current, _ = await self.store.require_room(room.room_id)
            return current
        assert reopened is not None
        log.warning("start_undone", room_id=room.room_id, reason=why)
        await self.events.publish("room_changed", room.room_id, after=reopened)
        if raise_error:
            raise LobbyError(
                LOBBY_TABLE_UNAVAILABLE, f"{why}; the room is open again, try starting again"
            )
        return reopened

    async def _create_table(self, room: Room) -> str:
        table_id = room.start_table_id
        assert table_id is not None
        boosts = await self._boosts([m.player_id for m in room.humans], table_id)
        request = CreateTable(
            mode=room.mode,
            seats=[
                SeatSpec(
                    player_id=m.player_id,
                    bot=m.bot,
                    boosts=boosts.get(m.player_id, {}),
                    name=m.name,
                )
                for m in room.members
            ],
            table_id=table_id,
            room_id=room.room_id,
            fork=room.fork,
            autopilot=room.autopilot,
        )
        try:
            msg = await self.nc.request(
                TABLE_CREATE,
                encode(request),
                timeout=self.settings.table_create_timeout_seconds,
                headers=inject_headers(),
            )
        except NoRespondersError:
            raise _NoTableService("no table service answered") from None
        except NatsTimeoutError:
            raise _OutcomeUnknown("the table service did not answer in time") from None
        try:
            return decode(TableCreated, msg.data).table_id
        except ContractError:
            pass
        try:
            error = decode(ErrorReply, msg.data).error
        except ContractError as exc:
            raise _OutcomeUnknown(f"unreadable table-service reply: {exc.message}") from None
        if error.code in _UNKNOWN_OUTCOME:
            raise _OutcomeUnknown(f"{error.code}: {error.message}")
        raise _TableNotCreated(f"the table service refused the game: {error.code}")

    async def _boosts(self, players: list[str], table_id: str) -> dict[str, dict[int, int]]:
        """Each human's card boosts; no progression service means no boosts (R20)."""
        if not players:
            return {}
        try:
            msg = await self.nc.request(
                BOOSTS,
                encode(BoostsRequest(players=players, table_id=table_id)),
                timeout=self.settings.progression_timeout_seconds,
                headers=inject_headers(),
            )
            return decode(BoostsReply, msg.data).boosts
        except (NoRespondersError, NatsTimeoutError) as exc:
            log.warning(
                "progression_unavailable_no_boosts", error=type(exc).__name__, players=players
            )
        except ContractError as exc:
            log.warning("progression_reply_unreadable_no_boosts", error=exc.message)
        return {}

    def _reached(self, step: StartStep) -> None:
        """Fault injection for crash tests: stop this process dead at a named step."""
        if self.settings.fault_stop_at == step:
            log.warning("fault_stop", step=step, pid=os.getpid())
            os.kill(os.getpid(), signal.SIGSTOP)
