"""Messages of the table service (subjects in `opolyx_contracts.subjects`).

- `CreateTable` on `opolyx.table.create` -> `TableCreated` | `ErrorReply`
- `TableCommand` on `table_command(table_id)` -> `CommandAccepted` | `ErrorReply`
- `ViewRequest` on `table_view(table_id)` -> `TableView` | `ErrorReply`
- `TableEvents` on `table_events(table_id)` (stream TABLE_EVENTS): the events of one command
  in one message, message id `"<table_id>:<first_seq>"`, `seq` contiguous from 1 per table
- `DecisionRequest` on `opolyx.bots.decide` (queue group `bots`)
- `GameFinished` on `opolyx.game.finished`, `SeatOut` on `opolyx.game.seat_out` (stream GAMES)

Rules commands and events travel as the rules library's JSON (`{"type": ..., ...}`).
Nothing sent here while a game runs contains its seed, RNG state or deck order.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply

__all__ = [
    "CommandAccepted",
    "CreateTable",
    "DecisionRequest",
    "EventRecord",
    "GameFinished",
    "SeatOut",
    "SeatResult",
    "SeatSpec",
    "TableCommand",
    "TableCreated",
    "PendingDecision",
    "TableEvents",
    "TableUpdate",
    "TableView",
    "ViewRequest",
    "event_message_id",
]

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
    command: dict[str, Any]
    """Rules command JSON, e.g. {"type": "roll"}; "seat" defaults to the player's seat."""
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


class TableView(OkReply):
    table_id: str
    seq: int
    version: int
    state: dict[str, Any]
    """The public view (rules `public_view`): no seed, RNG or deck order."""
    seats: list[SeatSpec]
    legal: list[dict[str, Any]] | None = None
    seed_commitment: str
    deadline_at: float | None = None
    """Wall-clock (Unix seconds) of the next deadline, for countdowns."""


class EventRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    seq: int
    """Per-table event sequence, contiguous from 1."""
    version: int
    """Public state version after this event (a client in sync has seen every lower one)."""
    event: dict[str, Any]
    """Rules event JSON, or a table event (`table_created`, `seed_revealed`)."""


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
    command: dict[str, Any] | None = None
    """The applied rules command with its game time `at` (seconds since the start), e.g.
    {"seat": 0, "type": "roll", "at": 12.5}, or {"type": "timeout", "at": 75.0}."""
    at: float
    """Wall-clock time (Unix seconds) the events were stored."""
    write_id: str | None = None
    """Unique id of the write that stored this message (the table's snapshot names the last
    write it includes, so a reader can tell whether a snapshot matches the stream)."""


class PendingDecision(BaseModel):
    """A decision the rules now wait for, with what the seat may send."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seat: int
    kind: str
    """The rules' decision kind (what `awaiting` says the seat must decide)."""
    deadline_at: float | None
    """Wall-clock (Unix seconds) when the table decides for the seat."""
    legal: list[dict[str, Any]]
    """The seat's legal commands now (rules command JSON)."""


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
    view: dict[str, Any]
    """The public view after the batch (rules `public_view`)."""
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
    state: dict[str, Any]
    legal: list[dict[str, Any]]
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
    replay: list[dict[str, Any]]
    """`opolyx-rules replay` scenario lines: a setup line, every applied command with its
    game time `at`, and a final wait; replaying them yields the game's events."""
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
