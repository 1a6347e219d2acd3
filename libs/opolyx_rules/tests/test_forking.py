"""A new game from another's position ("play from here", issue 16)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opolyx_rules import (
    Roll,
    RulesError,
    apply,
    event_from_json,
    event_to_json,
    public_view,
    replay,
    seed_commitment,
    simple_policy,
)
from opolyx_rules.fairness import check_dice
from opolyx_rules.forking import fork_position
from opolyx_rules.state import RollPending
from opolyx_testing.recorded_games import RecordedGame, record_game


@pytest.fixture(scope="module")
def game() -> RecordedGame:
    return record_game("classic", 4, 9)


def _turn_start(game: RecordedGame, turn: int) -> dict[str, Any]:
    """The public view at the start of the `turn`-th turn (counting from 0)."""
    events = [event_from_json(e) for e in game.events]
    starts = [i for i, e in enumerate(game.events) if e["type"] == "turn_started"]
    state = replay(game.initial, events[: starts[turn - 1] + 1])
    view: dict[str, Any] = json.loads(json.dumps(public_view(state)))
    return view


def test_a_fork_keeps_the_position_and_gets_a_seed_of_its_own(game: RecordedGame) -> None:
    position = _turn_start(game, 120)
    forked = fork_position(position, seed=777)
    view = public_view(forked)
    for key in ("round", "current_seat", "seats", "squares", "pot", "placement"):
        assert json.loads(json.dumps(view[key])) == position[key], key
    assert forked.seed_commitment == seed_commitment(777) != position["seed_commitment"]
    assert forked.pending == RollPending(forked.current_seat, forked.config.turn_seconds)


def test_a_forked_game_plays_on_and_its_dice_come_from_its_seed(game: RecordedGame) -> None:
    state = fork_position(_turn_start(game, 200), seed=31337)
    events: list[dict[str, Any]] = []
    now = 0.0
    for _ in range(300):
        if state.finished:
            break
        seat = state.pending.seat if state.pending is not None else state.current_seat
        now += 1.0
        state, produced = apply(state, simple_policy(state, seat), now)
        events.extend(json.loads(json.dumps([event_to_json(e) for e in produced])))
    assert any(e["type"] == "dice_rolled" for e in events)
    # No first-seat draw: the position says who plays.
    assert check_dice(31337, events).ok
    assert not check_dice(31338, events).ok


def test_a_finished_game_or_a_moment_inside_a_turn_cannot_be_forked(game: RecordedGame) -> None:
    final = json.loads(json.dumps(public_view(game.final)))
    with pytest.raises(RulesError, match="over"):
        fork_position(final, seed=1)
    start = game.initial
    rolled, _ = apply(start, Roll(start.current_seat), 1.0)
    inside = json.loads(json.dumps(public_view(rolled)))
    with pytest.raises(RulesError) as raised:
        fork_position(inside, seed=1)
    assert raised.value.code == "setup/invalid"


def test_an_impossible_or_malformed_position_is_refused(game: RecordedGame) -> None:
    position = _turn_start(game, 10)
    position["seats"][1]["cash"] = -5
    with pytest.raises(RulesError, match="negative cash"):
        fork_position(position, seed=1)
    broken = _turn_start(game, 10)
    del broken["squares"]
    with pytest.raises(RulesError, match="not a game position"):
        fork_position(broken, seed=1)
    other_major = _turn_start(game, 10) | {"rules_version": "9.0"}
    with pytest.raises(RulesError, match="rules version"):
        fork_position(other_major, seed=1)


def test_steps_are_turn_starts_and_the_end(game: RecordedGame) -> None:
    from opolyx_rules.forking import position_at, step_bounds

    events = [event_from_json(e) for e in game.events]
    bounds = step_bounds(events, finished=True)
    turns = sum(1 for e in game.events if e["type"] == "turn_started")
    assert len(bounds) == turns + 2 and bounds[0] == 0 and bounds[-1] == len(events)
    assert position_at(game.initial, events, 0, finished=True) == game.initial
    assert position_at(game.initial, events, len(bounds) - 1, finished=True).finished
    middle = position_at(game.initial, events, 5, finished=True)
    assert isinstance(middle.pending, RollPending) and middle.dice is None
    with pytest.raises(RulesError, match="not"):
        position_at(game.initial, events, len(bounds), finished=True)
