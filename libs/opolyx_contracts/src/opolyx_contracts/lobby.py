"""Messages of the lobby service and the bot roster the lobby seats.

- `LobbyCommand` on `opolyx.lobby.cmd` (request-reply) -> `LobbyReply` | `ErrorReply`.
  The gateway fills `player_id` from the session token, never from the client.
- `LobbyEvent` on `opolyx.lobby.events` (plain publish) whenever a room is created,
  changes, starts or closes; `room` is the public room (no invite code).
- The bot decision request is `opolyx_contracts.table.DecisionRequest`.

Error codes (`ErrorReply.error.code`): lobby/unknown_room, lobby/room_full,
lobby/bad_mode, lobby/bad_seat_count, lobby/not_creator, lobby/already_in_game,
lobby/already_in_room, lobby/not_in_room, lobby/room_started, lobby/bad_invite,
lobby/not_enough_players, lobby/unknown_bot, lobby/table_unavailable, lobby/busy,
plus the request/* codes of `opolyx_contracts.errors`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply

__all__ = [
    "BOT_ROSTER",
    "BOT_STYLES",
    "BotPersona",
    "LobbyCommand",
    "LobbyCommandType",
    "LobbyEvent",
    "LobbyEventType",
    "LobbyReply",
    "bot_persona",
]

LobbyCommandType = Literal[
    "create", "list", "get", "mine", "join", "leave", "add_bot", "remove_bot", "kick", "start"
]


class LobbyCommand(Message):
    type: LobbyCommandType
    player_id: str = Field(min_length=1, max_length=128)
    """The acting player (from the gateway's session, not from the client)."""
    name: str | None = Field(default=None, max_length=64)
    """Display name of the acting player (create/join)."""
    room_id: str | None = Field(default=None, max_length=128)
    """Target room (get, join, leave, add_bot, remove_bot, kick, start)."""
    mode: str | None = Field(default=None, max_length=32)
    """create: the rules mode (classic, blitz, speed, team, halal, fortuna)."""
    seats: int | None = None
    """create: seat count, 2-6 (team: 4 or 6)."""
    public: bool = True
    """create: listed publicly (and filled by bots after a wait) or private with an invite code."""
    invite_code: str | None = Field(default=None, max_length=64)
    """join: the code of a private room."""
    bot_id: str | None = Field(default=None, max_length=128)
    """add_bot: a roster bot's player id (None: the next free one); remove_bot: which bot."""
    target: str | None = Field(default=None, max_length=128)
    """kick: the player to remove."""


class LobbyReply(OkReply):
    room: dict[str, Any] | None = None
    """The room after the command (public form)."""
    rooms: list[dict[str, Any]] | None = None
    """list: open public rooms."""
    invite_code: str | None = None
    """create/get for a member of a private room: the code to share."""
    table_id: str | None = None
    """start, mine: the table the player's game runs on."""


LobbyEventType = Literal["room_created", "room_changed", "room_started", "room_closed"]


class LobbyEvent(Message):
    type: LobbyEventType
    room_id: str
    room: dict[str, Any] | None
    """Public room after the change; None when closed."""
    table_id: str | None = None


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
