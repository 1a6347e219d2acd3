"""Messages of the chat service (table, spectator, waiting-room and lobby chat).

Channels are subject tokens (`channel_token`): `lobby`, `r_<room_id>` (a waiting room),
`t_<table_id>` (the players at a table; spectators may read it) and `s_<table_id>` (the
spectators of a table, when the room allows it). Who is in which channel comes from the
lobby's `rooms` bucket (`RoomRecordView`), never from the client.

Requests (request-reply, answered by the chat service; sent by the gateway, which alone
fills `player_id` and `name` from the player's session, except `BotSticker`, sent by bots):

- `ChatPost` on `chat_post(channel)` -> `ChatPosted` | `ErrorReply`; the message is then
  published once on `chat_messages(channel)` (stream `CHAT`, the channel's history). With a
  `request_id`, one post per player and request id: a repeat (the gateway asked again
  after its request timed out, a client resent it) is answered with the first post and
  stores nothing (`REQUEST_ID_SECONDS`).
- `ChatHistoryRequest` on `chat_history(channel)` -> `ChatHistory`: "join". An ok reply
  is also the gateway's licence to forward that channel's live messages to the socket.
- `ChatMute` on `CHAT_MUTE` -> `ChatMutes` (the player's whole mute list after the change);
  `ChatMutesQuery` on `CHAT_MUTES` -> `ChatMutes`.
- `ChatReport` on `CHAT_REPORT` -> `ChatReported`; with a `request_id`, one report per
  player and request id (a repeat gets the first report's id).
- `ChatSettingsRequest` on `CHAT_SETTINGS` -> `ChatSettingsReply` (the room's creator).
- `BotSticker` on `CHAT_BOT_STICKER` -> `ChatPosted` (from the bots role).

Delivery is per channel: one `ChatMessage` per post. Mutes are per recipient, so the
recipient's gateway drops a message whose sender that player muted (`visible_to`); the
history a player asks for is already filtered by the chat service.

Text is stored and delivered verbatim: it is text, never markup (clients use textContent).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from opolyx_contracts.envelope import Message, OkReply
from opolyx_contracts.lobby import RoomMember, RoomStatus

__all__ = [
    "BOT_OCCASIONS",
    "CHAT_BAD_CHANNEL",
    "CHAT_BAD_REQUEST",
    "CHAT_BLOCKED_WORD",
    "CHAT_BOT_STICKERS_OFF",
    "CHAT_DUPLICATE",
    "CHAT_ERROR_CODES",
    "CHAT_NOT_CREATOR",
    "CHAT_NOT_MEMBER",
    "CHAT_RATE_LIMITED",
    "CHAT_SPECTATOR_CHAT_OFF",
    "CHAT_TOO_LONG",
    "CHAT_UNKNOWN_MESSAGE",
    "LOBBY_CHANNEL",
    "MAX_CHAT_REQUEST_BYTES",
    "MAX_TEXT_CHARS",
    "REQUEST_ID_SECONDS",
    "STICKERS",
    "BotOccasion",
    "BotSticker",
    "ChannelKind",
    "ChannelRef",
    "ChatHistory",
    "ChatHistoryRequest",
    "ChatMessage",
    "ChatMute",
    "ChatMutes",
    "ChatMutesQuery",
    "ChatPost",
    "ChatPosted",
    "ChatReport",
    "ChatReportRecord",
    "ChatReported",
    "ChatReports",
    "ChatRoomSettings",
    "ChatSettingsReply",
    "ChatSettingsRequest",
    "RoomRecordView",
    "channel_token",
    "parse_channel",
    "sticker_for",
    "visible_to",
]

# Error codes -----------------------------------------------------------------------------

CHAT_BAD_REQUEST = "chat/bad_request"
"""A post with neither or both of text and sticker, an unknown sticker, an empty text."""
CHAT_BAD_CHANNEL = "chat/bad_channel"
"""The channel token names no kind of channel (`channel_token`)."""
CHAT_NOT_MEMBER = "chat/not_member"
"""The player may not read or post in this channel (not seated, not in the room...)."""
CHAT_TOO_LONG = "chat/too_long"
CHAT_RATE_LIMITED = "chat/rate_limited"
"""Too many messages in a short time; the message says when to try again."""
CHAT_DUPLICATE = "chat/duplicate"
"""The same text again within a short time."""
CHAT_BLOCKED_WORD = "chat/blocked_word"
CHAT_SPECTATOR_CHAT_OFF = "chat/spectator_chat_off"
CHAT_BOT_STICKERS_OFF = "chat/bot_stickers_off"
CHAT_NOT_CREATOR = "chat/not_creator"
"""Only the room's creator changes its chat settings."""
CHAT_UNKNOWN_MESSAGE = "chat/unknown_message"
"""A report names a message that is not (or no longer) in the channel's history."""

CHAT_ERROR_CODES: tuple[str, ...] = (
    CHAT_BAD_REQUEST,
    CHAT_BAD_CHANNEL,
    CHAT_NOT_MEMBER,
    CHAT_TOO_LONG,
    CHAT_RATE_LIMITED,
    CHAT_DUPLICATE,
    CHAT_BLOCKED_WORD,
    CHAT_SPECTATOR_CHAT_OFF,
    CHAT_BOT_STICKERS_OFF,
    CHAT_NOT_CREATOR,
    CHAT_UNKNOWN_MESSAGE,
)

# Bounds ----------------------------------------------------------------------------------

MAX_TEXT_CHARS = 300
"""Upper bound of the contract; the service may be configured lower, never higher."""
MAX_CHAT_REQUEST_BYTES = 4096
"""Largest request body the chat service reads (300 characters of 4-byte UTF-8 fit)."""
MAX_HISTORY = 100
REQUEST_ID_SECONDS = 90.0
"""How long chat knows a post's `request_id` (at least as long as a client resends a
message, `gateway.RESEND_WINDOW_SECONDS`, plus a request's timeout; within the 120 s
duplicate window of stream `CHAT`)."""

STICKERS: tuple[str, ...] = (
    "thumbs_up",
    "laugh",
    "wow",
    "cry",
    "angry",
    "cool",
    "money",
    "house",
    "hotel",
    "handshake",
    "bankrupt",
    "trophy",
    "dice",
    "gg",
)
"""The fixed set of stickers; the client draws them (no images from users)."""

# Channels --------------------------------------------------------------------------------

ChannelKind = Literal["lobby", "room", "table", "spectators"]
LOBBY_CHANNEL = "lobby"
_PREFIXES: dict[str, ChannelKind] = {"r_": "room", "t_": "table", "s_": "spectators"}
_KIND_PREFIX = {kind: prefix for prefix, kind in _PREFIXES.items()}
_ID = re.compile(r"^[A-Za-z0-9_-]{1,120}$")


class ChannelRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    id: str = ""
    """The room id (room) or table id (table, spectators); empty for the lobby."""

    @property
    def token(self) -> str:
        return channel_token(self.kind, self.id)


def channel_token(kind: ChannelKind, id: str = "") -> str:
    """The subject token of a channel; raises ValueError for an id that cannot be one."""
    if kind == "lobby":
        return LOBBY_CHANNEL
    if not _ID.match(id):
        raise ValueError(f"{kind} id {id!r} cannot name a chat channel")
    return f"{_KIND_PREFIX[kind]}{id}"


def parse_channel(token: str) -> ChannelRef | None:
    """The channel a subject token names, or None."""
    if token == LOBBY_CHANNEL:
        return ChannelRef(kind="lobby")
    kind = _PREFIXES.get(token[:2])
    if kind is None or not _ID.match(token[2:]):
        return None
    return ChannelRef(kind=kind, id=token[2:])


# Messages --------------------------------------------------------------------------------

_PlayerId = Field(min_length=1, max_length=128)
_RequestId = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")


class ChatPost(Message):
    player_id: str = _PlayerId
    """The poster (from the gateway's session, not from the client)."""
    name: str = Field(min_length=1, max_length=64)
    """The poster's display name (the gateway's, as the lobby shows it)."""
    text: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    sticker: str | None = Field(default=None, max_length=32, validate_default=True)
    request_id: str | None = _RequestId
    """The sender's key of this post, the same when it asks again (the gateway's: from the
    player and the client's message, id included): chat posts once per player and request
    id within `REQUEST_ID_SECONDS` and answers a repeat with the first post (the content of
    a repeat is not compared). None: every request is a post of its own."""

    @field_validator("sticker")
    @classmethod
    def _one_of(cls, sticker: str | None, info: ValidationInfo) -> str | None:
        # On a field (not the model) so a refusal names it: request/invalid, not "not JSON".
        if (info.data.get("text") is None) == (sticker is None):
            raise ValueError("a post has either a text or a sticker")
        return sticker


class ChatMessage(Message):
    """One message as stored in `CHAT` and delivered to the channel."""

    message_id: str
    channel: str
    sender_id: str
    sender_name: str
    bot: bool = False
    text: str | None = None
    """Verbatim: shown as text, never interpreted as markup."""
    sticker: str | None = None
    sent_at: float


class ChatPosted(OkReply):
    message: ChatMessage


class ChatHistoryRequest(Message):
    player_id: str = _PlayerId
    limit: int = Field(default=MAX_HISTORY, ge=1, le=MAX_HISTORY)


class ChatHistory(OkReply):
    channel: str
    messages: list[ChatMessage] = Field(max_length=MAX_HISTORY)
    """Oldest first, without the messages of players the asker muted."""
    may_post: bool
    """Whether this player may post here (a spectator reads the table channel only)."""


class ChatMute(Message):
    player_id: str = _PlayerId
    target: str = _PlayerId
    muted: bool = True
    """False lifts the mute."""


class ChatMutesQuery(Message):
    player_id: str = _PlayerId


MAX_MUTES = 500


class ChatMutes(OkReply):
    muted: list[str] = Field(max_length=MAX_MUTES)
    """Every player this player muted (remembered across sessions)."""


class ChatReport(Message):
    player_id: str = _PlayerId
    channel: str = Field(min_length=1, max_length=128)
    message_id: str = Field(min_length=1, max_length=64)
    reason: str = Field(default="", max_length=300)
    request_id: str | None = _RequestId
    """As `ChatPost.request_id`: one report per player and request id (its `report_id` is
    derived from them), a repeat is answered with the first report's id."""


class ChatReported(OkReply):
    report_id: str


class ChatReportRecord(BaseModel):
    """A report as an operator sees it: the message and what was said just before it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    report_id: str
    reporter: str
    reason: str
    reported_at: float
    message: ChatMessage
    context: list[ChatMessage]
    """The channel's messages up to and including the reported one (oldest first)."""


class ChatReports(BaseModel):
    reports: list[ChatReportRecord]


class ChatRoomSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    spectator_chat: bool = False
    """Spectators of the room's table may write in their own channel."""
    bot_stickers: bool = True
    """Bots at the room's table post a sticker now and then."""


class ChatSettingsRequest(Message):
    player_id: str = _PlayerId
    room_id: str = Field(min_length=1, max_length=128)
    spectator_chat: bool | None = None
    bot_stickers: bool | None = None
    """None leaves a setting as it is (a request with both None reads them)."""


class ChatSettingsReply(OkReply):
    room_id: str
    settings: ChatRoomSettings


BotOccasion = Literal["good_auction", "bankruptcy", "game_end"]
BOT_OCCASIONS: tuple[BotOccasion, ...] = ("good_auction", "bankruptcy", "game_end")


class BotSticker(Message):
    """A bot's sticker for a moment of its table's game. Chat posts one per table, occasion
    and `moment`, whichever worker or bot asks and however often: the bots hear a game's
    end live (a table taken over announces it again) and several workers read the same
    bankruptcy from the decision requests; a repeat is refused with `chat/duplicate`."""

    table_id: str = Field(min_length=1, max_length=128)
    bot_id: str = _PlayerId
    occasion: BotOccasion
    moment: str = Field(default="", max_length=40, pattern=r"^[0-9a-z_-]*$")
    """Which one of the occasion at this table, the same for every worker that sees it:
    empty for the end of the game (one goodbye per game), the table's out count after a
    bankruptcy, `<square>-<round>-<seat whose turn it was>` for an auction."""


_BY_STYLE: dict[str, dict[BotOccasion, str]] = {
    "balanced": {"good_auction": "thumbs_up", "bankruptcy": "wow", "game_end": "gg"},
    "cautious": {"good_auction": "handshake", "bankruptcy": "cry", "game_end": "gg"},
    "builder": {"good_auction": "house", "bankruptcy": "wow", "game_end": "hotel"},
    "trader": {"good_auction": "handshake", "bankruptcy": "money", "game_end": "gg"},
    "gambler": {"good_auction": "dice", "bankruptcy": "laugh", "game_end": "dice"},
    "shark": {"good_auction": "money", "bankruptcy": "cool", "game_end": "trophy"},
}


def sticker_for(style: str | None, occasion: BotOccasion) -> str:
    """The sticker a bot of this play style posts on this occasion (its persona)."""
    return _BY_STYLE.get(style or "", _BY_STYLE["balanced"])[occasion]


def visible_to(message: ChatMessage, muted: frozenset[str] | set[str]) -> bool:
    """Whether a recipient who muted `muted` sees this message (the gateway's filter)."""
    return message.sender_id not in muted


# The lobby's rooms, as chat reads them ---------------------------------------------------


class RoomRecordView(BaseModel):
    """The fields of a lobby room record (bucket `rooms`) that decide chat membership.

    The lobby writes the record; chat only reads it (read-only bucket permission) and
    ignores every other field.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    room_id: str
    public: bool
    creator: str
    members: tuple[RoomMember, ...] = ()
    status: RoomStatus = "open"
    table_id: str | None = None

    def member(self, player_id: str) -> RoomMember | None:
        return next((m for m in self.members if m.player_id == player_id), None)
