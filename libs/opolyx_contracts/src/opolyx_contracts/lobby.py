"""Messages of the lobby service and the bot roster the lobby seats.

- `LobbyCommand` on `opolyx.lobby.cmd` (request-reply) -> `LobbyReply` | `ErrorReply`.
  The gateway fills `player_id` (and `name`) from the session token, never from the client.
- `LobbyEvent`, published whenever a room is created, changes, starts or closes:
  - on `opolyx.lobby.events` (`LOBBY_EVENTS`) for **public rooms only**: what the room list
    needs; every signed-in socket may see it. A gateway coalesces these per socket
    (`coalesce_room_events` -> one `RoomsChanged` push per ~100 ms).
  - on `lobby_member_events(player_id)` for **every room**, once per member (the members
    before and after the change, so a kicked or leaving player learns it too): what the
    room view of that member needs, the table id when it starts included. Private rooms'
    events travel only there.
  Why per-member subjects rather than a member list inside one broadcast event: privacy
  then does not rest on every gateway filtering correctly (a broadcast path that forwards
  everything leaks nothing), NATS permissions can restrict the subjects, and the public
  broadcast stays one encoding for all sockets. The cost is one publish per member (at most
  six) per change of a room.
- `room` in replies and events is the `RoomDetail` (never the invite code); the list is
  `RoomSummary` rows.
- The bot decision request is `opolyx_contracts.table.DecisionRequest`; the card boosts
  asked when a game starts are `opolyx_contracts.progression.BoostsRequest`/`BoostsReply`
  (re-exported here for the lobby's readers).

Error codes (`ErrorReply.error.code`) are the `LOBBY_*` constants below, plus the request/*
codes of `opolyx_contracts.errors`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply
from opolyx_contracts.progression import BoostsReply, BoostsRequest
from opolyx_contracts.subjects import LOBBY_MEMBER_EVENTS_ANY, PREFIX

__all__ = [
    "BOT_ROSTER",
    "BOT_STYLES",
    "LOBBY_ALREADY_IN_GAME",
    "LOBBY_ALREADY_IN_ROOM",
    "LOBBY_BAD_INVITE",
    "LOBBY_BAD_MODE",
    "LOBBY_BAD_NAME",
    "LOBBY_BAD_REQUEST",
    "LOBBY_BAD_SEAT_COUNT",
    "LOBBY_BUSY",
    "LOBBY_ERROR_CODES",
    "LOBBY_MEMBER_EVENTS_WILDCARD",
    "LOBBY_NAME_TAKEN",
    "LOBBY_NOT_CREATOR",
    "LOBBY_NOT_ENOUGH_PLAYERS",
    "LOBBY_NOT_IN_ROOM",
    "LOBBY_ROOM_FULL",
    "LOBBY_ROOM_STARTED",
    "LOBBY_TABLE_UNAVAILABLE",
    "LOBBY_UNKNOWN_BOT",
    "LOBBY_UNKNOWN_GAME",
    "LOBBY_UNKNOWN_ROOM",
    "MAX_LISTED_GAMES",
    "MAX_LISTED_ROOMS",
    "MAX_LOBBY_COMMAND_BYTES",
    "BoostsReply",
    "BoostsRequest",
    "BotPersona",
    "LobbyCommand",
    "LobbyCommandType",
    "LobbyEvent",
    "LobbyEventType",
    "LobbyReply",
    "RoomDetail",
    "RoomMember",
    "RoomStatus",
    "RoomSummary",
    "RoomsChanged",
    "RunningGame",
    "bot_persona",
    "coalesce_room_events",
    "is_listed",
    "lobby_member_events",
    "member_token",
]

# Error codes ---------------------------------------------------------------------------

LOBBY_BAD_REQUEST = "lobby/bad_request"
"""A command lacks what it needs (e.g. `join` without a `room_id`)."""
LOBBY_UNKNOWN_ROOM = "lobby/unknown_room"
LOBBY_ROOM_FULL = "lobby/room_full"
LOBBY_BAD_MODE = "lobby/bad_mode"
LOBBY_BAD_SEAT_COUNT = "lobby/bad_seat_count"
LOBBY_NOT_CREATOR = "lobby/not_creator"
LOBBY_ALREADY_IN_GAME = "lobby/already_in_game"
"""The player already has an unfinished room or game (R21)."""
LOBBY_ALREADY_IN_ROOM = "lobby/already_in_room"
LOBBY_NOT_IN_ROOM = "lobby/not_in_room"
LOBBY_ROOM_STARTED = "lobby/room_started"
"""The room is starting or started: its seats no longer change."""
LOBBY_BAD_INVITE = "lobby/bad_invite"
LOBBY_NOT_ENOUGH_PLAYERS = "lobby/not_enough_players"
LOBBY_UNKNOWN_BOT = "lobby/unknown_bot"
LOBBY_TABLE_UNAVAILABLE = "lobby/table_unavailable"
"""The table service did not create the game; the message says whether the room reopened
or the start goes on by itself (the room says "starting" until it is resolved)."""
LOBBY_BUSY = "lobby/busy"
LOBBY_UNKNOWN_GAME = "lobby/unknown_game"
"""`watch`: no room's game runs on that table now."""
LOBBY_BAD_NAME = "lobby/bad_name"
"""The display name is empty, too long or has control characters (after NFKC)."""
LOBBY_NAME_TAKEN = "lobby/name_taken"
"""The display name looks like a bot's or like a name already in the room."""

LOBBY_ERROR_CODES: tuple[str, ...] = (
    LOBBY_BAD_REQUEST,
    LOBBY_UNKNOWN_ROOM,
    LOBBY_ROOM_FULL,
    LOBBY_BAD_MODE,
    LOBBY_BAD_SEAT_COUNT,
    LOBBY_NOT_CREATOR,
    LOBBY_ALREADY_IN_GAME,
    LOBBY_ALREADY_IN_ROOM,
    LOBBY_NOT_IN_ROOM,
    LOBBY_ROOM_STARTED,
    LOBBY_BAD_INVITE,
    LOBBY_NOT_ENOUGH_PLAYERS,
    LOBBY_UNKNOWN_BOT,
    LOBBY_TABLE_UNAVAILABLE,
    LOBBY_BUSY,
    LOBBY_UNKNOWN_GAME,
    LOBBY_BAD_NAME,
    LOBBY_NAME_TAKEN,
)
"""Every code the lobby answers with (for the client's constants)."""

# Commands and replies ------------------------------------------------------------------

MAX_LOBBY_COMMAND_BYTES = 2048
"""Largest `LobbyCommand` body the lobby reads (every field is bounded; the largest honest
command is well under 1 KB). A larger one is refused with request/invalid, unread."""

LobbyCommandType = Literal[
    "create",
    "list",
    "get",
    "mine",
    "join",
    "leave",
    "add_bot",
    "remove_bot",
    "kick",
    "start",
    "watch",
    "games",
    "practice",
]
"""`games` lists the games of public rooms now running (what spectators may watch, those
started first first). `watch` is asked by the gateway before it lets a player spectate a
table: ok (with the room) when the table runs the game of a public room, or of a private
room the player is a member of or has the invite code of; else lobby/bad_invite, or
lobby/unknown_game for a table that runs no room's game now (finished, or not started by
the lobby)."""


class LobbyCommand(Message):
    type: LobbyCommandType
    player_id: str = Field(min_length=1, max_length=128)
    """The acting player (from the gateway's session, not from the client)."""
    name: str | None = Field(default=None, max_length=64)
    """Display name of the acting player (create/join); NFKC-normalised by the lobby."""
    room_id: str | None = Field(default=None, max_length=128)
    """Target room (get, join, leave, add_bot, remove_bot, kick, start)."""
    mode: str | None = Field(default=None, max_length=32)
    """create: the rules mode (classic, blitz, speed, team, halal, fortuna)."""
    seats: int | None = Field(default=None, ge=0, le=64)
    """create: seat count, 2-6 (team: 4 or 6)."""
    public: bool = True
    """create: listed publicly (and filled by bots after a wait) or private with an invite code."""
    autopilot: bool = True
    """create: a bot plays a dropped player's seat after a grace period until they are back
    (False: plain R16, the seat misses its turns and is resigned)."""
    invite_code: str | None = Field(default=None, max_length=64)
    """join: the code of a private room."""
    bot_id: str | None = Field(default=None, max_length=128)
    """add_bot: a roster bot's player id (None: the next free one); remove_bot: which bot."""
    target: str | None = Field(default=None, max_length=128)
    """kick: the player to remove."""
    table_id: str | None = Field(default=None, max_length=128)
    """watch: the table the player wants to spectate; practice: the finished game to continue."""
    step: int | None = Field(default=None, ge=0, le=1_000_000)
    """practice: the step (a turn's start) of `table_id` the practice game starts from; with
    `mode` and `seats` of that game and `seat`, the player's seat in it (bots take the rest)."""
    seat: int | None = Field(default=None, ge=0, le=5)


RoomStatus = Literal["open", "starting", "started"]
"""open: seats change; starting: the table is being created (seats frozen); started: the
game runs on `table_id`."""


class RoomMember(BaseModel):
    """One filled seat as players see it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    player_id: str
    name: str
    bot: bool = False
    style: str | None = None
    """Play style of a bot seat (the roster's); None for humans."""


class RoomSummary(BaseModel):
    """A row of the room list: everything the list shows and filters on."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    room_id: str
    mode: str
    seat_count: int
    public: bool
    status: RoomStatus
    creator: str
    members: list[RoomMember]
    """In seat order (the table seats members in this order)."""
    filled: int
    """len(members)"""
    humans: int
    """Members who are not bots."""


class RoomDetail(RoomSummary):
    """A room as its members (and anyone who may open it) see it: never the invite code."""

    created_at: float
    waiting_since: float
    """When the room last gained a human; bots take free seats after the lobby's wait."""
    autopilot: bool = True
    """A bot plays a dropped player's seat after a grace period (False: plain R16)."""
    table_id: str | None = None
    """The game's table once started."""
    starting_since: float | None = None
    """When the current start began (status "starting")."""

    def summary(self) -> RoomSummary:
        return RoomSummary.model_validate(self.model_dump(include=set(RoomSummary.model_fields)))


MAX_LISTED_ROOMS = 200
"""The room list names at most this many rooms (those waiting longest first), so the reply
stays far below NATS's payload limit however many rooms are open (~400 bytes a row)."""


MAX_LISTED_GAMES = 100
"""The running-games list names at most this many games (the oldest first)."""


class RunningGame(RoomSummary):
    """A row of the running-games list: a started public room and the table it plays on."""

    table_id: str


class LobbyReply(OkReply):
    room: RoomDetail | None = None
    """The room after the command."""
    rooms: list[RoomSummary] | None = Field(default=None, max_length=MAX_LISTED_ROOMS)
    """list: open public rooms, those waiting longest first."""
    more_rooms: bool = False
    """list: more rooms are open than `rooms` names."""
    games: list[RunningGame] | None = Field(default=None, max_length=MAX_LISTED_GAMES)
    """games: public games running now, those started first first."""
    invite_code: str | None = None
    """create/get for a member of a private room: the code to share."""
    table_id: str | None = None
    """start, mine: the table the player's game runs on."""


# Events ----------------------------------------------------------------------------------

LobbyEventType = Literal["room_created", "room_changed", "room_started", "room_closed"]


class LobbyEvent(Message):
    type: LobbyEventType
    room_id: str
    room: RoomDetail | None
    """The room after the change; None when closed."""
    table_id: str | None = None
    """room_started: the game's table."""


def is_listed(room: RoomSummary | None) -> bool:
    """Whether the public room list shows this room."""
    return room is not None and room.public and room.status == "open"


class RoomsChanged(BaseModel):
    """Many `LobbyEvent`s on `LOBBY_EVENTS` folded into one room-list delta.

    A gateway collects the events for ~100 ms and pushes one of these per socket (encoded
    once for all): `upserted` rows replace rows with the same `room_id`, `removed` ids
    leave the list. Later events supersede earlier ones of the same room.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["rooms_changed"] = "rooms_changed"
    upserted: list[RoomSummary] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


def coalesce_room_events(events: Iterable[LobbyEvent]) -> RoomsChanged:
    """Fold events (in arrival order) into one delta of the public room list."""
    last: dict[str, LobbyEvent] = {}
    for event in events:
        last.pop(event.room_id, None)  # keep the order of each room's latest change
        last[event.room_id] = event
    upserted: list[RoomSummary] = []
    removed: list[str] = []
    for room_id, event in last.items():
        if event.room is not None and is_listed(event.room):
            upserted.append(event.room.summary())
        else:
            removed.append(room_id)
    return RoomsChanged(upserted=upserted, removed=removed)


_SUBJECT_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

LOBBY_MEMBER_EVENTS_WILDCARD = LOBBY_MEMBER_EVENTS_ANY
"""What a gateway subscribes to (once) for every member's room events."""


def member_token(player_id: str) -> str:
    """The subject token of a player: the id itself when subject-safe, else a hash of it.

    Prefixed so that an id never collides with another id's hash.
    """
    if _SUBJECT_SAFE.match(player_id):
        return f"p_{player_id}"
    return f"h_{hashlib.sha256(player_id.encode()).hexdigest()[:40]}"


def lobby_member_events(player_id: str) -> str:
    """Core NATS subject of the lobby events meant for one player (rooms they are or were in)."""
    return f"{PREFIX}.lobby.player.{member_token(player_id)}.events"


# Bots ------------------------------------------------------------------------------------

BOT_STYLES = ("balanced", "cautious", "builder", "trader", "gambler", "shark")
"""Play styles; a style changes decisions, never rules."""


class BotPersona(BaseModel):
    model_config = ConfigDict(frozen=True)

    player_id: str
    name: str
    style: str


BOT_ROSTER: tuple[BotPersona, ...] = tuple(
    BotPersona(player_id=f"bot-{name.lower()}", name=name, style=style)
    for name, style in (
        ("Ada", "balanced"),
        ("Bruno", "builder"),
        ("Clara", "cautious"),
        ("Dmitri", "shark"),
        ("Esme", "trader"),
        ("Farid", "gambler"),
        ("Greta", "builder"),
        ("Hiro", "balanced"),
        ("Ines", "trader"),
        ("Jonas", "cautious"),
        ("Kemi", "shark"),
        ("Luca", "gambler"),
        ("Mira", "builder"),
        ("Noor", "balanced"),
    )
)
"""Persistent bot names, used by the lobby to fill seats and by workers to pick a style."""

_BY_ID = {p.player_id: p for p in BOT_ROSTER}


def bot_persona(player_id: str) -> BotPersona | None:
    """The roster bot with this player id, or None."""
    return _BY_ID.get(player_id)
