"""The typed game contract: generated from the rules, and faithful to their JSON."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import opolyx_rules
import pytest
from opolyx_contracts import ContractError, decode, game
from opolyx_contracts.errors import BAD_REQUEST
from opolyx_contracts.generate_game import GAME_MODULE, render
from opolyx_contracts.table import (
    CreatedSeat,
    DecisionRequest,
    EventRecord,
    PendingDecision,
    PublicView,
    SeatSpec,
    SeedRevealed,
    TableCommand,
    TableCreatedEvent,
    TableEvents,
    TableUpdate,
    TableView,
)
from opolyx_rules.commands import COMMAND_TYPES, Command, OfferTrade, Timeout, command_type
from opolyx_rules.events import EVENT_TYPES, Event, JumpSkipped, event_type
from opolyx_rules.simulate import play_game
from pydantic import TypeAdapter, ValidationError

COMMANDS: TypeAdapter[Any] = TypeAdapter(game.GameCommand)
EVENTS: TypeAdapter[Any] = TypeAdapter(game.GameEvent)


def test_game_module_is_what_the_generator_writes_from_the_rules() -> None:
    assert GAME_MODULE.read_text() == render(), (
        "game.py is out of date: run python -m opolyx_contracts.generate_game"
    )


def test_there_is_one_model_per_rules_command_and_event() -> None:
    assert set(game.COMMAND_MODELS) == set(COMMAND_TYPES)
    assert set(game.EVENT_MODELS) == set(EVENT_TYPES)


def _random_games() -> Iterator[tuple[opolyx_rules.State, Command, list[Event]]]:
    """Games of every mode played by random legal choices, random offers and timeouts."""
    for mode in opolyx_rules.MODES:
        for seed in range(3):
            rng = random.Random(seed)
            state = opolyx_rules.new_game(mode, 4, seed)
            now = 0.0
            for _ in range(2500):
                if state.finished:
                    break
                seat = rng.choice(opolyx_rules.awaiting(state))
                legal = opolyx_rules.legal_commands(state, seat)
                calm = [c for c in legal if command_type(c) not in ("resign", "bankrupt")]
                roll = rng.random()
                command: Command
                if roll < 0.04:
                    now = max(now, opolyx_rules.next_deadline(state) or now)
                    command = Timeout()
                elif roll < 0.10 and opolyx_rules.can_offer(state, seat):
                    others = [s for s in range(4) if s != seat and not state.seats[s].out]
                    if not others:
                        continue
                    mine = tuple(p.square for p in state.props if p.owner == seat)[:1]
                    command = OfferTrade(seat, rng.choice(others), 10, mine, 0, ())
                else:
                    command = rng.choice(calm or legal)
                now += 1.0
                try:
                    new_state, events = opolyx_rules.apply(state, command, now)
                except opolyx_rules.RulesError:
                    continue
                yield state, command, events
                state = new_state


@pytest.fixture(scope="module")
def played() -> tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]]:
    """One real command and event of every kind, and public views seen along the way."""
    commands: dict[str, Command] = {}
    events: dict[str, Event] = {}
    views: list[dict[str, Any]] = []
    for index, (state, command, produced) in enumerate(_random_games()):
        commands.setdefault(command_type(command), command)
        for event in produced:
            events.setdefault(event_type(event), event)
        if index % 200 == 0:
            views.append(opolyx_rules.public_view(state))
    # The simple policy declares bankruptcy and meets Fortuna's teleports.
    for mode in ("classic", "fortuna", "speed"):
        result = play_game(mode, 4, 3, keep_events=True)
        for event in result.events:
            events.setdefault(event_type(event), event)
    commands.setdefault("bankrupt", opolyx_rules.command_from_json({"type": "bankrupt", "seat": 0}))
    commands.setdefault("teleport", opolyx_rules.command_from_json({"type": "teleport", "seat": 1,
                                                                    "square": 5}))  # fmt: skip
    # Speed's X with no property left to jump to: too rare for a few random games.
    events.setdefault("jump_skipped", JumpSkipped(2))
    return commands, events, views


def test_every_command_kind_round_trips_through_its_model(
    played: tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]],
) -> None:
    commands, _, _ = played
    assert set(commands) == set(COMMAND_TYPES)
    for kind, command in commands.items():
        wire = opolyx_rules.command_to_json(command)
        model = COMMANDS.validate_json(json.dumps(wire))
        assert type(model) is game.COMMAND_MODELS[kind]
        assert model == COMMANDS.validate_python(wire)
        assert json.loads(model.model_dump_json()) == wire, kind
        assert opolyx_rules.command_from_json(model.model_dump(mode="json")) == command


def test_every_event_kind_round_trips_through_its_model(
    played: tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]],
) -> None:
    _, events, _ = played
    assert set(events) == set(EVENT_TYPES)
    for kind, event in events.items():
        wire = opolyx_rules.event_to_json(event)
        model = EVENTS.validate_json(json.dumps(wire))
        assert type(model) is game.EVENT_MODELS[kind]
        assert json.loads(model.model_dump_json()) == wire, kind
        assert opolyx_rules.event_from_json(model.model_dump(mode="json")) == event
        record = EventRecord.model_validate_json(
            json.dumps({"seq": 1, "version": 1, "event": wire})
        )
        assert record.event == model


def test_the_public_view_model_has_every_field_of_the_rules_view(
    played: tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]],
) -> None:
    _, _, views = played
    assert views
    for view in views:
        assert set(PublicView.model_fields) == set(view), "PublicView drifted from the rules"
        model = PublicView.model_validate_json(json.dumps(view))
        assert json.loads(model.model_dump_json()) == view


def test_the_wire_form_of_a_table_command_is_the_rules_json() -> None:
    body = (
        b'{"v":1,"command_id":"c","player_id":"p","command":{"type":"build","seat":0,"square":5}}'
    )
    request = decode(TableCommand, body)
    assert request.command == game.Build(seat=0, square=5)
    assert json.loads(request.model_dump_json())["command"] == {
        "type": "build",
        "seat": 0,
        "square": 5,
    }
    # The seat may be left out: the table fills in the sender's seat.
    assert decode(TableCommand, {"command_id": "c", "player_id": "p", "command": {"type": "roll"}})


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ({"type": "roll", "padding": "x" * 100}, "padding"),
        ({"type": "fly"}, "fly"),
        ({"seat": 0}, "type"),
        ({"type": "build", "seat": 0}, "square"),
        ({"type": "build", "seat": 0, "square": "5"}, "square"),
        ({"type": "roll", "seat": True}, "seat"),
        ({"type": "jackpot", "seat": 0, "numbers": list(range(100))}, "numbers"),
        ({"type": "accept", "seat": 0, "offer": "o" * 1000}, "offer"),
    ],
)
def test_a_bad_command_is_refused_with_an_error_naming_what_is_wrong(
    command: dict[str, Any], named: str
) -> None:
    body = json.dumps({"v": 1, "command_id": "c", "player_id": "p", "command": command})
    with pytest.raises(ContractError) as caught:
        decode(TableCommand, body)
    assert caught.value.code == BAD_REQUEST
    assert named in caught.value.message


def test_an_unknown_event_type_is_refused() -> None:
    with pytest.raises(ValidationError):
        EventRecord.model_validate({"seq": 1, "version": 1, "event": {"type": "money_printed"}})
    with pytest.raises(ValidationError):
        EventRecord.model_validate({"seq": 1, "version": 1, "event": {"type": "transfer"}})


def test_messages_carrying_game_values_round_trip(
    played: tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]],
) -> None:
    commands, events, views = played
    request = DecisionRequest.model_validate(
        {
            "table_id": "t",
            "seat": 0,
            "player_id": "bot",
            "command_subject": "opolyx.table.1.t.cmd",
            "command_id": "bot-t-1-0-1",
            "version": 1,
            "attempt": 1,
            "state": views[0],
            "legal": [opolyx_rules.command_to_json(c) for c in commands.values()],
            "deadline_at": 12.5,
        }
    )
    assert DecisionRequest.model_validate_json(request.model_dump_json()) == request
    batch = TableEvents.model_validate(
        {
            "table_id": "t",
            "source": "rules",
            "first_seq": 1,
            "last_seq": len(events),
            "version": len(events),
            "events": [
                {"seq": i + 1, "version": i + 1, "event": opolyx_rules.event_to_json(e)}
                for i, e in enumerate(events.values())
            ],
            "command_id": "c",
            "command": {"type": "roll", "seat": 0},
            "command_at": 3.0,
            "at": 1.0,
        }
    )
    assert TableEvents.model_validate_json(batch.model_dump_json()) == batch


def test_the_table_s_own_messages_round_trip(
    played: tuple[dict[str, Command], dict[str, Event], list[dict[str, Any]]],
) -> None:
    commands, _, views = played
    seats = [SeatSpec(player_id="a"), SeatSpec(player_id="b", bot=True, boosts={1: 10})]
    created = TableCreatedEvent(
        mode="classic",
        rules_version="1.0",
        room_id=None,
        seats=[
            CreatedSeat(seat=i, player_id=s.player_id, bot=s.bot, name=s.name, boosts=s.boosts)
            for i, s in enumerate(seats)
        ],
        seed_commitment="c",
        started_at=1.0,
        state=PublicView.model_validate(views[0]),
    )
    revealed = SeedRevealed(seed=5, seed_commitment="c")
    for event in (created, revealed):
        record = EventRecord(seq=1, version=1, event=event)
        assert EventRecord.model_validate_json(record.model_dump_json()) == record
    view = TableView(
        table_id="t",
        seq=3,
        version=3,
        state=PublicView.model_validate(views[-1]),
        seats=seats,
        legal=[
            COMMANDS.validate_python(opolyx_rules.command_to_json(c)) for c in commands.values()
        ],
        seed_commitment="c",
        deadline_at=None,
    )
    assert TableView.model_validate_json(view.model_dump_json()) == view
    update = TableUpdate(
        table_id="t", first_seq=1, last_seq=1, version=1,
        events=[EventRecord(seq=1, version=1, event=revealed)],
        view=view.state, at=2.0,
        pending=[PendingDecision(seat=0, kind="roll", deadline_at=None, legal=view.legal or [])],
    )  # fmt: skip
    assert TableUpdate.model_validate_json(update.model_dump_json()) == update
