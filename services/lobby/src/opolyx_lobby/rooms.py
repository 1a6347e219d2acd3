"""Rooms as values: every lobby rule is a pure function from a room to the next room.

The store (``store.py``) makes these changes atomic across lobby instances with
compare-and-set; nothing here does I/O or reads a clock.
"""

from __future__ import annotations

from opolyx_contracts.lobby import (
    LOBBY_ALREADY_IN_ROOM,
    LOBBY_BAD_INVITE,
    LOBBY_BAD_MODE,
    LOBBY_BAD_REQUEST,
    LOBBY_BAD_SEAT_COUNT,
    LOBBY_NOT_CREATOR,
    LOBBY_NOT_ENOUGH_PLAYERS,
    LOBBY_NOT_IN_ROOM,
    LOBBY_ROOM_FULL,
    LOBBY_ROOM_STARTED,
    RoomDetail,
    RoomMember,
    RoomStatus,
)
from opolyx_contracts.replay import ForkSource
from opolyx_rules.modes import MODES
from pydantic import BaseModel, ConfigDict

from opolyx_lobby import names
from opolyx_lobby.errors import LobbyError


class Member(BaseModel):
    """One filled seat: a human player or a bot from the roster."""

    model_config = ConfigDict(frozen=True)

    player_id: str
    name: str
    bot: bool = False
    #: play style of a bot seat (the roster's), None for humans
    style: str | None = None


class Room(BaseModel):
    model_config = ConfigDict(frozen=True)

    room_id: str
    mode: str
    seat_count: int
    public: bool
    #: only private rooms have one; never shown in public listings
    invite_code: str | None = None
    creator: str
    members: tuple[Member, ...] = ()
    status: RoomStatus = "open"
    created_at: float
    #: when the room last gained a human; bots fill free seats after the configured wait
    waiting_since: float
    table_id: str | None = None
    #: when the current start began (a start left by a dead instance is resolved later)
    starting_since: float | None = None
    #: the current start: recorded before the table is asked for, so every retry of the
    #: start (by any instance, after any crash) creates the same table (`start_table_id`)
    start_id: str | None = None
    #: set once every human's slot points at the started table
    seated: bool = False
    #: the creator's choice: a bot plays a dropped player's seat after a grace period
    autopilot: bool = True
    #: a practice room: its game continues this finished game's step (no XP)
    fork: ForkSource | None = None

    @property
    def humans(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if not m.bot)

    @property
    def bots(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if m.bot)

    @property
    def free_seats(self) -> int:
        return self.seat_count - len(self.members)

    def member(self, player_id: str) -> Member | None:
        return next((m for m in self.members if m.player_id == player_id), None)

    @staticmethod
    def room_of_table(table_id: str) -> str | None:
        """The room whose start made this table id (see `start_table_id`), if any."""
        parts = table_id.split("-")
        if len(parts) != 3 or parts[0] != "t":
            return None
        return f"r-{parts[1]}"

    @property
    def start_table_id(self) -> str | None:
        """The table of the current start: derived from the room and the start id, so one
        start always means one table and a new start (new seats) a new one."""
        if self.start_id is None:
            return None
        return f"t-{self.room_id.removeprefix('r-')}-{self.start_id}"

    def detail(self) -> RoomDetail:
        """What players see: everything but the invite code and the start bookkeeping."""
        return RoomDetail(
            room_id=self.room_id,
            mode=self.mode,
            seat_count=self.seat_count,
            public=self.public,
            status=self.status,
            creator=self.creator,
            members=[
                RoomMember(player_id=m.player_id, name=m.name, bot=m.bot, style=m.style)
                for m in self.members
            ],
            filled=len(self.members),
            humans=len(self.humans),
            created_at=self.created_at,
            waiting_since=self.waiting_since,
            table_id=self.table_id,
            starting_since=self.starting_since,
            autopilot=self.autopilot,
        )


def validate_mode_and_seats(mode: str, seat_count: int) -> None:
    config = MODES.get(mode)
    if config is None:
        raise LobbyError(LOBBY_BAD_MODE, f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if seat_count not in config.allowed_seats:
        allowed = " or ".join(str(n) for n in config.allowed_seats)
        raise LobbyError(
            LOBBY_BAD_SEAT_COUNT, f"{mode} rooms have {allowed} seats, not {seat_count}"
        )


def create_room(
    *,
    room_id: str,
    creator: Member,
    mode: str,
    seat_count: int,
    public: bool,
    invite_code: str | None,
    now: float,
    autopilot: bool = True,
) -> Room:
    validate_mode_and_seats(mode, seat_count)
    return Room(
        room_id=room_id,
        mode=mode,
        seat_count=seat_count,
        public=public,
        invite_code=None if public else invite_code,
        autopilot=autopilot,
        creator=creator.player_id,
        members=(creator,),
        created_at=now,
        waiting_since=now,
    )


def _require_open(room: Room) -> None:
    if room.status != "open":
        raise LobbyError(LOBBY_ROOM_STARTED, f"room {room.room_id} has already started")


def _require_creator(room: Room, player_id: str) -> None:
    if room.creator != player_id:
        raise LobbyError(LOBBY_NOT_CREATOR, "only the room's creator can do that")


def join(room: Room, player: Member, invite_code: str | None, now: float) -> Room:
    """Seat a human; in a full room a human takes the seat of the last bot (bots make way)."""
    _require_open(room)
    if room.member(player.player_id) is not None:
        raise LobbyError(LOBBY_ALREADY_IN_ROOM, "you are already in this room")
    if not room.public and invite_code != room.invite_code:
        raise LobbyError(LOBBY_BAD_INVITE, "this room is private: the invite code is wrong")
    names.check_unlike(player.name, [m.name for m in room.members if not m.bot])
    members = list(room.members)
    if room.free_seats <= 0:
        bot = next((m for m in reversed(members) if m.bot), None)
        if bot is None:
            raise LobbyError(LOBBY_ROOM_FULL, f"room {room.room_id} is full")
        members.remove(bot)
    members.append(player)
    return room.model_copy(update={"members": tuple(members), "waiting_since": now})


def leave(room: Room, player_id: str) -> Room | None:
    """Remove a player; None when no human is left (the room closes)."""
    _require_open(room)
    if room.member(player_id) is None:
        raise LobbyError(LOBBY_NOT_IN_ROOM, "you are not in this room")
    members = tuple(m for m in room.members if m.player_id != player_id)
    humans = [m for m in members if not m.bot]
    if not humans:
        return None
    creator = room.creator if room.creator != player_id else humans[0].player_id
    return room.model_copy(update={"members": members, "creator": creator})


def add_bot(room: Room, player_id: str, bot: Member) -> Room:
    _require_open(room)
    _require_creator(room, player_id)
    return fill_with_bot(room, bot)


def fill_with_bot(room: Room, bot: Member) -> Room:
    _require_open(room)
    if room.free_seats <= 0:
        raise LobbyError(LOBBY_ROOM_FULL, f"room {room.room_id} is full")
    if room.member(bot.player_id) is not None:
        raise LobbyError(LOBBY_ALREADY_IN_ROOM, f"{bot.name} is already in this room")
    return room.model_copy(update={"members": (*room.members, bot)})


def remove_bot(room: Room, player_id: str, bot_id: str) -> Room:
    _require_open(room)
    _require_creator(room, player_id)
    target = room.member(bot_id)
    if target is None or not target.bot:
        raise LobbyError(LOBBY_NOT_IN_ROOM, f"no bot {bot_id!r} in this room")
    return room.model_copy(
        update={"members": tuple(m for m in room.members if m.player_id != bot_id)}
    )


def kick(room: Room, player_id: str, target_id: str) -> Room:
    _require_open(room)
    _require_creator(room, player_id)
    if target_id == player_id:
        raise LobbyError(LOBBY_BAD_REQUEST, "you cannot kick yourself; leave the room instead")
    if room.member(target_id) is None:
        raise LobbyError(LOBBY_NOT_IN_ROOM, f"{target_id!r} is not in this room")
    return room.model_copy(
        update={"members": tuple(m for m in room.members if m.player_id != target_id)}
    )


def check_can_start(room: Room, player_id: str) -> None:
    _require_open(room)
    _require_creator(room, player_id)
    if len(room.members) < 2:
        raise LobbyError(LOBBY_NOT_ENOUGH_PLAYERS, "a game needs at least 2 filled seats")
    config = MODES[room.mode]
    if len(room.members) not in config.allowed_seats:
        raise LobbyError(
            LOBBY_NOT_ENOUGH_PLAYERS,
            f"{room.mode} needs every one of its {room.seat_count} seats filled (add bots)",
        )


def mark_starting(room: Room, player_id: str, now: float, start_id: str) -> Room:
    """Begin a start (seats freeze). A start already under way is kept as it is: resending
    `start` resumes the same start (the same table), it never begins a second one."""
    if room.status == "started" or (room.status == "starting" and room.start_id is not None):
        _require_creator(room, player_id)
        return room
    check_can_start(room, player_id)
    return room.model_copy(
        update={"status": "starting", "starting_since": now, "start_id": start_id}
    )


def mark_started(room: Room, start_id: str, table_id: str) -> Room:
    """Record the table of start `start_id`; a no-op when that start is already recorded."""
    if room.status == "started" and room.start_id == start_id and room.table_id == table_id:
        return room
    if room.status != "starting" or room.start_id != start_id:
        raise LobbyError(LOBBY_ROOM_STARTED, f"room {room.room_id} is not in start {start_id}")
    return room.model_copy(
        update={"status": "started", "table_id": table_id, "starting_since": None}
    )


def mark_seated(room: Room, table_id: str) -> Room:
    """Every human's slot now points at the table: nothing of the start is left to do."""
    if room.status != "started" or room.table_id != table_id:
        raise LobbyError(LOBBY_ROOM_STARTED, f"room {room.room_id} does not run {table_id}")
    return room.model_copy(update={"seated": True})


def reopen(room: Room, start_id: str | None) -> Room:
    """Undo start `start_id` when it is known that its table was not created."""
    if room.status != "starting" or room.start_id != start_id:
        raise LobbyError(LOBBY_ROOM_STARTED, f"room {room.room_id} is not in that start")
    return room.model_copy(update={"status": "open", "starting_since": None, "start_id": None})
