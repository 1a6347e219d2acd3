"""Messages of the table service (subjects in `opolyx_contracts.subjects`).

- `CreateTable` on `opolyx.table.create` -> `TableCreated` | `ErrorReply`
- `TableCommand` on `table_command(table_id)` -> `CommandAccepted` | `ErrorReply`: a player's
  command (from the gateway), never for a bot seat
- `TableCommand` on `table_bot_command(table_id)` -> `CommandAccepted` | `ErrorReply`: a bot
  worker's, only for a bot seat or a seat on autopilot (else `seat/not_automated`)
- `SeatPresence` on `table_seat(table_id)` -> `SeatStatus` | `ErrorReply`: the gateway reports
  that a seated player's sockets came or went, or the player switched autopilot on or off
- `ViewRequest` on `table_view(table_id)` -> `TableView` | `ErrorReply`
- `TradePreviewRequest` on `table_trade_preview(table_id)` -> `TradePreview` | `ErrorReply`:
  how the rules judge an offer now (both sides' values, the fairness verdict), for the
  offer dialog; nothing changes at the table
- `TableEvents` on `table_events(table_id)` (stream TABLE_EVENTS): the events of one command
  in one message, message id `"<table_id>:<first_seq>"`, `seq` contiguous from 1 per table
- `DecisionRequest` on `opolyx.bots.decide` (queue group `bots`)
- `GameFinished` on `opolyx.game.finished`, `SeatOut` on `opolyx.game.seat_out` (stream GAMES)

Rules commands and events are typed (`opolyx_contracts.game`, generated from the rules
library) and travel as the rules library's JSON (`{"type": "roll", "seat": 0}`); the table's
own events (`table_created`, `seed_revealed`) are defined here. Nothing sent here while a
game runs contains its seed, RNG state or deck order.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply
from opolyx_contracts.errors import ErrorBody
from opolyx_contracts.game import GameCommand, GameEvent, SeatView, SquareView
from opolyx_contracts.replay import ForkSource

__all__ = [
    "MAX_COMMAND_BYTES",
    "MAX_PREVIEW_BYTES",
    "MAX_SEAT_MESSAGE_BYTES",
    "SEAT_NOT_AUTOMATED",
    "AutopilotChanged",
    "AutopilotReason",
    "CommandAccepted",
    "CreateTable",
    "DecisionKind",
    "DecisionRequest",
    "EventRecord",
    "EventsReference",
    "GameFinished",
    "PendingDecision",
    "PublicView",
    "RecordedEvent",
    "SeatOut",
    "SeatPresence",
    "SeatResult",
    "SeatSpec",
    "SeatStatus",
    "SeedRevealed",
    "TableCommand",
    "TableCreated",
    "TableCreatedEvent",
    "TableEvents",
    "TableUpdate",
    "TableView",
    "TradePreview",
    "TradePreviewRequest",
    "ViewRequest",
    "event_message_id",
]

MAX_PREVIEW_BYTES = 2048
"""Largest `TradePreviewRequest` body a table reads (every field below is bounded)."""
MAX_COMMAND_BYTES = 4096
"""Largest `TableCommand` body a table accepts (the largest real one, a trade offer naming
every property, is well under 1 KB)."""

MAX_SEAT_MESSAGE_BYTES = 1024
"""Largest `SeatPresence` body a table reads."""

SEAT_NOT_AUTOMATED = "seat/not_automated"
"""A command on the bots' subject for a seat that is neither a bot's nor on autopilot."""

_ID = r"^[A-Za-z0-9_-]{1,128}$"


class SeatSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    player_id: str = Field(min_length=1, max_length=128)
    """Who sits here; commands for this seat must carry this player id."""
    bot: bool = False
    """A bot seat: the table asks the bots' queue group for its decisions."""
    boosts: dict[int, int] = Field(default_factory=dict)
    """Card boosts the seat brings (R20): property square -> rent percentage."""
    name: str | None = Field(default=None, max_length=64)
    """Display name (cosmetic)."""


class CreateTable(Message):
    mode: str = Field(min_length=1, max_length=32)
    seats: list[SeatSpec] = Field(min_length=2, max_length=6)
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    """The game's seed; drawn by the table when absent. Kept secret until the game ends."""
    table_id: str | None = Field(default=None, pattern=_ID)
    """Chosen by the caller to make creation idempotent: resending returns the same table."""
    room_id: str | None = Field(default=None, max_length=128)
    """The lobby room the game belongs to (echoed in the GAMES events)."""
    autopilot: bool = True
    """When a seated human's connection drops, a bot plays the seat once the grace period
    is over, until the player is back. False: plain R16 (the seat's turns run out and two
    missed turns resign it). A player may switch autopilot on for themselves either way."""
    fork: ForkSource | None = None
    """Continue another finished game from one of its steps ("play from here"): the table
    rebuilds that position from the stored game, with a seed of its own; a practice game."""


class TableCreated(OkReply):
    table_id: str
    partition: int
    command_subject: str
    view_subject: str
    events_subject: str
    seed_commitment: str
    """SHA-256 hex of the seed's decimal string; checked against the seed revealed at the end."""
    seq: int
    """Sequence of the last event stored for the table so far."""


class TableCommand(Message):
    command_id: str = Field(min_length=1, max_length=128)
    """Unique per command; resending the same id returns the first answer, applies nothing."""
    player_id: str = Field(min_length=1, max_length=128)
    """Who acts; must own the command's seat."""
    command: GameCommand
    """The rules command, e.g. {"type": "roll"}; "seat" defaults to the player's seat.
    Unknown fields and unknown types are refused."""
    expected_version: int | None = None
    """When set, the command is refused with command/stale_version unless the table is at it."""


class SeatPresence(Message):
    """From the gateway: a seated player's presence at one table, or their own switch.

    `connected` is per gateway instance (a player may have sockets on several): the seat is
    away once no gateway reports it connected."""

    player_id: str = Field(min_length=1, max_length=128)
    """The seat's player (from the gateway's session)."""
    gateway: str = Field(min_length=1, max_length=128)
    """The reporting gateway instance."""
    connected: bool | None = None
    """True: the player has a socket on this table here; False: the last one closed."""
    autopilot: bool | None = None
    """The player switches autopilot for their seat on (True) or off (False)."""


class SeatStatus(OkReply):
    """The seat after a `SeatPresence`."""

    seat: int
    away: bool
    """No gateway reports the player connected."""
    autopilot: bool
    """A bot plays the seat now."""
    chosen: bool
    """The player switched autopilot on themselves (it stays on when they are back)."""


class CommandAccepted(OkReply):
    seq: int
    """Sequence of the last event this command produced (or the table's last if none)."""
    version: int
    """Public state version after the command; equals the last event's `version`."""
    events: int
    """How many events the command produced."""


class ViewRequest(Message):
    seat: int | None = None
    """When set, the reply lists that seat's legal commands."""


_Square = Annotated[int, Field(ge=0, le=39)]
_Cash = Annotated[int, Field(ge=0, le=10**9)]


class TradePreviewRequest(Message):
    """An offer as the proposer drafts it; the table answers with the rules' verdict."""

    player_id: str = Field(min_length=1, max_length=128)
    """The proposer (from the gateway's session): the table judges for this player's seat."""
    to: int = Field(ge=0, le=5)
    give_cash: _Cash = 0
    give_squares: list[_Square] = Field(default_factory=list, max_length=28)
    take_cash: _Cash = 0
    take_squares: list[_Square] = Field(default_factory=list, max_length=28)


class TradePreview(OkReply):
    """Rules `preview_offer`: what each side is worth under R10 and whether the table
    would take the offer now (the same guard as the `offer` command)."""

    seat: int
    """The proposer's seat."""
    give_value: int
    take_value: int
    share_pct: int
    """The smaller side's value in whole percent of the larger's."""
    fairness_pct: int
    """The smaller side must be worth at least this share of the larger."""
    allies: bool
    """Team mates: the fairness rule does not apply."""
    allowed: bool
    refusal: ErrorBody | None = None
    """Why the offer would be refused now (the rules' code, e.g. trade/unfair)."""


class PublicView(BaseModel):
    """A game as players see it (rules `public_view`): no seed, RNG or deck order.

    Fields are the rules' state JSON; those below the top level that the rules shape with
    more structure (`pending`, `offers`, `config`) are plain JSON objects.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int
    rules_version: str
    mode: str
    config: dict[str, Any]
    """Where this game's configuration differs from its named mode (empty normally)."""
    seed_commitment: str
    round: int
    first_seat: int
    current_seat: int
    finished: bool
    winner: int | None
    placement: list[int]
    finish_reason: str
    pending: dict[str, Any] | None
    """The open decision: {"kind", "seat", "deadline", ...} (kind-specific fields)."""
    seats: list[SeatView]
    squares: list[SquareView]
    boosts: list[dict[str, int]]
    pot: int
    offers: list[dict[str, Any]]
    """Open trade offers: {"id", "from", "to", "give_cash", "give_squares", ...}."""
    offers_made: int
    last_card: int | None
    dice: list[int] | None
    third: str | None
    turn_deadline: float | None
    doubles: int
    roll_again: bool
    x_jump: bool
    built: list[int]
    out_count: int


class TableView(OkReply):
    table_id: str
    seq: int
    version: int
    state: PublicView
    net_worth: list[int] = Field(default_factory=list)
    """Every seat's net worth (rules `net_worths`, R20), in seat order."""
    autopilot: list[int] = Field(default_factory=list)
    """Seats a bot plays now for their away (or willing) player."""
    seats: list[SeatSpec]
    legal: list[GameCommand] | None = None
    """The asked seat's legal commands (when the request named a seat)."""
    pending: list[PendingDecision] = Field(default_factory=list)
    """Every decision open now with its legal commands, as a `TableUpdate` carries them, so
    a first watcher needs this one request, not one more per seat."""
    seed_commitment: str
    deadline_at: float | None = None
    """Wall-clock (Unix seconds) of the next deadline, for countdowns."""


class CreatedSeat(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    seat: int
    player_id: str
    bot: bool
    name: str | None
    boosts: dict[int, int]


class TableCreatedEvent(BaseModel):
    """The table's first event: who sits where, the seed commitment, the starting view."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["table_created"] = "table_created"
    mode: str
    rules_version: str
    room_id: str | None
    seats: list[CreatedSeat]
    seed_commitment: str
    """SHA-256 hex of the seed's decimal string."""
    started_at: float
    """Wall-clock (Unix seconds) of game time 0."""
    state: PublicView
    autopilot: bool = True
    """The room's choice: a bot plays a dropped player's seat after the grace period."""
    practice: bool = False
    """A practice game (forked from a replay): it earns no XP."""
    forked_from: str | None = None
    """The table whose position this game continues (its step: `forked_step`)."""
    forked_step: int | None = None


AutopilotReason: TypeAlias = Literal["away", "chosen", "back", "released"]
"""away: the player's connection dropped and the grace period ran out; chosen: the player
switched it on; back: the player returned (or acted); released: the player switched it off."""


class AutopilotChanged(BaseModel):
    """A table event: a bot starts or stops playing a human seat."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["autopilot"] = "autopilot"
    seat: int
    on: bool
    reason: AutopilotReason


class SeedRevealed(BaseModel):
    """The table's last event: the seed, so anyone can replay the game and check the dice."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["seed_revealed"] = "seed_revealed"
    seed: int
    seed_commitment: str


RecordedEvent: TypeAlias = Annotated[
    GameEvent | TableCreatedEvent | SeedRevealed | AutopilotChanged, Field(discriminator="type")
]
"""What a table's event stream holds: rules events and the table's own (creation, autopilot
on and off, the seed reveal)."""


class EventRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    seq: int
    """Per-table event sequence, contiguous from 1."""
    version: int
    """Public state version after this event (a client in sync has seen every lower one)."""
    event: RecordedEvent
    """A rules event, or a table event (`table_created`, `autopilot`, `seed_revealed`)."""
    autopilot: bool = False
    """Caused by a command the autopilot sent for a human seat (marked in logs and replays)."""


class TableEvents(Message):
    """The events of one command (or timeout), stored atomically as one JetStream message.

    A command's events are all stored or none is, so a crash never leaves half a command.
    Message id (`Nats-Msg-Id`) is `event_message_id(table_id, first_seq)`.
    """

    table_id: str
    source: Literal["rules", "table"]
    """"table" for the table's own events (creation, autopilot, seed reveal); "rules"
    otherwise."""
    first_seq: int
    last_seq: int
    version: int
    """Public state version after the last event of this message."""
    events: list[EventRecord]
    command_id: str | None = None
    """The command that caused these events (None for timeouts and table events)."""
    command: GameCommand | None = None
    """The applied rules command as the table parsed it (the seat filled in), e.g.
    {"type": "roll", "seat": 0}, or {"type": "timeout"} for a deadline; None for the
    table's own events."""
    command_at: float | None = None
    """Game time (seconds since the start) the command was applied at."""
    at: float
    """Wall-clock time (Unix seconds) the events were stored."""
    write_id: str | None = None
    """Unique id of the write that stored this message (the table's snapshot names the last
    write it includes, so a reader can tell whether a snapshot matches the stream)."""


DecisionKind: TypeAlias = Literal[
    "roll", "buy", "auction", "payment", "jackpot", "bus", "teleport", "offer"
]
"""What a seat must decide: the rules' pending kind, or "offer" for the receiver of an open
trade offer."""


class PendingDecision(BaseModel):
    """A decision the rules now wait for, with what the seat may send."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seat: int
    kind: DecisionKind
    deadline_at: float | None
    """Wall-clock (Unix seconds) when the table decides for the seat."""
    legal: list[GameCommand]
    """The seat's legal commands now (trade offers are never enumerated)."""


class TableUpdate(Message):
    """What live watchers need after a stored batch, on `table_update(table_id)` (core NATS).

    Published right after the batch is stored in TABLE_EVENTS, so a gateway renders and
    offers the next decisions without asking the table again or running the rules. Core
    NATS can drop a message: a watcher that sees `first_seq` skip past its last sequence
    catches up from the stream and the view request.
    """

    table_id: str
    first_seq: int
    last_seq: int
    version: int
    events: list[EventRecord]
    view: PublicView
    """The public view after the batch."""
    net_worth: list[int] = Field(default_factory=list)
    """Every seat's net worth after the batch (rules `net_worths`, R20), in seat order."""
    autopilot: list[int] = Field(default_factory=list)
    """Seats a bot plays now for their away (or willing) player."""
    pending: list[PendingDecision]
    deadline_at: float | None = None
    """Wall-clock (Unix seconds) of the next deadline, for countdowns."""
    at: float


def event_message_id(table_id: str, first_seq: int) -> str:
    """JetStream deduplication id of the events message starting at `first_seq`."""
    return f"{table_id}:{first_seq}"


class DecisionRequest(Message):
    table_id: str
    seat: int
    player_id: str
    command_subject: str
    """Where to send the chosen command as a `TableCommand`: the table's bots subject."""
    command_id: str
    """Use this command id for the answer, so a re-ask answered twice applies once."""
    version: int
    """Send it back as `expected_version`: a decision for an old state is refused."""
    attempt: int
    """1 for the first ask, then 2, 3, ... when no command came in time."""
    state: PublicView
    legal: list[GameCommand]
    deadline_at: float | None
    """Wall-clock (Unix seconds) when the table decides for the seat (the normal timeout)."""


class SeatResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    seat: int
    player_id: str
    bot: bool
    place: int
    """1 for the winner."""
    survived: bool
    """Still in at the end (XP input)."""
    complete_groups: int
    """Complete colour groups held at the end (XP input)."""
    xp: int | None = None
    """XP earned, when the rules library's progression module computed it."""
    cash: int
    net_worth: int
    properties: int
    buildings: int


class EventsReference(BaseModel):
    """A table's events messages in the TABLE_EVENTS stream, by stream sequence."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    stream: str
    subject: str
    first_stream_seq: int
    """Stream sequence of the table's first events message (its `table_created`)."""
    last_stream_seq: int
    """Stream sequence of its last (the `seed_revealed`)."""


class GameFinished(Message):
    table_id: str
    room_id: str | None
    mode: str
    rules_version: str
    rounds: int
    winner: int | None
    placement: list[int]
    """Seats in finishing order."""
    seats: list[SeatResult]
    seed: int
    """The revealed seed: sha256(str(seed)) equals `seed_commitment`."""
    seed_commitment: str
    events: EventsReference | None = None
    """Where the whole game is stored (its events messages); with the seed, they replay
    to the same events (`opolyx-rules replay`)."""
    replay: list[dict[str, Any]] = Field(default_factory=list)
    """No longer filled: a list that grows with the game pushed long games past NATS's
    payload limit. Read the messages `events` names instead."""
    last_seq: int
    finished_at: float
    practice: bool = False
    """A practice game (forked from a replay): progression pays no XP for it."""


class SeatOut(Message):
    table_id: str
    room_id: str | None
    seat: int
    player_id: str
    reason: Literal["bankrupt", "resigned", "timeout", "out"]
    round: int
    at: float
