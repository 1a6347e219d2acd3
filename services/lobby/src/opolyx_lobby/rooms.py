"""Rooms as values: every lobby rule is a pure function from a room to the next room.

The store (``store.py``) makes these changes atomic across lobby instances with
compare-and-set; nothing here does I/O or reads a clock.
"""

from __future__ import annotations

from typing import Literal

from opolyx_rules.modes import MODES
from pydantic import BaseModel, ConfigDict, Field

RoomStatus = Literal["open", "starting", "started"]


class LobbyError(Exception):
    """A lobby request that cannot be carried out; ``code`` is stable (``lobby/<reason>``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


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
    #: when a start began (a start that never finished is undone after a while)
    starting_since: float | None = None

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

    def public_dict(self) -> dict[str, object]:
        """What players see: everything but the invite code."""
        return self.model_dump(mode="json", exclude={"invite_code"})


def validate_mode_and_seats(mode: str, seat_count: int) -> None:
    config = MODES.get(mode)
    if config is None:
        raise LobbyError(
            "lobby/bad_mode", f"unknown mode {mode!r}; choose one of {', '.join(MODES)}"
        )
    if seat_count not in config.allowed_seats:
        allowed = " or ".join(str(n) for n in config.allowed_seats)
        raise LobbyError(
            "lobby/bad_seat_count", f"{mode} rooms have {allowed} seats, not {seat_count}"
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
) -> Room:
    validate_mode_and_seats(mode, seat_count)
    return Room(
        room_id=room_id,
        mode=mode,
        seat_count=seat_count,
        public=public,
        invite_code=None if public else invite_code,
        creator=creator.player_id,
        members=(creator,),
        created_at=now,
        waiting_since=now,
    )


def _require_open(room: Room) -> None:
    if room.status != "open":
        raise LobbyError("lobby/room_started", f"room {room.room_id} has already started")


def _require_creator(room: Room, player_id: str) -> None:
    if room.creator != player_id:
        raise LobbyError("lobby/not_creator", "only the room's creator can do that")


def join(room: Room, player: Member, invite_code: str | None, now: float) -> Room:
    """Seat a human; in a full room a human takes the seat of the last bot (bots make way)."""
    _require_open(room)
    if room.member(player.player_id) is not None:
        raise LobbyError("lobby/already_in_room", "you are already in this room")
    if not room.public and invite_code != room.invite_code:
        raise LobbyError("lobby/bad_invite", "this room is private: the invite code is wrong")
    members = list(room.members)
    if room.free_seats <= 0:
        bot = next((m for m in reversed(members) if m.bot), None)
        if bot is None:
            raise LobbyError("lobby/room_full", f"room {room.room_id} is full")
        members.remove(bot)
    members.append(player)
    return room.model_copy(update={"members": tuple(members), "waiting_since": now})


def leave(room: Room, player_id: str) -> Room | None:
    """Remove a player; None when no human is left (the room closes)."""
    _require_open(room)
    if room.member(player_id) is None:
        raise LobbyError("lobby/not_in_room", "you are not in this room")
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
        raise LobbyError("lobby/room_full", f"room {room.room_id} is full")
    if room.member(bot.player_id) is not None:
        raise LobbyError("lobby/already_in_room", f"{bot.name} is already in this room")
    return room.model_copy(update={"members": (*room.members, bot)})


def remove_bot(room: Room, player_id: str, bot_id: str) -> Room:
    _require_open(room)
    _require_creator(room, player_id)
    target = room.member(bot_id)
    if target is None or not target.bot:
        raise LobbyError("lobby/not_in_room", f"no bot {bot_id!r} in this room")
    return room.model_copy(
        update={"members": tuple(m for m in room.members if m.player_id != bot_id)}
    )


def kick(room: Room, player_id: str, target_id: str) -> Room:
    _require_open(room)
    _require_creator(room, player_id)
    if target_id == player_id:
        raise LobbyError("lobby/bad_request", "you cannot kick yourself; leave the room instead")
    if room.member(target_id) is None:
        raise LobbyError("lobby/not_in_room", f"{target_id!r} is not in this room")
    return room.model_copy(
        update={"members": tuple(m for m in room.members if m.player_id != target_id)}
    )


def check_can_start(room: Room, player_id: str) -> None:
    _require_open(room)
    _require_creator(room, player_id)
    if len(room.members) < 2:
        raise LobbyError("lobby/not_enough_players", "a game needs at least 2 filled seats")
    config = MODES[room.mode]
    if len(room.members) not in config.allowed_seats:
        raise LobbyError(
            "lobby/not_enough_players",
            f"{room.mode} needs every one of its {room.seat_count} seats filled (add bots)",
        )


def mark_starting(room: Room, player_id: str, now: float) -> Room:
    check_can_start(room, player_id)
    return room.model_copy(update={"status": "starting", "starting_since": now})


def mark_started(room: Room, table_id: str) -> Room:
    return room.model_copy(
        update={"status": "started", "table_id": table_id, "starting_since": None}
    )


def reopen(room: Room) -> Room:
    """Undo ``mark_starting`` when the table could not be created."""
    if room.status != "starting":
        raise LobbyError("lobby/room_started", f"room {room.room_id} is not starting")
    return room.model_copy(update={"status": "open", "starting_since": None})


class RoomSummary(BaseModel):
    """A row of the public room list."""

    room_id: str
    mode: str
    seat_count: int
    filled: int
    humans: int
    creator: str
    members: list[str] = Field(default_factory=list)


def summary(room: Room) -> RoomSummary:
    return RoomSummary(
        room_id=room.room_id,
        mode=room.mode,
        seat_count=room.seat_count,
        filled=len(room.members),
        humans=len(room.humans),
        creator=room.creator,
        members=[m.name for m in room.members],
    )
