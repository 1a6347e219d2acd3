"""The contract messages a table sends, built from its state (no I/O).

Built by validating the rules' JSON forms in one pydantic-core call per message (measured:
faster than `model_construct`, which runs in Python); parts already built (legal commands,
stored records) are passed as instances and not validated again. The messages of the
command path (`TableEvents`, `TableUpdate`, `DecisionRequest`, `PendingDecision`) hold only
the table's own typed values: they are written by `encode_fields`, which takes the model's
fields by name and writes them in its order in one orjson call.

Serialised once: after a change, the public view (about 4 KB) is turned into JSON once and
copied into the `TableUpdate` and every bot `DecisionRequest` as an already-encoded part.
Within the view, the squares (most of its size and of the time to build it) are serialised
again only for properties not seen lately (about one command in ten changes them), and each
legal command's JSON is kept by value (`view_json`, `legal_json`).

A rules batch's event records are serialised once too (`rules_batch`), from the rules' own
JSON forms: the same bytes go into the stored events message and every `TableUpdate` that
carries them, and the typed `TableEvents` is parsed from them only when something reads the
events (an announcement). Receivers parse the whole message with the model; tests check
these bytes are byte for byte what the model itself writes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import opolyx_rules
import orjson
from opolyx_contracts import CONTRACT_VERSION
from opolyx_contracts.game import GameCommand
from opolyx_contracts.subjects import (
    table_bot_command,
    table_command,
    table_events,
    table_view,
)
from opolyx_contracts.table import (
    CreatedSeat,
    DecisionRequest,
    EventRecord,
    PendingDecision,
    PublicView,
    RecordedEvent,
    SeedRevealed,
    TableCreated,
    TableCreatedEvent,
    TableEvents,
    TableUpdate,
    TableView,
)
from opolyx_rules import PropState, State
from pydantic import BaseModel, TypeAdapter

from opolyx_table.core import Decision, PlannedBatch, decisions
from opolyx_table.table import Table

__all__ = [
    "Change",
    "StoredEvents",
    "created_event",
    "created_reply",
    "decision_request",
    "encode",
    "encode_fields",
    "events_message",
    "legal_json",
    "net_worths",
    "props_parts",
    "public_view",
    "rules_batch",
    "seed_revealed",
    "table_props_parts",
    "table_update",
    "view_json",
    "view_reply",
]


_LEGAL: TypeAdapter[list[GameCommand]] = TypeAdapter(list[GameCommand])
_RECORDS: TypeAdapter[list[EventRecord]] = TypeAdapter(list[EventRecord])
_bot_subject = functools.lru_cache(maxsize=16384)(table_bot_command)
"""A table's bots subject (hashing the id for its partition on every ask cost 1.5%)."""


def encode(message: BaseModel) -> bytes:
    """JSON bytes straight from pydantic-core (no str round trip)."""
    return message.__pydantic_serializer__.to_json(message)


@functools.cache
def _field_names(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(cls.model_fields)


def encode_fields(cls: type[BaseModel], **fields: Any) -> bytes:
    """The JSON of a `cls` message with these fields, written by orjson in one call: for the
    messages of the command path, whose values the table made itself (typed already).

    The model stays the message's shape: every one of its fields must be given, by its
    name, and no other (`TypeError` otherwise), and they are written in the model's order.
    Values are JSON values (the table's own strings, numbers, lists) or
    `orjson.Fragment`s, parts encoded before (the view, legal commands, event records),
    copied in as they are. Measured against pydantic's serializer on a model set without
    validation, with the encoded parts spliced in after: a `TableUpdate` 3.8 -> 1.7 us, a
    `PendingDecision` 2.5 -> 0.3 us. Tests parse every message built here with its model.
    """
    names = _field_names(cls)
    try:
        ordered = {name: fields[name] for name in names}
    except KeyError:
        ordered = {}
    if len(ordered) != len(fields) or len(ordered) != len(names):
        unknown = sorted(set(fields) - set(names))
        missing = sorted(set(names) - set(fields))
        raise TypeError(f"{cls.__name__}: unknown fields {unknown}, missing fields {missing}")
    return orjson.dumps(ordered)


class PropsParts(NamedTuple):
    """What a table's messages need from its properties alone, kept by the `props` tuple's
    value (states are immutable: one hash of the tuple, 0.7 us, against ~20 us to build
    and serialise the squares again; about one command in ten changes `props`)."""

    squares: orjson.Fragment
    """`squares_to_json(props)`, serialised: the view's and the snapshot's squares."""
    property_values: tuple[int, ...]
    """`property_values_of(props)`: each seat's net worth beyond its cash."""


_PROPS_PARTS: dict[tuple[PropState, ...], PropsParts] = {}
_PROPS_PARTS_LIMIT = 1024
"""Entries kept, oldest dropped first (~2.3 KB each: a few MB at most, shared by every
table whose properties are alike, e.g. all the new games; held per table, they cost each
idle table as much)."""


def props_parts(props: tuple[PropState, ...]) -> PropsParts:
    parts = _PROPS_PARTS.get(props)
    if parts is None:
        if len(_PROPS_PARTS) >= _PROPS_PARTS_LIMIT:
            del _PROPS_PARTS[next(iter(_PROPS_PARTS))]
        parts = _PROPS_PARTS[props] = PropsParts(
            orjson.Fragment(orjson.dumps(opolyx_rules.squares_to_json(props))),
            opolyx_rules.property_values_of(props),
        )
    return parts


def table_props_parts(table: Table) -> PropsParts:
    """`props_parts` of the table's state, kept on the table while its `props` is the same
    tuple (`Table.kept_props`)."""
    props = table.state.props
    kept = table.kept_props
    if kept is not None and kept[0] is props:
        parts: PropsParts = kept[1]
        return parts
    parts = props_parts(props)
    table.kept_props = (props, parts)
    return parts


def view_json(state: State, parts: PropsParts | None = None) -> bytes:
    """`orjson.dumps(opolyx_rules.public_view(state))`, with the squares part kept
    (`parts`: `props_parts(state.props)`, when the caller has it)."""
    squares = (props_parts(state.props) if parts is None else parts).squares
    return orjson.dumps(opolyx_rules.public_view(state, squares=squares))


def net_worths(state: State, parts: PropsParts | None = None) -> list[int]:
    """`opolyx_rules.net_worths(state)`, with the properties' part kept."""
    values = (props_parts(state.props) if parts is None else parts).property_values
    return list(opolyx_rules.net_worths(state, property_values=values))


_COMMAND_JSON: dict[tuple[Any, ...], bytes] = {}
_COMMAND_JSON_LIMIT = 8192
"""Distinct legal commands kept (a few hundred in a game: bids and squares vary)."""


def legal_json(legal: Sequence[opolyx_rules.Command]) -> bytes:
    """The JSON array of `command_to_json` of each command, each command's JSON kept by
    value (keyed by its type and fields: commands of different types can be equal tuples)."""
    parts = []
    for command in legal:
        key = (type(command), *command)
        part = _COMMAND_JSON.get(key)
        if part is None:
            if len(_COMMAND_JSON) >= _COMMAND_JSON_LIMIT:
                _COMMAND_JSON.clear()
            part = _COMMAND_JSON[key] = orjson.dumps(opolyx_rules.command_to_json(command))
        parts.append(part)
    return b"[" + b",".join(parts) + b"]"


def public_view(state: State) -> PublicView:
    return PublicView.model_validate(opolyx_rules.public_view(state))


def events_message(
    table: Table,
    first_seq: int,
    events: Sequence[dict[str, Any] | RecordedEvent],
    batch: PlannedBatch | None,
    write_id: str,
) -> TableEvents:
    """The stored form of one batch: rules events (`batch`) or the table's own events."""
    last = first_seq + len(events) - 1
    return TableEvents.model_validate(
        {
            "table_id": table.table_id,
            "source": "table" if batch is None else "rules",
            "first_seq": first_seq,
            "last_seq": last,
            "version": last,
            "events": [
                {"seq": first_seq + i, "version": first_seq + i, "event": event}
                for i, event in enumerate(events)
            ]
            if batch is None or not batch.autopilot
            else [
                {"seq": first_seq + i, "version": first_seq + i, "event": event, "autopilot": True}
                for i, event in enumerate(events)
            ],
            "command_id": None if batch is None else batch.command_id,
            "command": None if batch is None else batch.command,
            "command_at": None if batch is None else batch.at,
            "at": time.time(),
            "write_id": write_id,
        }
    )


def rules_events(batch: PlannedBatch) -> list[dict[str, Any]]:
    return [opolyx_rules.event_to_json(event) for event in batch.events]


class StoredEvents:
    """One events message as stored: its bytes, its records' JSON (spliced into the
    `TableUpdate`s) and the typed message, parsed from the bytes only when asked for."""

    __slots__ = ("_message", "body", "first_seq", "last_seq", "records", "version", "write_id")

    def __init__(
        self,
        first_seq: int,
        last_seq: int,
        write_id: str,
        body: bytes,
        records: bytes,
        message: TableEvents | None = None,
    ) -> None:
        self.first_seq = first_seq
        self.last_seq = last_seq
        self.version = last_seq
        self.write_id = write_id
        self.body = body
        """The `TableEvents` JSON, as written to the stream."""
        self.records = records
        """The JSON array of its `EventRecord`s."""
        self._message = message

    @classmethod
    def of(cls, message: TableEvents) -> StoredEvents:
        """A message built as a model (the table's own events: not the hot path)."""
        return cls(
            message.first_seq,
            message.last_seq,
            message.write_id or "",
            encode(message),
            _RECORDS.dump_json(message.events),
            message,
        )

    @property
    def message(self) -> TableEvents:
        if self._message is None:
            self._message = TableEvents.model_validate_json(self.body)
        return self._message


def rules_batch(table: Table, first_seq: int, batch: PlannedBatch, write_id: str) -> StoredEvents:
    """The stored form of a rules batch, serialised once: the envelope is written from the
    `TableEvents` model's fields (`encode_fields`); its records are the rules' event JSON
    with their sequence numbers (tested equal to `events_message`'s validated model, field
    for field)."""
    last = first_seq + len(batch.events) - 1
    to_json, by_autopilot = opolyx_rules.event_to_json, batch.autopilot
    records = orjson.dumps(
        [
            {
                "seq": first_seq + i,
                "version": first_seq + i,
                "event": to_json(event),
                "autopilot": by_autopilot,
            }
            for i, event in enumerate(batch.events)
        ]
    )
    body = encode_fields(
        TableEvents,
        v=CONTRACT_VERSION,
        table_id=table.table_id,
        source="rules",
        first_seq=first_seq,
        last_seq=last,
        version=last,
        events=orjson.Fragment(records),
        command_id=batch.command_id,
        command=orjson.Fragment(encode(batch.command)),
        command_at=batch.at,
        at=time.time(),
        write_id=write_id,
    )
    return StoredEvents(first_seq, last, write_id, body, records)


class Change:
    """What watchers and bots are told after a job stored batches: computed once, shared."""

    def __init__(self, table: Table, decisions: list[Decision]) -> None:
        parts = table_props_parts(table)
        self.view_json = view_json(table.state, parts)
        self.net_worth = net_worths(table.state, parts)
        self.legal_json = {d.seat: legal_json(d.legal) for d in decisions}
        self.pending_json = (
            b"["
            + b",".join(
                encode_fields(
                    PendingDecision,
                    seat=d.seat,
                    kind=d.kind,
                    deadline_at=None if d.deadline is None else table.wall_time(d.deadline),
                    legal=orjson.Fragment(self.legal_json[d.seat]),
                )
                for d in decisions
            )
            + b"]"
        )
        deadline = opolyx_rules.next_deadline(table.state)
        self.deadline_at = None if deadline is None else table.wall_time(deadline)


def table_update(table: Table, stored: list[StoredEvents], change: Change) -> bytes:
    """The encoded `TableUpdate` (view, pending decisions and the stored records spliced
    in, see the module docstring)."""
    if len(stored) == 1:
        events = stored[0].records
    else:
        events = b"[" + b",".join(s.records[1:-1] for s in stored if s.records != b"[]") + b"]"
    return encode_fields(
        TableUpdate,
        v=CONTRACT_VERSION,
        table_id=table.table_id,
        first_seq=stored[0].first_seq,
        last_seq=stored[-1].last_seq,
        version=stored[-1].version,
        events=orjson.Fragment(events),
        view=orjson.Fragment(change.view_json),
        net_worth=change.net_worth,
        autopilot=sorted(table.autopilot),
        pending=orjson.Fragment(change.pending_json),
        deadline_at=change.deadline_at,
        at=time.time(),
    )


def decision_request(
    table: Table, seat: int, attempt: int, change: Change, partitions: int
) -> bytes:
    """The encoded `DecisionRequest` (view and legal commands spliced in)."""
    return encode_fields(
        DecisionRequest,
        v=CONTRACT_VERSION,
        table_id=table.table_id,
        seat=seat,
        player_id=table.seats[seat].player_id,
        command_subject=_bot_subject(table.table_id, partitions),
        command_id=f"bot-{table.table_id}-{table.version}-{seat}-{attempt}",
        version=table.version,
        attempt=attempt,
        state=orjson.Fragment(change.view_json),
        legal=orjson.Fragment(change.legal_json.get(seat, b"[]")),
        deadline_at=change.deadline_at,
    )


def created_event(table: Table) -> TableCreatedEvent:
    return TableCreatedEvent(
        mode=table.mode,
        rules_version=table.rules_version,
        room_id=table.room_id,
        seats=[
            CreatedSeat(seat=i, player_id=s.player_id, bot=s.bot, name=s.name, boosts=s.boosts)
            for i, s in enumerate(table.seats)
        ],
        seed_commitment=table.seed_commitment,
        started_at=table.started_at,
        state=public_view(table.state),
        autopilot=table.autopilot_on_drop,
        practice=table.fork is not None,
        forked_from=None if table.fork is None else table.fork.table_id,
        forked_step=None if table.fork is None else table.fork.step,
    )


def seed_revealed(table: Table) -> SeedRevealed:
    return SeedRevealed(seed=table.seed, seed_commitment=table.seed_commitment)


def created_reply(table: Table, partitions: int) -> TableCreated:
    return TableCreated(
        table_id=table.table_id,
        partition=table.partition,
        command_subject=table_command(table.table_id, partitions),
        view_subject=table_view(table.table_id, partitions),
        events_subject=table_events(table.table_id),
        seed_commitment=table.seed_commitment,
        seq=table.seq,
    )


def view_reply(table: Table, seat: int | None) -> TableView:
    legal = None
    if seat is not None:
        moves = [] if table.finished else opolyx_rules.legal_commands(table.state, seat)
        legal = _LEGAL.validate_python([opolyx_rules.command_to_json(c) for c in moves])
    deadline = None if table.finished else opolyx_rules.next_deadline(table.state)
    pending = [
        PendingDecision(
            seat=d.seat,
            kind=d.kind,
            deadline_at=None if d.deadline is None else table.wall_time(d.deadline),
            legal=_LEGAL.validate_python([opolyx_rules.command_to_json(c) for c in d.legal]),
        )
        for d in ([] if table.finished else decisions(table.state))
    ]
    return TableView(
        table_id=table.table_id,
        seq=table.seq,
        version=table.version,
        state=public_view(table.state),
        net_worth=list(opolyx_rules.net_worths(table.state)),
        autopilot=sorted(table.autopilot),
        seats=table.seats,
        legal=legal,
        pending=pending,
        seed_commitment=table.seed_commitment,
        deadline_at=None if deadline is None else table.wall_time(deadline),
    )
