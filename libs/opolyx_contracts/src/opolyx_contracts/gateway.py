"""The websocket protocol between the web client and the gateway.

Client -> gateway: one JSON object per message, ``{"id": <str|int>, "type": ..., ...}``.
The first message of a socket must be ``hello`` with the session token. Every message gets
exactly one ``reply`` with the same id: ``{"type": "reply", "id", "ok": true, "data": {...}}``
or ``{"type": "reply", "id", "ok": false, "error": {"code", "message"}}``. A message that
cannot be read at all gets a reply with ``id: null``. The socket stays open after errors.

Gateway -> client pushes (no id): ``table.event`` (with the per-table ``seq``),
``table.state`` (the public view at ``seq``), ``lobby.event``, ``chat.message`` (rooms
watched with ``chat.watch``).

The player's identity always comes from the token, never from a message.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "GATEWAY_PROTOCOL",
    "LOBBY_ACTIONS",
    "ChatPost",
    "ChatUnwatch",
    "ChatWatch",
    "ClientMessage",
    "Hello",
    "LobbyRequest",
    "Ping",
    "TableCmd",
    "TableUnwatch",
    "TableWatch",
    "client_message_adapter",
]

GATEWAY_PROTOCOL = 1
"""Bumped only for a change an existing client cannot understand."""

_ID = r"^[A-Za-z0-9_-]{1,128}$"
MessageId = str | int

LOBBY_ACTIONS = (
    "list",
    "get",
    "mine",
    "create",
    "join",
    "leave",
    "add_bot",
    "remove_bot",
    "kick",
    "start",
)


class _Client(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: MessageId
    """Chosen by the client; echoed in the reply."""


class Hello(_Client):
    """First message of a socket: authenticates it."""

    type: Literal["hello"]
    token: str = Field(max_length=2048)


class Ping(_Client):
    type: Literal["ping"]


class LobbyRequest(_Client):
    """A lobby action, forwarded to the lobby service as the token's player."""

    type: Literal["lobby"]
    action: Literal[
        "list", "get", "mine", "create", "join", "leave", "add_bot", "remove_bot", "kick", "start"
    ]
    room: str | None = Field(default=None, pattern=_ID)
    mode: str | None = Field(default=None, max_length=32)
    seats: int | None = Field(default=None, ge=2, le=6)
    private: bool | None = None
    invite: str | None = Field(default=None, max_length=64)
    target: str | None = Field(default=None, max_length=128)
    """The member a kick or remove_bot is about (a bot's player id for add_bot/remove_bot)."""


class TableWatch(_Client):
    """Follow a table's events: as its seated player, or as a spectator."""

    type: Literal["table.watch"]
    table: str = Field(pattern=_ID)
    since: int | None = Field(default=None, ge=0)
    """Last event sequence seen; the missed events are replayed, or a snapshot is sent."""


class TableUnwatch(_Client):
    type: Literal["table.unwatch"]
    table: str = Field(pattern=_ID)


class TableCmd(_Client):
    """A rules command (``{"type": "roll"}``) for the player's own seat at a table."""

    type: Literal["table.cmd"]
    table: str = Field(pattern=_ID)
    command: dict[str, Any]
    expected_version: int | None = None


class ChatWatch(_Client):
    """Receive the chat messages of a room (``chat.message`` pushes)."""

    type: Literal["chat.watch"]
    room: str = Field(pattern=_ID)


class ChatUnwatch(_Client):
    type: Literal["chat.unwatch"]
    room: str = Field(pattern=_ID)


class ChatPost(_Client):
    type: Literal["chat.post"]
    room: str = Field(pattern=_ID)
    text: str = Field(min_length=1, max_length=500)


ClientMessage = Annotated[
    Hello
    | Ping
    | LobbyRequest
    | TableWatch
    | TableUnwatch
    | TableCmd
    | ChatWatch
    | ChatUnwatch
    | ChatPost,
    Field(discriminator="type"),
]

client_message_adapter: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
