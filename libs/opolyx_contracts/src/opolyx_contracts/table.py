"""Messages of the table service (subjects in `opolyx_contracts.subjects`).

- `CreateTable` on `opolyx.table.create` -> `TableCreated` | `ErrorReply`
- `TableCommand` on `table_command(table_id)` -> `CommandAccepted` | `ErrorReply`
- `ViewRequest` on `table_view(table_id)` -> `TableView` | `ErrorReply`
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
from opolyx_contracts.game import GameCommand, GameEvent, SeatView, SquareView

__all__ = [
    "MAX_COMMAND_BYTES",
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
    "SeatResult",
    "SeatSpec",
    "SeedRevealed",
    "TableCommand",
    "TableCreated",
    "TableCreatedEvent",
    "TableEvents",
    "TableUpdate",
    "TableView",
    "ViewRequest",
    "event_message_id",
]

MAX_COMMAND_BYTES = 4096
"""Largest `TableCommand` body a table accepts (the largest real one, a trade offer naming
every property, is well under 1 KB)."""

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
    seats: list[SeatSpec]
    legal: list[GameCommand] | None = None
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


class SeedRevealed(BaseModel):
    """The table's last event: the seed, so anyone can replay the game and check the dice."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["seed_revealed"] = "seed_revealed"
    seed: int
    seed_commitment: str


RecordedEvent: TypeAlias = Annotated[
    GameEvent | TableCreatedEvent | SeedRevealed, Field(discriminator="type")
]
"""What a table's event stream holds: rules events and the table's own two."""


class EventRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    seq: int
    """Per-table event sequence, contiguous from 1."""
    version: int
    """Public state version after this event (a client in sync has seen every lower one)."""
    event: RecordedEvent
    """A rules event, or a table event (`table_created`, `seed_revealed`)."""


class TableEvents(Message):
    """The events of one command (or timeout), stored atomically as one JetStream message.

    A command's events are all stored or none is, so a crash never leaves half a command.
    Message id (`Nats-Msg-Id`) is `event_message_id(table_id, first_seq)`.
    """

    table_id: str
    source: Literal["rules", "table"]
    """"table" for the table's own events (creation, seed reveal); "rules" otherwise."""
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
    """Where to send the chosen command as a `TableCommand`."""
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


class SeatOut(Message):
    table_id: str
    room_id: str | None
    seat: int
    player_id: str
    reason: Literal["bankrupt", "resigned", "timeout", "out"]
    round: int
    at: float
