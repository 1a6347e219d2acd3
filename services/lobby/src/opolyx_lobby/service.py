"""The lobby's behaviour: commands, starting games, filling rooms with bots, freeing players.

Stateless apart from NATS: every instance reads and writes the same KV buckets, so any
number of instances can serve side by side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import (
    BOT_ROSTER,
    LobbyCommand,
    LobbyEvent,
    LobbyEventType,
    LobbyReply,
    bot_persona,
)
from opolyx_contracts.subjects import LOBBY_EVENTS, TABLE_CREATE, progression
from opolyx_contracts.table import CreateTable, SeatSpec
from opolyx_service.logs import get_logger
from opolyx_service.telemetry import inject_headers
from pydantic import BaseModel, ConfigDict, ValidationError

from opolyx_lobby import rooms
from opolyx_lobby.rooms import LobbyError, Member, Room
from opolyx_lobby.settings import LobbySection
from opolyx_lobby.store import Claim, LobbyStore

__all__ = ["FinishedGame", "Lobby", "SeatGone"]


class _Tolerant(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class SeatRef(_Tolerant):
    player_id: str
    bot: bool = False


class FinishedGame(_Tolerant):
    """The part of ``opolyx.game.finished`` the lobby needs (the rest may change freely)."""

    table_id: str
    room_id: str | None = None
    seats: list[SeatRef]


class SeatGone(_Tolerant):
    """The part of ``opolyx.game.seat_out`` the lobby needs."""

    table_id: str
    player_id: str


log = get_logger("opolyx.lobby")


class Lobby:
    def __init__(
        self,
        nc: Client,
        store: LobbyStore,
        settings: LobbySection,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.nc = nc
        self.store = store
        self.settings = settings
        self.clock = clock

    # command dispatch ----------------------------------------------------------------

    async def handle(self, cmd: LobbyCommand) -> LobbyReply:
        match cmd.type:
            case "create":
                return await self.create(cmd)
            case "list":
                return await self.list_rooms()
            case "get":
                return await self.get(cmd)
            case "mine":
                return await self.mine(cmd)
            case "join":
                return await self.join(cmd)
            case "leave":
                return await self.leave(cmd)
            case "add_bot":
                return await self.add_bot(cmd)
            case "remove_bot":
                return await self.remove_bot(cmd)
            case "kick":
                return await self.kick(cmd)
            case "start":
                return await self.start(cmd)

    @staticmethod
    def _room_id(cmd: LobbyCommand) -> str:
        if not cmd.room_id:
            raise LobbyError("lobby/bad_request", f"{cmd.type} needs a room_id")
        return cmd.room_id

    @staticmethod
    def _member(cmd: LobbyCommand) -> Member:
        return Member(player_id=cmd.player_id, name=cmd.name or cmd.player_id)

    async def create(self, cmd: LobbyCommand) -> LobbyReply:
        if cmd.mode is None or cmd.seats is None:
            raise LobbyError("lobby/bad_request", "create needs a mode and a seat count")
        rooms.validate_mode_and_seats(cmd.mode, cmd.seats)
        now = self.clock()
        room = rooms.create_room(
            room_id=f"r-{secrets.token_hex(6)}",
            creator=self._member(cmd),
            mode=cmd.mode,
            seat_count=cmd.seats,
            public=cmd.public,
            invite_code=None if cmd.public else secrets.token_urlsafe(6),
            now=now,
        )
        await self.store.claim(
            Claim(player_id=cmd.player_id, room_id=room.room_id, since=now), self._claim_is_stale
        )
        try:
            await self.store.insert_room(room)
        except BaseException:
            await self.store.release(cmd.player_id, room_id=room.room_id)
            raise
        await self._publish("room_created", room)
        log.info("room_created", room_id=room.room_id, mode=room.mode)
        return LobbyReply(room=room.public_dict(), invite_code=room.invite_code)

    async def list_rooms(self) -> LobbyReply:
        listed = [
            rooms.summary(r).model_dump(mode="json")
            for r in sorted(await self.store.all_rooms(), key=lambda r: r.created_at)
            if r.public and r.status == "open"
        ]
        return LobbyReply(rooms=listed)

    async def get(self, cmd: LobbyCommand) -> LobbyReply:
        room, _ = await self.store.require_room(self._room_id(cmd))
        is_member = room.member(cmd.player_id) is not None
        if not room.public and not is_member and cmd.invite_code != room.invite_code:
            raise LobbyError("lobby/bad_invite", "this room is private: the invite code is wrong")
        return LobbyReply(
            room=room.public_dict(),
            invite_code=room.invite_code if is_member else None,
            table_id=room.table_id,
        )

    async def mine(self, cmd: LobbyCommand) -> LobbyReply:
        found = await self.store.get_claim(cmd.player_id)
        if found is None:
            return LobbyReply()
        claim = found[0]
        room = await self.store.get_room(claim.room_id)
        return LobbyReply(
            room=room[0].public_dict() if room else None,
            invite_code=room[0].invite_code if room else None,
            table_id=claim.table_id,
        )

    async def join(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        player = self._member(cmd)
        now = self.clock()
        # Fail fast on what the room alone can tell, before touching the player's slot.
        current, _ = await self.store.require_room(room_id)
        rooms.join(current, player, cmd.invite_code, now)
        await self.store.claim(
            Claim(player_id=player.player_id, room_id=room_id, since=now), self._claim_is_stale
        )
        try:
            _, after = await self.store.change_room(
                room_id, lambda r: rooms.join(r, player, cmd.invite_code, now)
            )
        except BaseException:
            await self.store.release(player.player_id, room_id=room_id)
            raise
        assert after is not None
        await self._publish("room_changed", after)
        return LobbyReply(room=after.public_dict(), invite_code=after.invite_code)

    async def leave(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        _, after = await self.store.change_room(room_id, lambda r: rooms.leave(r, cmd.player_id))
        await self.store.release(cmd.player_id, room_id=room_id)
        if after is None:
            await self._publish_closed(room_id)
            return LobbyReply()
        await self._publish("room_changed", after)
        return LobbyReply(room=after.public_dict())

    async def add_bot(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if cmd.bot_id is not None and bot_persona(cmd.bot_id) is None:
            raise LobbyError("lobby/unknown_bot", f"no bot {cmd.bot_id!r} in the roster")

        def change(room: Room) -> Room:
            bot = self._pick_bot(room, cmd.bot_id)
            return rooms.add_bot(room, cmd.player_id, bot)

        _, after = await self.store.change_room(room_id, change)
        assert after is not None
        await self._publish("room_changed", after)
        return LobbyReply(room=after.public_dict())

    async def remove_bot(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if not cmd.bot_id:
            raise LobbyError("lobby/bad_request", "remove_bot needs a bot_id")
        bot_id = cmd.bot_id
        _, after = await self.store.change_room(
            room_id, lambda r: rooms.remove_bot(r, cmd.player_id, bot_id)
        )
        assert after is not None
        await self._publish("room_changed", after)
        return LobbyReply(room=after.public_dict())

    async def kick(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if not cmd.target:
            raise LobbyError("lobby/bad_request", "kick needs a target player")
        target = cmd.target
        _, after = await self.store.change_room(
            room_id, lambda r: rooms.kick(r, cmd.player_id, target)
        )
        assert after is not None
        await self.store.release(target, room_id=room_id)
        await self._publish("room_changed", after)
        return LobbyReply(room=after.public_dict())

    # starting a game -----------------------------------------------------------------

    async def start(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        now = self.clock()
        _, room = await self.store.change_room(
            room_id, lambda r: rooms.mark_starting(r, cmd.player_id, now)
        )
        assert room is not None
        try:
            boosts = await self._boosts([m.player_id for m in room.humans])
            table_id = await self._create_table(room, boosts)
        except BaseException:
            await self.store.change_room(room_id, rooms.reopen)
            raise
        _, started = await self.store.change_room(
            room_id, lambda r: rooms.mark_started(r, table_id)
        )
        assert started is not None
        for member in started.humans:
            await self.store.set_table(member.player_id, room_id, table_id)
        await self._publish("room_started", started, table_id=table_id)
        log.info("game_started", room_id=room_id, table_id=table_id)
        return LobbyReply(room=started.public_dict(), table_id=table_id)

    async def _boosts(self, players: list[str]) -> dict[str, dict[int, int]]:
        """Each human's card boosts; no progression service means no boosts (R20)."""
        if not players:
            return {}
        body = json.dumps({"v": 1, "players": players}).encode()
        try:
            msg = await self.nc.request(
                progression("boosts"),
                body,
                timeout=self.settings.progression_timeout_seconds,
                headers=inject_headers(),
            )
            reply = json.loads(msg.data)
            raw = reply.get("boosts", {}) if isinstance(reply, dict) else {}
            return {
                str(pid): {int(sq): int(pct) for sq, pct in cards.items()}
                for pid, cards in raw.items()
                if isinstance(cards, dict)
            }
        except (NoRespondersError, NatsTimeoutError) as exc:
            log.warning(
                "progression_unavailable_no_boosts", error=type(exc).__name__, players=players
            )
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("progression_reply_unreadable_no_boosts", error=str(exc))
        return {}

    async def _create_table(self, room: Room, boosts: dict[str, dict[int, int]]) -> str:
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
            seed=secrets.randbits(62),
            table_id=f"t-{room.room_id.removeprefix('r-')}",
            room_id=room.room_id,
        )
        try:
            msg = await self.nc.request(
                TABLE_CREATE,
                encode(request),
                timeout=self.settings.table_create_timeout_seconds,
                headers=inject_headers(),
            )
        except (NoRespondersError, NatsTimeoutError) as exc:
            raise LobbyError(
                "lobby/table_unavailable",
                "no table service answered; the room stays open, try starting again",
            ) from exc
        reply: dict[str, Any] = json.loads(msg.data)
        if not reply.get("ok"):
            error = reply.get("error") or {}
            raise LobbyError(
                "lobby/table_unavailable",
                f"the table service refused the game: {error.get('code')}: {error.get('message')}",
            )
        return str(reply["table_id"])

    # bots filling rooms --------------------------------------------------------------

    @staticmethod
    def _pick_bot(room: Room, bot_id: str | None) -> Member:
        taken = {m.player_id for m in room.members}
        if bot_id is not None:
            persona = bot_persona(bot_id)
            if persona is None:
                raise LobbyError("lobby/unknown_bot", f"no bot {bot_id!r} in the roster")
        else:
            free = [p for p in BOT_ROSTER if p.player_id not in taken]
            if not free:
                raise LobbyError("lobby/unknown_bot", "every roster bot is in this room")
            persona = free[secrets.randbelow(len(free))]
        return Member(player_id=persona.player_id, name=persona.name, bot=True, style=persona.style)

    async def fill_waiting_rooms(self) -> int:
        """Give bots to open public rooms that waited long enough; returns rooms filled."""
        now = self.clock()
        filled = 0
        for room in await self.store.all_rooms():
            if not self._wants_bots(room, now):
                continue

            def change(r: Room) -> Room:
                if not self._wants_bots(r, now):
                    raise LobbyError("lobby/nothing_to_do", "room changed meanwhile")
                while r.free_seats > 0:
                    r = rooms.fill_with_bot(r, self._pick_bot(r, None))
                return r

            try:
                _, after = await self.store.change_room(room.room_id, change)
            except LobbyError:
                continue
            assert after is not None
            filled += 1
            await self._publish("room_changed", after)
            log.info("room_filled_with_bots", room_id=room.room_id)
        return filled

    async def reopen_stuck_starts(self) -> int:
        """Reopen rooms whose start never finished (the instance starting them died).
        Starting again is safe: the table id is derived from the room, so creating the
        table twice returns the same table."""
        now = self.clock()
        reopened = 0
        limit = self.settings.table_create_timeout_seconds * 3
        for room in await self.store.all_rooms():
            if room.status != "starting" or now - (room.starting_since or now) < limit:
                continue
            try:
                _, after = await self.store.change_room(room.room_id, rooms.reopen)
            except LobbyError:
                continue
            assert after is not None
            reopened += 1
            await self._publish("room_changed", after)
            log.warning("stuck_start_reopened", room_id=room.room_id)
        return reopened

    def _wants_bots(self, room: Room, now: float) -> bool:
        return (
            room.public
            and room.status == "open"
            and room.free_seats > 0
            and len(room.humans) > 0
            and now - room.waiting_since >= self.settings.bot_fill_after_seconds
        )

    async def run_bot_filler(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.fill_waiting_rooms()
                await self.reopen_stuck_starts()
            except Exception:
                log.exception("bot_fill_failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.fill_check_seconds)

    # games finishing, seats going out (GAMES stream) ---------------------------------

    async def on_game_finished(self, event: FinishedGame) -> None:
        for seat in event.seats:
            if not seat.bot:
                await self.store.release(seat.player_id, table_id=event.table_id)
        if event.room_id and await self.store.delete_room(event.room_id):
            await self._publish_closed(event.room_id)
        log.info("game_finished_players_freed", table_id=event.table_id)

    async def on_seat_out(self, event: SeatGone) -> None:
        await self.store.release(event.player_id, table_id=event.table_id)

    async def on_games_message(self, subject: str, data: bytes) -> None:
        try:
            if subject.endswith(".finished"):
                await self.on_game_finished(FinishedGame.model_validate_json(data))
            elif subject.endswith(".seat_out"):
                await self.on_seat_out(SeatGone.model_validate_json(data))
        except ValidationError as exc:
            log.error("games_message_unreadable", subject=subject, error=str(exc))

    # helpers -------------------------------------------------------------------------

    async def _claim_is_stale(self, claim: Claim) -> bool:
        """A claim whose room is gone or does not seat the player (left by a crash)."""
        if claim.table_id is not None:
            return False
        if self.clock() - claim.since < self.settings.claim_grace_seconds:
            return False
        found = await self.store.get_room(claim.room_id)
        return found is None or found[0].member(claim.player_id) is None

    async def _publish(self, kind: LobbyEventType, room: Room, table_id: str | None = None) -> None:
        event = LobbyEvent(
            type=kind, room_id=room.room_id, room=room.public_dict(), table_id=table_id
        )
        await self.nc.publish(LOBBY_EVENTS, encode(event), headers=inject_headers())

    async def _publish_closed(self, room_id: str) -> None:
        event = LobbyEvent(type="room_closed", room_id=room_id, room=None)
        await self.nc.publish(LOBBY_EVENTS, encode(event), headers=inject_headers())
