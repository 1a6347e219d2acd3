"""Property-based harness (issue 2): thousands of seeded games of random legal commands,
timeouts and random trade offers included, checked after every step.

Invariants: money is conserved (every change of cash is a Transfer to or from the bank,
the pot or another seat); each property has at most one owner, a seat still in the game;
building counts respect R8; a seat that must act always has a legal command until the
game ends; replaying the events rebuilds the state; the state round-trips through JSON;
every game ends by its round limit; a refused command changes nothing.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opolyx_rules import (
    MODES,
    RulesError,
    State,
    apply,
    awaiting,
    can_offer,
    get_mode,
    legal_commands,
    new_game,
    next_deadline,
    replay,
    state_from_json,
    state_to_json,
)
from opolyx_rules.assets import group_has_buildings
from opolyx_rules.board import GROUP_SQUARES, PROPERTY_SLOT, SQUARES, SquareKind
from opolyx_rules.commands import Command, OfferTrade, Resign, Timeout
from opolyx_rules.events import BANK, POT, Event, Transfer
from opolyx_rules.scenario import with_overrides

GAME_SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


def check_invariants(state: State) -> None:
    for seat in state.seats:
        assert seat.cash >= 0, f"seat {seat.seat} has negative cash {seat.cash}"
        assert 0 <= seat.position < 40
        if seat.out:
            assert seat.cash == 0
    for p in state.props:
        if p.owner is not None:
            assert not state.seats[p.owner].out, f"square {p.square} owned by an out seat"
        assert 0 <= p.buildings <= 5
        if p.buildings:
            sq = SQUARES[p.square]
            assert sq.kind is SquareKind.STREET
            group = [state.props[PROPERTY_SLOT[q]] for q in GROUP_SQUARES[sq.group]]
            assert all(q.owner == p.owner for q in group), "building on an incomplete group"
            assert not any(q.mortgaged for q in group), "building in a mortgaged group"
            if state.config.even_building:
                levels = [q.buildings for q in group]
                assert max(levels) - min(levels) <= 1, f"uneven group {sq.group}: {levels}"
    assert state.pot >= 0
    assert state.round <= state.config.round_limit


def money_in_play(state: State) -> int:
    return sum(seat.cash for seat in state.seats) + state.pot


def bank_flow(events: list[Event]) -> int:
    """Money entering play from the bank minus money leaving play to the bank."""
    flow = 0
    for event in events:
        if isinstance(event, Transfer):
            assert event.amount > 0, f"empty or negative transfer {event}"
            assert event.frm != event.to
            if event.frm == BANK:
                flow += event.amount
            if event.to == BANK:
                flow -= event.amount
            assert event.frm in (BANK, POT) or event.frm >= 0
    return flow


def random_offer(rng: random.Random, state: State, seat: int) -> OfferTrade:
    others = [s.seat for s in state.seats if not s.out and s.seat != seat]
    to = rng.choice(others)

    def some_squares(owner: int) -> tuple[int, ...]:
        owned = [
            p.square
            for p in state.props
            if p.owner == owner and not group_has_buildings(state, p.square)
        ]
        return tuple(rng.sample(owned, k=min(len(owned), rng.randint(0, 2))))

    return OfferTrade(
        seat,
        to,
        give_cash=rng.choice((0, 0, 100, 500, 2000)),
        give_squares=some_squares(seat),
        take_cash=rng.choice((0, 0, 100, 500, 2000)),
        take_squares=some_squares(to),
    )


def choose(rng: random.Random, state: State) -> tuple[Command, float]:
    """A random input: usually a legal command of a seat that must act, sometimes a
    timeout, an offer, an illegal command, or someone's resignation."""
    due = next_deadline(state)
    roll = rng.random()
    if due is not None and roll < 0.05:
        return Timeout(), due
    seats = awaiting(state)
    assert seats, "nobody is asked to act in a running game"
    seat = rng.choice(seats)
    options = legal_commands(state, seat)
    assert options, f"seat {seat} must act but has no legal command"
    if can_offer(state, seat) and roll < 0.10:
        return random_offer(rng, state, seat), 0.0
    if roll < 0.104:
        active = [s.seat for s in state.seats if not s.out]
        return Resign(rng.choice(active)), 0.0
    # Pick a kind of command first, so that long lists (40 teleport squares, 41
    # Jackpot bets) do not crowd out the rest.
    by_kind: dict[type, list[Command]] = {}
    for option in options:
        if not isinstance(option, Resign):
            by_kind.setdefault(type(option), []).append(option)
    if not by_kind:
        return options[0], 0.0
    return rng.choice(by_kind[rng.choice(list(by_kind))]), 0.0


def deal_properties(rng: random.Random, state: State) -> State:
    """Start some games mid-way: properties dealt out, some groups whole, some built,
    so that building, rent, trades and bankruptcy all happen within a few rounds."""
    seats = len(state.seats)
    squares: dict[str, dict[str, object]] = {}
    for group, members in GROUP_SQUARES.items():
        whole = rng.random() < 0.4
        owner = rng.randrange(seats)
        level = rng.randint(0, 4) if whole and group not in ("dealer", "utility") else 0
        for square in members:
            if rng.random() < 0.3 and not whole:
                continue
            who = owner if whole else rng.randrange(seats)
            squares[str(square)] = {"owner": who, "buildings": level}
    return with_overrides(state, {"squares": squares})


def play_random_game(mode: str, seed: int, seats: int, round_limit: int, cash: int) -> None:
    rng = random.Random(seed)
    config = replace(get_mode(mode), round_limit=round_limit, starting_cash=cash)
    initial = new_game(config, seats, seed)
    if rng.random() < 0.5:
        initial = deal_properties(rng, initial)
    state = initial
    check_invariants(state)
    log: list[Event] = []
    now = 0.0
    for _step in range(20_000):
        if state.finished:
            break
        command, at = choose(rng, state)
        now = max(now, at) + rng.choice((0.0, 0.5, 2.0))
        before = state_to_json(state)
        try:
            after, events = apply(state, command, now)
        except RulesError as error:
            assert error.code and "/" in error.code
            assert state_to_json(state) == before, "a refused command changed the state"
            if not isinstance(command, OfferTrade | Timeout):
                pytest.fail(f"legal command {command} refused: {error}")
            continue
        assert state_to_json(state) == before, "apply mutated its input state"
        assert money_in_play(after) - money_in_play(state) == bank_flow(events)
        check_invariants(after)
        state = after
        log.extend(events)
        if rng.random() < 0.02:
            assert state_to_json(state_from_json(state_to_json(state))) == state_to_json(state)
    assert state.finished, "game did not end within the step budget"
    assert state.round <= round_limit
    assert sorted(state.placement) == list(range(seats))
    assert state.winner == state.placement[0]
    assert state_to_json(replay(initial, log)) == state_to_json(state)
    assert state_to_json(state_from_json(state_to_json(state))) == state_to_json(state)


@pytest.mark.parametrize("mode", sorted(MODES))
@GAME_SETTINGS
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    seats=st.integers(min_value=2, max_value=6),
    round_limit=st.integers(min_value=1, max_value=25),
    cash=st.sampled_from((1500, 4000, 15000)),
)
def test_random_games_keep_every_invariant(
    mode: str, seed: int, seats: int, round_limit: int, cash: int
) -> None:
    allowed = MODES[mode].allowed_seats
    if seats not in allowed:
        seats = allowed[seed % len(allowed)]
    play_random_game(mode, seed, seats, round_limit, cash)


def test_public_view_from_the_stored_form_equals_the_public_view() -> None:
    """The table service derives what players see from what it stores; both paths must
    agree and neither may carry the RNG, the script or the deck state."""
    from opolyx_rules import public_from_stored, public_view
    from opolyx_rules.state import Script

    state = new_game("classic", 3, 5, script=Script(dice=((1, 2),), deck=(4,)))
    derived = public_from_stored(state_to_json(state))
    assert derived == public_view(state)
    assert not {"rng", "script", "drawn_cards"} & set(derived)
