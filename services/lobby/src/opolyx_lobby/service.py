"""The lobby's behaviour: commands, filling rooms with bots, freeing players.

Stateless apart from NATS: every instance reads and writes the same KV buckets, so any
number of instances can serve side by side. Starting a game is `starting.Starter`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable

from nats.aio.client import Client
from opolyx_contracts.lobby import (
    BOT_ROSTER,
    LOBBY_BAD_INVITE,
    LOBBY_BAD_REQUEST,
    LOBBY_UNKNOWN_BOT,
    LOBBY_UNKNOWN_GAME,
    MAX_LISTED_GAMES,
    MAX_LISTED_ROOMS,
    LobbyCommand,
    LobbyReply,
    RunningGame,
    bot_persona,
    is_listed,
)
from opolyx_service.logs import get_logger
from prometheus_client import CollectorRegistry

from opolyx_lobby import names, rooms
from opolyx_lobby.errors import LobbyError
from opolyx_lobby.events import RoomEvents
from opolyx_lobby.finishing import GameEnds
from opolyx_lobby.practice import start_practice
from opolyx_lobby.rooms import Member, Room
from opolyx_lobby.settings import LobbySection
from opolyx_lobby.starting import Starter
from opolyx_lobby.store import Claim, LobbyStore

__all__ = ["Lobby"]

log = get_logger("opolyx.lobby")


class _NothingToDo(Exception):
    """The room changed meanwhile and needs nothing any more."""


class Lobby:
    def __init__(
        self,
        nc: Client,
        store: LobbyStore,
        settings: LobbySection,
        clock: Callable[[], float] = time.time,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.nc = nc
        self.store = store
        self.settings = settings
        self.clock = clock
        self.events = RoomEvents(nc)
        self.starter = Starter(nc, store, settings, self.events, clock)
        self.game_ends = GameEnds(store, self.events, registry or CollectorRegistry())

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
            case "watch":
                return await self.watch(cmd)
            case "games":
                return await self.list_games()
            case "practice":
                return await start_practice(self, cmd)

    @staticmethod
    def _room_id(cmd: LobbyCommand) -> str:
        if not cmd.room_id:
            raise LobbyError(LOBBY_BAD_REQUEST, f"{cmd.type} needs a room_id")
        return cmd.room_id

    @staticmethod
    def _member(cmd: LobbyCommand) -> Member:
        """The acting human, under a normalised name that reads as no bot's."""
        name = names.normalize_name(cmd.name or cmd.player_id)
        names.check_not_bot_like(name)
        return Member(player_id=cmd.player_id, name=name)

    async def create(self, cmd: LobbyCommand) -> LobbyReply:
        if cmd.mode is None or cmd.seats is None:
            raise LobbyError(LOBBY_BAD_REQUEST, "create needs a mode and a seat count")
        rooms.validate_mode_and_seats(cmd.mode, cmd.seats)
        creator = self._member(cmd)
        now = self.clock()
        room = rooms.create_room(
            room_id=f"r-{secrets.token_hex(6)}",
            creator=creator,
            mode=cmd.mode,
            seat_count=cmd.seats,
            public=cmd.public,
            invite_code=None if cmd.public else secrets.token_urlsafe(6),
            now=now,
            autopilot=cmd.autopilot,
        )
        await self.store.claim(
            Claim(player_id=cmd.player_id, room_id=room.room_id, since=now), self._claim_is_stale
        )
        try:
            await self.store.insert_room(room)
        except BaseException:
            await self.store.release(cmd.player_id, room_id=room.room_id)
            raise
        await self.events.publish("room_created", room.room_id, after=room)
        log.info("room_created", room_id=room.room_id, mode=room.mode)
        return LobbyReply(room=room.detail(), invite_code=room.invite_code)

    async def list_rooms(self) -> LobbyReply:
        ordered = sorted(await self.store.all_rooms(), key=lambda r: r.created_at)
        listed = [d.summary() for d in (r.detail() for r in ordered) if is_listed(d)]
        return LobbyReply(
            rooms=listed[:MAX_LISTED_ROOMS], more_rooms=len(listed) > MAX_LISTED_ROOMS
        )

    async def list_games(self) -> LobbyReply:
        """Public games running now, for spectators: rooms started and not yet finished
        (a room is deleted when its game finishes)."""
        ordered = sorted(await self.store.all_rooms(), key=lambda r: r.created_at)
        games = [
            RunningGame(**r.detail().summary().model_dump(), table_id=r.table_id)
            for r in ordered
            if r.public and r.status == "started" and r.table_id is not None
        ]
        return LobbyReply(games=games[:MAX_LISTED_GAMES])

    async def get(self, cmd: LobbyCommand) -> LobbyReply:
        room, _ = await self.store.require_room(self._room_id(cmd))
        is_member = room.member(cmd.player_id) is not None
        if not room.public and not is_member and cmd.invite_code != room.invite_code:
            raise LobbyError(LOBBY_BAD_INVITE, "this room is private: the invite code is wrong")
        return LobbyReply(
            room=room.detail(),
            invite_code=room.invite_code if is_member else None,
            table_id=room.table_id,
        )

    async def mine(self, cmd: LobbyCommand) -> LobbyReply:
        found = await self.store.get_claim(cmd.player_id)
        if found is None:
            return LobbyReply()
        claim = found[0]
        got = await self.store.get_room(claim.room_id)
        room = got[0] if got is not None else None
        # A start that stopped after the room recorded its table but before the slots did
        # still names the table: the room is the authority while it exists.
        table_id = claim.table_id or (room.table_id if room is not None else None)
        return LobbyReply(
            room=room.detail() if room is not None else None,
            invite_code=room.invite_code if room is not None else None,
            table_id=table_id,
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
            before, after = await self.store.change_room(
                room_id, lambda r: rooms.join(r, player, cmd.invite_code, now)
            )
        except BaseException:
            await self.store.release(player.player_id, room_id=room_id)
            raise
        assert after is not None
        await self.events.publish("room_changed", room_id, after=after, before=before)
        return LobbyReply(room=after.detail(), invite_code=after.invite_code)

    async def leave(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        before, after = await self.store.change_room(
            room_id, lambda r: rooms.leave(r, cmd.player_id)
        )
        await self.store.release(cmd.player_id, room_id=room_id)
        if after is None:
            await self.events.publish("room_closed", room_id, after=None, before=before)
            return LobbyReply()
        await self.events.publish("room_changed", room_id, after=after, before=before)
        return LobbyReply(room=after.detail())

    async def add_bot(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if cmd.bot_id is not None and bot_persona(cmd.bot_id) is None:
            raise LobbyError(LOBBY_UNKNOWN_BOT, f"no bot {cmd.bot_id!r} in the roster")

        def change(room: Room) -> Room:
            bot = self._pick_bot(room, cmd.bot_id)
            return rooms.add_bot(room, cmd.player_id, bot)

        _, after = await self.store.change_room(room_id, change)
        assert after is not None
        await self.events.publish("room_changed", room_id, after=after)
        return LobbyReply(room=after.detail())

    async def remove_bot(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if not cmd.bot_id:
            raise LobbyError(LOBBY_BAD_REQUEST, "remove_bot needs a bot_id")
        bot_id = cmd.bot_id
        _, after = await self.store.change_room(
            room_id, lambda r: rooms.remove_bot(r, cmd.player_id, bot_id)
        )
        assert after is not None
        await self.events.publish("room_changed", room_id, after=after)
        return LobbyReply(room=after.detail())

    async def kick(self, cmd: LobbyCommand) -> LobbyReply:
        room_id = self._room_id(cmd)
        if not cmd.target:
            raise LobbyError(LOBBY_BAD_REQUEST, "kick needs a target player")
        target = cmd.target
        before, after = await self.store.change_room(
            room_id, lambda r: rooms.kick(r, cmd.player_id, target)
        )
        assert after is not None
        await self.store.release(target, room_id=room_id)
        await self.events.publish("room_changed", room_id, after=after, before=before)
        return LobbyReply(room=after.detail())

    async def watch(self, cmd: LobbyCommand) -> LobbyReply:
        """May this player spectate ``table_id``? (private rooms: members and invitees)"""
        if not cmd.table_id:
            raise LobbyError(LOBBY_BAD_REQUEST, "watch needs a table_id")
        room_id = Room.room_of_table(cmd.table_id)
        found = await self.store.get_room(room_id) if room_id is not None else None
        if found is None or found[0].table_id != cmd.table_id:
            raise LobbyError(LOBBY_UNKNOWN_GAME, f"no room's game runs on {cmd.table_id!r} now")
        room = found[0]
        is_member = room.member(cmd.player_id) is not None
        if not room.public and not is_member and cmd.invite_code != room.invite_code:
            raise LobbyError(LOBBY_BAD_INVITE, "this game is private: the invite code is wrong")
        return LobbyReply(room=room.detail(), table_id=room.table_id)

    async def start(self, cmd: LobbyCommand) -> LobbyReply:
        room = await self.starter.start(self._room_id(cmd), cmd.player_id)
        return LobbyReply(room=room.detail(), table_id=room.table_id)

    # bots filling rooms --------------------------------------------------------------

    @staticmethod
    def _pick_bot(room: Room, bot_id: str | None) -> Member:
        taken = {m.player_id for m in room.members}
        if bot_id is not None:
            persona = bot_persona(bot_id)
            if persona is None:
                raise LobbyError(LOBBY_UNKNOWN_BOT, f"no bot {bot_id!r} in the roster")
        else:
            free = [p for p in BOT_ROSTER if p.player_id not in taken]
            if not free:
                raise LobbyError(LOBBY_UNKNOWN_BOT, "every roster bot is in this room")
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
                    raise _NothingToDo
                while r.free_seats > 0:
                    r = rooms.fill_with_bot(r, self._pick_bot(r, None))
                return r

            try:
                _, after = await self.store.change_room(room.room_id, change)
            except (LobbyError, _NothingToDo):
                continue
            assert after is not None
            filled += 1
            await self.events.publish("room_changed", room.room_id, after=after)
            log.info("room_filled_with_bots", room_id=room.room_id)
        return filled

    async def close_abandoned_rooms(self) -> int:
        """Close open rooms that bots filled and nobody started for a long while: their
        humans are gone (a closed tab never sends `leave`), and only a member can start a
        room, so it would stay listed forever. Returns rooms closed."""
        now = self.clock()
        closed = 0
        for room in await self.store.all_rooms():
            if not self._abandoned(room, now):
                continue

            def close(r: Room) -> Room | None:
                if not self._abandoned(r, now):
                    raise _NothingToDo
                return None

            try:
                before, _ = await self.store.change_room(room.room_id, close)
            except (LobbyError, _NothingToDo):
                continue
            for member in before.humans:
                await self.store.release(member.player_id, room_id=room.room_id)
            await self.events.publish("room_closed", room.room_id, after=None, before=before)
            closed += 1
            log.info("abandoned_room_closed", room_id=room.room_id)
        return closed

    def _abandoned(self, room: Room, now: float) -> bool:
        idle_since = room.waiting_since + self.settings.bot_fill_after_seconds
        return (
            room.public
            and room.status == "open"
            and room.free_seats == 0
            and len(room.bots) > 0
            and now - idle_since >= self.settings.abandoned_room_seconds
        )

    def _wants_bots(self, room: Room, now: float) -> bool:
        return (
            room.public
            and room.status == "open"
            and room.free_seats > 0
            and len(room.humans) > 0
            and now - room.waiting_since >= self.settings.bot_fill_after_seconds
        )

    async def run_background(self, stop: asyncio.Event) -> None:
        """Fill waiting rooms and carry on unfinished starts, now and then every while."""
        while not stop.is_set():
            try:
                await self.starter.resume_starts()
                await self.fill_waiting_rooms()
                await self.close_abandoned_rooms()
            except Exception:
                log.exception("lobby_sweep_failed")
            with contextlib.suppress(TimeoutError):
                # `asyncio.timeout`: a `wait_for` can swallow a cancellation on 3.11
                # (`opolyx_service.tasks`).
                async with asyncio.timeout(self.settings.fill_check_seconds):
                    await stop.wait()

    async def on_games_message(self, subject: str, data: bytes) -> None:
        await self.game_ends.on_message(subject, data)

    # helpers -------------------------------------------------------------------------

    async def _claim_is_stale(self, claim: Claim) -> bool:
        """A claim whose room is gone or does not seat the player (left by a crash)."""
        if claim.table_id is not None:
            return False
        if self.clock() - claim.since < self.settings.claim_grace_seconds:
            return False
        found = await self.store.get_room(claim.room_id)
        return found is None or found[0].member(claim.player_id) is None
