"""Property: whatever the mode, style or state, a bot's decision is legal.

Random states come from random walks: seeded games where each step is either a bot's
decision or a random legal command (so walks reach auctions, payment pauses with
buildings, jail, Jackpot, Bus and teleport, open offers, ...). At every step of the walk
each waiting seat's bot decision is checked against ``legal_commands`` and applied.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opolyx_bots.strategy import choose
from opolyx_bots.styles import STYLES
from opolyx_rules import (
    MODES,
    Command,
    OfferTrade,
    Resign,
    State,
    apply,
    awaiting,
    check_offer,
    legal_commands,
    new_game,
)


def assert_legal(state: State, seat: int, command: Command | None, legal: list[Command]) -> None:
    assert command is not None, f"no decision for seat {seat} though {legal} are legal"
    if isinstance(command, OfferTrade):
        assert check_offer(state, command) is None, command
    else:
        assert command in legal, f"{command} not in {legal}"
    assert not isinstance(command, Resign), "a bot never resigns"


def random_walk_checking_bots(mode: str, seats: int, seed: int, steps: int, noise: float) -> int:
    """Play ``steps`` commands; returns how many bot decisions were checked."""
    rng = random.Random(seed)
    styles = [rng.choice(list(STYLES)) for _ in range(seats)]
    state = new_game(mode, seats, seed)
    now = 0.0
    checked = 0
    for _ in range(steps):
        if state.finished:
            break
        waiting = awaiting(state)
        for seat in waiting:
            legal = legal_commands(state, seat)
            decision = choose(state, seat, legal, STYLES[styles[seat]], rng)
            assert_legal(state, seat, decision, legal)
            checked += 1
        seat = rng.choice(waiting)
        legal = legal_commands(state, seat)
        if rng.random() < noise:
            options = [c for c in legal if not isinstance(c, Resign)] or legal
            command: Command | None = rng.choice(options)
        else:
            command = choose(state, seat, legal, STYLES[styles[seat]], rng)
        assert command is not None
        now += 1.0
        state, _ = apply(state, command, now)
    return checked


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    mode=st.sampled_from(sorted(MODES)),
    seats=st.integers(2, 6),
    seed=st.integers(0, 2**31),
    steps=st.integers(50, 600),
    noise=st.sampled_from([0.0, 0.2, 0.6]),
)
def test_bot_decisions_are_always_legal(
    mode: str, seats: int, seed: int, steps: int, noise: float
) -> None:
    if mode == "team" and seats not in (4, 6):
        seats = 4
    assert random_walk_checking_bots(mode, seats, seed, steps, noise) > 0


def test_every_mode_reaches_every_kind_of_decision_in_long_walks() -> None:
    """The walks really cover the decision kinds the property is about."""
    kinds: set[str] = set()
    for mode in sorted(MODES):
        rng = random.Random(7)
        state = new_game(mode, 4, 11)
        now = 0.0
        for _ in range(4000):
            if state.finished:
                break
            if state.pending is not None:
                kinds.add(state.pending.kind)
            seat = awaiting(state)[0]
            legal = legal_commands(state, seat)
            if rng.random() < 0.3:
                command: Command | None = rng.choice(
                    [c for c in legal if not isinstance(c, Resign)] or legal
                )
            else:
                command = choose(state, seat, legal, STYLES["gambler"], rng)
            assert command is not None
            assert_legal(state, seat, command, legal)
            now += 1.0
            state, _ = apply(state, command, now)
    assert {"roll", "buy", "auction", "payment", "jackpot", "bus", "teleport"} <= kinds, kinds
