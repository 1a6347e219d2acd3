"""The fast paths of the JSON forms and net worths give what the plain definitions give."""

from __future__ import annotations

from dataclasses import replace

import pytest
from opolyx_rules import (
    MODES,
    SQUARES,
    apply,
    awaiting,
    get_mode,
    net_worth,
    net_worths,
    new_game,
    public_view,
    simple_policy,
    squares_to_json,
    state_from_json,
    state_to_json,
)
from opolyx_rules.events import EVENT_TYPES, event_from_json, event_to_json
from opolyx_rules.state import State


def played(mode: str, seed: int, steps: int = 400) -> list[State]:
    state = new_game(mode, 4, seed)
    states = [state]
    for step in range(steps):
        if state.finished:
            break
        seat = awaiting(state)[0]
        state, _ = apply(state, simple_policy(state, seat), float(step + 1))
        states.append(state)
    return states


@pytest.mark.parametrize("mode", sorted(MODES))
def test_net_worths_are_each_seats_net_worth(mode: str) -> None:
    states = played(mode, 11)
    assert any(p.buildings for p in states[-1].props) or any(
        p.owner is not None for p in states[-1].props
    ), "the game never got to owning anything"
    for state in states:
        # R20 written out per seat: cash, the price (half when mortgaged), buildings at cost.
        expected = tuple(
            seat.cash
            + sum(
                (SQUARES[p.square].mortgage_value if p.mortgaged else SQUARES[p.square].price)
                + p.buildings * SQUARES[p.square].building_cost
                for p in state.props
                if p.owner == index
            )
            for index, seat in enumerate(state.seats)
        )
        assert net_worths(state) == expected
        assert [net_worth(state, s) for s in range(len(state.seats))] == list(expected)


def test_the_squares_are_every_property_as_its_fields() -> None:
    for state in played("classic", 5):
        assert squares_to_json(state.props) == [p._asdict() for p in state.props]
        assert public_view(state)["squares"] == squares_to_json(state.props)
        assert [dict(s) for s in state_to_json(state)["seats"]] == [
            s._asdict() for s in state.seats
        ]


def test_a_squares_part_given_is_put_in_place_and_nothing_else_changes() -> None:
    state = played("classic", 7, 120)[-1]
    given = object()
    view = public_view(state, squares=given)
    assert view["squares"] is given
    assert list(view) == list(public_view(state)), "same keys, same order"
    assert {k: v for k, v in view.items() if k != "squares"} == {
        k: v for k, v in public_view(state).items() if k != "squares"
    }
    stored = state_to_json(state, squares=given)
    assert stored["squares"] is given and "rng" in stored


def test_a_changed_configuration_is_written_whether_or_not_it_is_a_modes_own_object() -> None:
    standard = new_game("classic", 2, 3)
    assert state_to_json(standard)["config"] == {}
    copied = new_game(replace(get_mode("classic")), 2, 3)
    assert copied.config is not get_mode("classic")
    assert state_to_json(copied)["config"] == {}
    custom = new_game(replace(get_mode("classic"), starting_cash=4000), 2, 3)
    assert state_to_json(custom)["config"] == {"starting_cash": 4000}
    assert state_from_json(state_to_json(custom)).config == custom.config
    # The answer is a new dict each time: changing one never changes the next.
    state_to_json(custom)["config"]["starting_cash"] = 1
    assert state_to_json(custom)["config"] == {"starting_cash": 4000}


def _plain_reference(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain_reference(v) for v in value]
    return value


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_event_is_written_as_its_type_and_fields(mode: str) -> None:
    """The generated writers give what a loop over the fields gives, key order too."""
    state = new_game(mode, 4, 13)
    kinds: set[str] = set()
    for step in range(600):
        if state.finished:
            break
        seat = awaiting(state)[0]
        state, events = apply(state, simple_policy(state, seat), float(step + 1))
        for event in events:
            written = event_to_json(event)
            expected = {"type": EVENT_TYPES_BY_CLASS[type(event)]} | {
                key: _plain_reference(value)
                for key, value in zip(event._fields, event, strict=True)
            }
            assert written == expected and list(written) == list(expected)
            assert event_from_json(written) == event
            kinds.add(written["type"])
    assert len(kinds) >= 8, sorted(kinds)


def test_an_event_with_nested_tuples_is_written_with_lists() -> None:
    for cls in EVENT_TYPES.values():
        written = event_to_json(cls(*(((1, (2, 3)),) for _ in cls._fields)))
        assert all(written[f] == [[1, [2, 3]]] for f in cls._fields)


EVENT_TYPES_BY_CLASS = {cls: name for name, cls in EVENT_TYPES.items()}
