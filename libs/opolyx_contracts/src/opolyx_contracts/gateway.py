"""The websocket protocol between the web client and the gateway: every message both ways.

Client -> gateway: one JSON object per message, ``{"id": <str|int>, "type": ..., ...}``
(`ClientMessage`), unknown fields refused. The first message of a socket must be ``hello``
with the session token. Every message gets exactly one `Reply` with the same id, ok with the
request's result model (`HelloResult`, `TableWatchResult`, ...) or not ok with an `ErrorBody`.
A message that cannot be read at all gets a reply with ``id: null``. The socket stays open
after errors.

Limits (the gateway's settings; defaults in brackets), each with its answer:
- size: a message over ``max_message_bytes`` [16 KB] gets ``request/invalid``; one over
  ``max_frame_bytes`` [1 MiB] is not read: the server closes the socket with 1009.
- nesting: JSON deeper than 200 levels gets ``request/malformed_json`` (no valid message
  nests more than a few).
- ids: text of at most 128 characters or an integer (not a boolean); any other id gets its
  error with ``id: null``. For ``table.cmd`` the id is the retry key: the same player sending
  the same id with the same command again gets the first reply, and the command runs once
  (on any gateway instance); so a client must not reuse an id for a new command within a
  page's life (the web client prefixes its ids with a random one per page load). The other
  messages that change something (`ONCE_PER_ID_TYPES`: lobby changes, chat posts, mutes,
  reports, room chat settings, the autopilot switch) run once per player and id too, on the
  gateway instance that holds the socket, within ``recent_replies_seconds`` [120]; so a
  client resends one cut short by a lost socket under its first id after the reconnect, up
  to `RESEND_WINDOW_SECONDS` after it first sent it (never later: it may have been forgotten).
- rate: ``rate_per_second`` [20] with bursts of ``rate_burst`` [40]; past it
  ``request/rate_limited`` (not processed); ``rate_violations_before_close`` [200] refusals
  within ``rate_violation_window_seconds`` [60] close the socket with 1008.
- resume: ``table.watch`` with ``since`` replays up to ``replay_limit`` [256] missed events,
  within a per-socket budget (``replay_events_per_second`` [64]); otherwise the
  ``table.state`` alone (``replayed: 0``).
- spectators: ``max_spectators_per_table`` [100] per gateway instance, then
  ``table/too_many_spectators``.
- session: at the token's expiry the socket gets an ``auth/expired_token`` error
  (``id: null``) and is closed with 4401; a client renews before (``POST
  /api/session/renew``) and sends ``hello`` with the new token on the same socket.

Gateway -> client pushes (`Push`, no id):
- ``table.state``: the public view of a table at ``seq`` with the decisions pending (each
  with its seat's legal commands) and the seats; sent when a client starts watching and
  after it missed updates. The same push for every watcher, so encoded once.
- ``table.update``: the table's `TableUpdate` (the events of one stored batch and the view
  and decisions after it) as the table published it, the same for every watcher.
- ``table.events``: events replayed to a client that resumes (``since``), before its
  ``table.state``.
- ``lobby.rooms``: changes of the public room list (folded over ~100 ms), to every
  signed-in socket; ``lobby.event``: a change of a room the player is or was in.
- ``chat.message``: a live message in a watched chat channel (after the history the
  ``chat.watch`` reply carried), unless the player muted its sender.

Frames: one message per frame, unless the socket was opened with ``?batch=1``
(`BATCH_PARAM`): then a frame may also be a JSON array of messages, to be read in order
(`ServerFrame`). A ``table.cmd`` reply that is ready before the ``table.update`` of the
command has reached the socket waits for that update (at most 0.1 s) and goes in its
frame, ``[update, reply]``: the client has the new state when the reply resolves. A client
that does not ask (an older one) gets every message in a frame of its own.

The player's identity always comes from the token, never from a message.
"""

from __future__ import annotations

import typing
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)

from opolyx_contracts.chat import MAX_HISTORY, MAX_MUTES, MAX_TEXT_CHARS, ChatMessage
from opolyx_contracts.errors import ErrorBody
from opolyx_contracts.game import GameCommand, Timeout
from opolyx_contracts.lobby import LobbyEvent, LobbyReply, RoomDetail, RoomSummary, RunningGame
from opolyx_contracts.progression import PublicProfile
from opolyx_contracts.table import EventRecord, PendingDecision, PublicView, TableUpdate

__all__ = [
    "AUTH_ALREADY_SIGNED_IN",
    "AUTH_BAD_NAME",
    "AUTH_ERROR_CODES",
    "AUTH_EXPIRED_TOKEN",
    "AUTH_INVALID_TOKEN",
    "AUTH_REQUIRED",
    "AUTH_SESSION_ENDED",
    "BATCH_PARAM",
    "BATCH_QUERY",
    "CHAT_TEXT_LIMIT",
    "GATEWAY_ERROR_CODES",
    "GATEWAY_PROTOCOL",
    "LOBBY_ACTIONS",
    "ONCE_PER_ID_MESSAGES",
    "ONCE_PER_ID_TYPES",
    "PUSH_TYPES",
    "RESEND_WINDOW_SECONDS",
    "TOO_MANY_SPECTATORS",
    "UPSTREAM_BAD_REPLY",
    "ChatMessagePush",
    "ChatMuteRequest",
    "ChatMutesRequest",
    "ChatMutesResult",
    "ChatPost",
    "ChatPostResult",
    "ChatReportRequest",
    "ChatReportResult",
    "ChatRoomSettingsRequest",
    "ChatRoomSettingsResult",
    "ChatUnwatch",
    "ChatWatch",
    "ChatWatchResult",
    "ClientMessage",
    "Empty",
    "ErrorReply",
    "Hello",
    "HelloResult",
    "LobbyEventPush",
    "LobbyRequest",
    "LobbyResult",
    "LobbyRoomsPush",
    "OkReply",
    "Ping",
    "PingResult",
    "PlayerInfo",
    "PlayerPage",
    "Push",
    "Reply",
    "ReplyResult",
    "ServerFrame",
    "ServerMessage",
    "TableAutopilot",
    "TableAutopilotResult",
    "TableCmd",
    "TableCmdResult",
    "TableEventsPush",
    "TableSeat",
    "TableStatePush",
    "TableTradePreview",
    "TableUnwatch",
    "TableUpdatePush",
    "TableWatch",
    "TableWatchResult",
    "TradePreviewResult",
    "client_message_adapter",
    "server_frame_adapter",
    "server_message_adapter",
]

# Error codes of the gateway's own ------------------------------------------------------

AUTH_REQUIRED = "auth/required"
"""No session token, or a message before ``hello``."""
AUTH_BAD_NAME = "auth/bad_name"
AUTH_INVALID_TOKEN = "auth/invalid_token"
AUTH_EXPIRED_TOKEN = "auth/expired_token"
AUTH_ALREADY_SIGNED_IN = "auth/already_signed_in"
"""A second ``hello`` with another player's token on the same socket."""
AUTH_SESSION_ENDED = "auth/session_ended"
"""A renewal past the session's maximum lifetime: sign in again."""
AUTH_ERROR_CODES: tuple[str, ...] = (
    AUTH_REQUIRED,
    AUTH_BAD_NAME,
    AUTH_INVALID_TOKEN,
    AUTH_EXPIRED_TOKEN,
    AUTH_ALREADY_SIGNED_IN,
    AUTH_SESSION_ENDED,
)
"""Every code an auth refusal carries (a client signs in again on any of them)."""

TOO_MANY_SPECTATORS = "table/too_many_spectators"
"""``table.watch`` by a non-player past ``max_spectators_per_table`` on this instance."""
UPSTREAM_BAD_REPLY = "upstream/bad_reply"
"""A service behind the gateway answered with something it could not read."""
GATEWAY_ERROR_CODES: tuple[str, ...] = (TOO_MANY_SPECTATORS, UPSTREAM_BAD_REPLY)

GATEWAY_PROTOCOL = 2
"""Bumped only for a change an existing client cannot understand (2: one shared
``table.update`` push; ``table.state`` lists every pending decision instead of one
seat's ``legal``)."""

CHAT_TEXT_LIMIT = MAX_TEXT_CHARS
"""Longest chat message, in characters (the chat contract's bound; the chat service may be
configured lower and then refuses with ``chat/too_long``)."""

_ID = r"^[A-Za-z0-9_-]{1,128}$"
_CHANNEL = r"^(lobby|[rts]_[A-Za-z0-9_-]{1,120})$"
"""A chat channel token (`opolyx_contracts.chat.channel_token`)."""
MessageId = Annotated[str, Strict(), Field(max_length=128)] | Annotated[int, Strict()]

LobbyAction = Literal[
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
    "games",
]
LOBBY_ACTIONS: tuple[str, ...] = LobbyAction.__args__  # type: ignore[attr-defined]


# ---------------------------------------------------------------- client -> gateway
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
    action: LobbyAction
    room: str | None = Field(default=None, pattern=_ID)
    mode: str | None = Field(default=None, max_length=32)
    seats: int | None = Field(default=None, ge=2, le=6)
    private: bool | None = None
    invite: str | None = Field(default=None, max_length=64)
    target: str | None = Field(default=None, max_length=128)
    """The member a kick or remove_bot is about (a bot's player id for add_bot/remove_bot)."""
    autopilot: bool | None = None
    """create: False for plain R16 (a dropped player's seat misses its turns), else a bot
    plays a dropped player's seat after a grace period."""


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
    command: GameCommand
    """Parsed strictly (unknown fields and types refused); ``seat`` may be left out."""
    expected_version: int | None = Field(default=None, ge=0)

    @field_validator("command")
    @classmethod
    def _not_a_timeout(cls, command: GameCommand) -> GameCommand:
        if isinstance(command, Timeout):
            raise ValueError("timeouts are fired by the table, not sent by players")
        return command


class TableAutopilot(_Client):
    """Switch autopilot for the player's own seat: a bot plays it until switched off."""

    type: Literal["table.autopilot"]
    table: str = Field(pattern=_ID)
    on: bool


_Square = Annotated[int, Field(ge=0, le=39)]
_Cash = Annotated[int, Field(ge=0, le=10**9)]


class TableTradePreview(_Client):
    """How the table would judge a drafted offer from the player's seat (the rules' guard
    and R10 values): answered by the table, nothing is offered or changed."""

    type: Literal["table.trade_preview"]
    table: str = Field(pattern=_ID)
    to: int = Field(ge=0, le=5)
    give_cash: _Cash = 0
    give_squares: list[_Square] = Field(default_factory=list, max_length=28)
    take_cash: _Cash = 0
    take_squares: list[_Square] = Field(default_factory=list, max_length=28)


class ChatWatch(_Client):
    """Join a chat channel (`opolyx_contracts.chat.channel_token`: ``lobby``, ``r_<room>``,
    ``t_<table>``, ``s_<table>``): the reply carries the recent history, then the channel's
    live messages follow as ``chat.message`` pushes (none missed, none twice)."""

    type: Literal["chat.watch"]
    channel: str = Field(pattern=_CHANNEL)


class ChatUnwatch(_Client):
    type: Literal["chat.unwatch"]
    channel: str = Field(pattern=_CHANNEL)


class ChatPost(_Client):
    """A text or a sticker (`opolyx_contracts.chat.STICKERS`), exactly one of them; the chat
    service's refusals (``chat/rate_limited``, ``chat/too_long``, ``chat/blocked_word``,
    ``chat/not_member``...) come back as the reply's error, code unchanged."""

    type: Literal["chat.post"]
    channel: str = Field(pattern=_CHANNEL)
    text: str | None = Field(default=None, min_length=1, max_length=CHAT_TEXT_LIMIT)
    sticker: str | None = Field(default=None, max_length=32, validate_default=True)

    @field_validator("sticker")
    @classmethod
    def _text_or_sticker(cls, sticker: str | None, info: ValidationInfo) -> str | None:
        if (info.data.get("text") is None) == (sticker is None):
            raise ValueError("a post has either a text or a sticker")
        return sticker


class ChatMuteRequest(_Client):
    """Mute (or, with ``muted: false``, unmute) another player's chat, remembered."""

    type: Literal["chat.mute"]
    target: str = Field(pattern=_ID)
    muted: bool = True


class ChatMutesRequest(_Client):
    """The players this player muted (remembered across sessions): a client asks once it
    is signed in, to offer "unmute" on their names."""

    type: Literal["chat.mutes"]


class ChatReportRequest(_Client):
    """Report a message to the operators (stored with what was said before it)."""

    type: Literal["chat.report"]
    channel: str = Field(pattern=_CHANNEL)
    message_id: str = Field(min_length=1, max_length=64)
    reason: str = Field(default="", max_length=300)


class ChatRoomSettingsRequest(_Client):
    """A room's chat settings (`opolyx_contracts.chat.ChatRoomSettings`): a member reads them
    (both left out); the room's creator changes either (else ``chat/not_creator``)."""

    type: Literal["chat.settings"]
    room: str = Field(pattern=_ID)
    spectator_chat: bool | None = None
    """Spectators of the room's table may write in their own channel."""
    bot_stickers: bool | None = None
    """Bots at the room's table post a sticker now and then."""


ClientMessage = Annotated[
    Hello
    | Ping
    | LobbyRequest
    | TableWatch
    | TableUnwatch
    | TableCmd
    | TableTradePreview
    | TableAutopilot
    | ChatWatch
    | ChatUnwatch
    | ChatPost
    | ChatMuteRequest
    | ChatMutesRequest
    | ChatReportRequest
    | ChatRoomSettingsRequest,
    Field(discriminator="type"),
]

client_message_adapter: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)

ONCE_PER_ID_MESSAGES: tuple[type[BaseModel], ...] = (
    TableCmd,
    TableAutopilot,
    LobbyRequest,
    ChatPost,
    ChatMuteRequest,
    ChatReportRequest,
    ChatRoomSettingsRequest,
)
"""The messages the gateway runs once per player and message id: a retry gets the first
one's reply (or waits for it while it still runs) instead of running again; a refusal that
says nothing ran (``service/unavailable``, ``service/busy``) is not remembered, so its
retry runs. A type some of whose messages only read is here whole (a lobby ``list``, a
``chat.settings`` without a change): those are answered afresh, which a retry may be."""
ONCE_PER_ID_TYPES: tuple[str, ...] = tuple(
    typing.get_args(model.model_fields["type"].annotation)[0] for model in ONCE_PER_ID_MESSAGES
)
"""Their ``type`` values: what a client may resend under the same id after a reconnect."""
RESEND_WINDOW_SECONDS = 30.0
"""How long after first sending one a client may resend such a message. A gateway remembers
replies at least this long (its settings refuse a shorter ``recent_replies_seconds``), so a
resend within it never runs a second time."""


# ---------------------------------------------------------------- replies
class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Empty(_Result):
    """The result of a request that has nothing to say but "done" (unwatch)."""


class PlayerInfo(_Result):
    id: str
    name: str


class HelloResult(_Result):
    protocol: int
    player: PlayerInfo
    expires_at: int
    """Unix seconds when the session token expires."""


class PingResult(_Result):
    now: float
    """The gateway's clock (Unix seconds), for countdowns."""


class TableWatchResult(_Result):
    table: str
    seat: int | None
    """The watcher's seat, None for a spectator."""
    spectator: bool
    seq: int
    """Sequence of the ``table.state`` that follows this reply."""
    replayed: int
    """How many missed events were replayed (``table.events`` pushes) before it."""


class TableCmdResult(_Result):
    seq: int
    version: int
    events: int


class TableAutopilotResult(_Result):
    seat: int
    autopilot: bool
    """A bot plays the seat now."""
    chosen: bool
    """Switched on by the player (stays on while they are here)."""


class TradePreviewResult(_Result):
    """The table's `TradePreview` without its envelope."""

    seat: int
    give_value: int
    take_value: int
    share_pct: int
    fairness_pct: int
    allies: bool
    allowed: bool
    refusal: ErrorBody | None = None


class ChatWatchResult(_Result):
    channel: str
    messages: list[ChatMessage] = Field(max_length=2 * MAX_HISTORY)
    """The channel's recent history, oldest first, without the senders this player muted
    (and any message that arrived while the history was read)."""
    may_post: bool
    """False for a spectator reading the players' channel."""


class ChatPostResult(_Result):
    message: ChatMessage
    """The message as the chat service stored and delivered it."""


class ChatMutesResult(_Result):
    muted: list[str] = Field(max_length=MAX_MUTES)
    """Every player this player muted, after the change."""


class ChatReportResult(_Result):
    report_id: str


class ChatRoomSettingsResult(_Result):
    room: str
    spectator_chat: bool
    bot_stickers: bool


class LobbyResult(_Result):
    """The lobby's reply without its envelope (``opolyx_contracts.lobby.LobbyReply``)."""

    room: RoomDetail | None = None
    """The room after the command."""
    rooms: list[RoomSummary] | None = None
    """list: open public rooms."""
    more_rooms: bool = False
    """list: more rooms are open than `rooms` names."""
    games: list[RunningGame] | None = None
    """games: public games running now (what a spectator may watch)."""
    invite_code: str | None = None
    table_id: str | None = None

    @classmethod
    def of(cls, reply: LobbyReply) -> LobbyResult:
        return cls.model_construct(**{name: getattr(reply, name) for name in cls.model_fields})


class PlayerPage(_Result):
    """``GET /api/players/{id}``: a player's name and public progression."""

    player_id: str
    name: str | None
    progression: PublicProfile | None
    """None when the progression service does not run or has never seen the player."""


ReplyResult = Annotated[
    HelloResult
    | PingResult
    | TableWatchResult
    | TableCmdResult
    | TradePreviewResult
    | TableAutopilotResult
    | ChatWatchResult
    | ChatPostResult
    | ChatMutesResult
    | ChatReportResult
    | ChatRoomSettingsResult
    | Empty
    | LobbyResult,
    Field(union_mode="left_to_right"),
]
"""A reply names no request type: a reader tries the results in this order (the open
lobby result last)."""


class OkReply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["reply"] = "reply"
    id: MessageId | None
    ok: Literal[True] = True
    data: ReplyResult


class ErrorReply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["reply"] = "reply"
    id: MessageId | None
    """None when the message was unreadable (no id could be read from it)."""
    ok: Literal[False] = False
    error: ErrorBody


Reply = Annotated[OkReply | ErrorReply, Field(discriminator="ok")]


# ---------------------------------------------------------------- pushes
class _Push(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TableSeat(_Push):
    seat: int
    player_id: str
    name: str | None
    bot: bool


class TableStatePush(_Push):
    type: Literal["table.state"] = "table.state"
    table: str
    seq: int
    version: int
    state: PublicView
    """The public view: no seed, RNG or deck order."""
    net_worth: list[int] = Field(default_factory=list)
    """Every seat's net worth (the rules' `net_worths`), in seat order."""
    pending: list[PendingDecision]
    """The decisions the rules wait for, each with its seat's legal commands."""
    seats: list[TableSeat]
    autopilot: list[int] = Field(default_factory=list)
    """Seats a bot plays now for their away (or willing) player."""
    deadline_at: float | None
    """Wall-clock (Unix seconds) of the next deadline."""
    now: float
    """The gateway's clock when sent (clients correct their countdowns by it)."""


class TableUpdatePush(TableUpdate):
    """The table's `TableUpdate` as it was published, with the push's ``type`` and the
    gateway's clock: the gateway forwards the table's own JSON (checked, not re-encoded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["table.update"] = "table.update"
    now: float
    """The gateway's clock when sent (clients correct their countdowns by it)."""


class TableEventsPush(_Push):
    type: Literal["table.events"] = "table.events"
    table: str
    seq: int
    events: list[EventRecord]
    at: float


class LobbyEventPush(_Push):
    """A change of a room the player is (or was) in, with the room after it."""

    type: Literal["lobby.event"] = "lobby.event"
    event: LobbyEvent


class LobbyRoomsPush(_Push):
    """Changes of the public room list (`opolyx_contracts.lobby.RoomsChanged`): rows to
    add or replace (by ``room_id``) and ids to drop."""

    type: Literal["lobby.rooms"] = "lobby.rooms"
    upserted: list[RoomSummary]
    removed: list[str]


class ChatMessagePush(_Push):
    """A live message of a watched channel, not shown to a player who muted its sender."""

    type: Literal["chat.message"] = "chat.message"
    channel: str
    message: ChatMessage


_PUSHES = (
    TableStatePush,
    TableUpdatePush,
    TableEventsPush,
    LobbyEventPush,
    LobbyRoomsPush,
    ChatMessagePush,
)
Push = Annotated[
    TableStatePush
    | TableUpdatePush
    | TableEventsPush
    | LobbyEventPush
    | LobbyRoomsPush
    | ChatMessagePush,
    Field(discriminator="type"),
]

PUSH_TYPES: tuple[str, ...] = tuple(model.model_fields["type"].default for model in _PUSHES)

ServerMessage = Annotated[Push | Reply, Field(union_mode="left_to_right")]
"""Anything the gateway sends on a socket."""

server_message_adapter: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)

BATCH_PARAM = "batch"
"""Query parameter of the websocket URL (``/ws?batch=1``) by which a client says it reads
batched frames; a gateway that predates it ignores it (a rolling upgrade stays readable)."""
BATCH_QUERY = f"{BATCH_PARAM}=1"
"""The websocket URL's query of a client that reads batched frames."""

ServerFrame = ServerMessage | list[ServerMessage]
"""One websocket frame from the gateway: a message, or (on a batched socket) several."""

server_frame_adapter: TypeAdapter[ServerFrame] = TypeAdapter(ServerFrame)
