"""The whole-group facts (``holdings``) agree with the properties they are derived from,
including right after the properties change (they are kept for the last value asked)."""

from __future__ import annotations

from opolyx_rules import new_game, simple_policy, with_fields
from opolyx_rules.board import GROUP_SQUARES, PROPERTY_SLOT
from opolyx_rules.commands import Command
from opolyx_rules.holdings import GROUP_INDEX, GROUPS, holdings
from opolyx_rules.simulate import play_game
from opolyx_rules.state import PropState, State


def _expected(state: State) -> tuple[list[tuple[int | None, ...]], list[int | None], list[bool]]:
    owners, holders, built = [], [], []
    for group in GROUPS:
        props = [state.props[PROPERTY_SLOT[sq]] for sq in GROUP_SQUARES[group]]
        seats = {p.owner for p in props}
        owners.append(tuple(p.owner for p in props))
        holders.append(next(iter(seats)) if len(seats) == 1 else None)
        built.append(any(p.buildings for p in props))
    return owners, holders, built


def test_holdings_match_the_properties_through_whole_games() -> None:
    """Checked before every decision of whole games (the policy is shown each state)."""
    seen = {"holder": 0, "built": 0}

    def checking_policy(state: State, seat: int) -> Command:
        derived = holdings(state.props)
        owners, holders, built = _expected(state)
        assert list(derived.owners) == owners
        assert list(derived.holder) == holders
        assert list(derived.built) == built
        seen["holder"] += any(h is not None for h in holders)
        seen["built"] += any(built)
        return simple_policy(state, seat)

    for mode, seed in (("classic", 0), ("speed", 1), ("team", 2)):
        play_game(mode, 4, seed, [checking_policy] * 4)
    assert seen["holder"] and seen["built"], f"too little was checked: {seen}"


def test_a_changed_props_value_is_derived_anew() -> None:
    state = new_game("classic", 2, 1)
    brown = GROUP_INDEX[1]
    assert GROUP_INDEX[3] == brown and GROUP_INDEX[0] == -1
    assert holdings(state.props).holder[brown] is None
    props = list(state.props)
    for sq in GROUP_SQUARES["brown"]:
        props[PROPERTY_SLOT[sq]] = PropState(sq, owner=1)
    whole = with_fields(state, props=tuple(props))
    assert holdings(whole.props).holder[brown] == 1
    # Back to the first value (asked before): not the last answer given.
    assert holdings(state.props).holder[brown] is None
    props[PROPERTY_SLOT[3]] = PropState(3, owner=1, buildings=1)
    built = with_fields(state, props=tuple(props))
    assert holdings(built.props).built[brown]
    assert not holdings(whole.props).built[brown]
