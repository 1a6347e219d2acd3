"""The library's shape (issue 15): an immutable state, decisions compared by type, modes
as feature flags that each switch one rule, and the one simple policy."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from opolyx_rules import (
    MODES,
    BusPending,
    Command,
    Feature,
    JackpotPending,
    OfferTrade,
    Pending,
    RejectOffer,
    Roll,
    apply,
    awaiting,
    legal_commands,
    new_game,
    simple_policy,
    state_from_json,
    state_to_json,
    with_fields,
)
from opolyx_rules.events import POT, PaymentRequired, Transfer
from opolyx_rules.simulate import play_game
from opolyx_rules.state import Script, State
from story import Table, game, owned, transfers


def test_a_state_cannot_be_changed_and_apply_leaves_its_input_alone() -> None:
    state = new_game("classic", 2, 1, first_seat=0)
    with pytest.raises(FrozenInstanceError):
        state.round = 5  # type: ignore[misc]
    before = state_to_json(state)
    after, _ = apply(state, Roll(0), 1.0)
    assert state_to_json(state) == before
    assert after.seats[0].position != 0 and state.seats[0].position == 0
    with pytest.raises(TypeError):
        state.boosts[0][1] = 33  # type: ignore[index]


def test_with_fields_makes_a_changed_copy() -> None:
    state = new_game("classic", 2, 1)
    moved = with_fields(state, round=7)
    assert moved.round == 7 and state.round == 1
    with pytest.raises(AttributeError):
        with_fields(state, rounds=7)


def test_decisions_with_equal_fields_but_different_kinds_differ() -> None:
    # Typed as any decision: as two unrelated classes mypy takes the check as always true,
    # and what it tests is that compare_by_type makes it so (plain NamedTuples with equal
    # fields are equal tuples).
    bus: Pending = BusPending(0, 5.0)
    assert bus != JackpotPending(0, 5.0)
    assert BusPending(0, 5.0) == BusPending(0, 5.0)


def test_a_feature_flag_switches_its_one_rule() -> None:
    """R18.1 alone: Classic plus Lucky Eight pays 888 on a white total of 8, but keeps
    Classic's taxes (no Fortune Pot) and the flag survives a JSON round trip."""
    lucky = replace(MODES["classic"], features=Feature.LUCKY_EIGHT)
    state = new_game(lucky, 2, 1, first_seat=0, script=Script(dice=((1, 3), (3, 5))))
    state, events = apply(state, Roll(0), 1.0)  # 0 -> 4: income tax
    assert transfers([*events]) == []
    assert [e.creditors for e in events if isinstance(e, PaymentRequired)] == [((-1, 2000),)]
    loaded = state_from_json(state_to_json(state))
    assert loaded.config.has(Feature.LUCKY_EIGHT)
    assert not loaded.config.has(Feature.FORTUNE_POT)
    state = new_game(lucky, 2, 1, first_seat=0, script=Script(dice=((3, 5),)))
    _, events = apply(state, Roll(0), 1.0)
    assert Transfer(-1, 0, 888, "lucky_eight") in events
    assert not any(isinstance(e, Transfer) and POT in (e.frm, e.to) for e in events)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_simple_policy_always_sends_a_legal_command(mode: str) -> None:
    state = new_game(mode, 4, 2)
    now = 0.0
    for _ in range(400):
        if state.finished:
            break
        seat = awaiting(state)[0]
        command = simple_policy(state, seat)
        assert command in legal_commands(state, seat)
        now += 1.0
        state, _ = apply(state, command, now)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_simulate_plays_the_simple_policy_unchecked_with_the_same_game(mode: str) -> None:
    """``simulate`` carries out the simple policy's commands without their guards
    (``engine.perform``); the same policy behind a wrapper is checked like any other
    caller's, and the game is the same, event for event."""

    def checked(state: State, seat: int) -> Command:
        return simple_policy(state, seat)

    unchecked = play_game(mode, 4, 5, keep_events=True)
    guarded = play_game(mode, 4, 5, [checked] * 4, keep_events=True)
    assert guarded.events == unchecked.events and len(unchecked.events) > 300
    assert state_to_json(guarded.state) == state_to_json(unchecked.state)
    assert (guarded.commands, guarded.player_turns) == (unchecked.commands, unchecked.player_turns)


def test_legal_commands_and_the_simple_policy_share_prebuilt_commands() -> None:
    state = new_game("classic", 2, 1, first_seat=0)
    assert simple_policy(state, 0) is legal_commands(state, 0)[0]


def test_the_simple_policy_turns_down_every_offer() -> None:
    t = Table(game(2, squares=owned(0, 6)))
    t.do(OfferTrade(0, 1, 0, (6,), 800, ()))
    assert simple_policy(t.state, 1) == RejectOffer(1, "o1")
