"""What things are worth to a bot: group completion, blocking, danger, liquidity."""

from __future__ import annotations

from opolyx_bots.styles import STYLES
from opolyx_bots.valuation import (
    completed_groups,
    danger,
    liquidity,
    square_value,
    trade_gain,
    with_transfer,
)
from opolyx_rules import (
    PROPERTY_SLOT,
    State,
    new_game,
    with_fields,
)

BALANCED = STYLES["balanced"]


def owned(owners: dict[int, int], buildings: dict[int, int] | None = None) -> State:
    state = new_game("classic", 3, 1)
    props = list(state.props)
    for square, owner in owners.items():
        slot = PROPERTY_SLOT[square]
        props[slot] = props[slot]._replace(owner=owner, buildings=(buildings or {}).get(square, 0))
    return with_fields(state, props=tuple(props))


def test_completing_a_group_is_worth_far_more_than_the_list_price() -> None:
    state = owned({16: 0, 18: 0})
    assert square_value(state, 0, 19, BALANCED) > 2 * 2000
    # an unrelated seat values the same square around its price, plus a little for blocking
    assert 2000 <= square_value(state, 1, 19, BALANCED) < 3500
    # the builder style values groups more than the cautious one
    assert square_value(state, 0, 19, STYLES["builder"]) > square_value(
        state, 0, 19, STYLES["cautious"]
    )


def test_the_last_piece_of_an_opponents_group_has_a_blocking_value() -> None:
    blocking = square_value(owned({37: 1}), 0, 39, BALANCED)
    plain = square_value(owned({}), 0, 39, BALANCED)
    assert blocking > plain == 4000


def test_danger_is_the_worst_rent_an_opponent_can_charge() -> None:
    state = owned({37: 1, 39: 1}, buildings={37: 3, 39: 3})
    assert danger(state, 0) == 14000
    assert danger(state, 1) == 0


def test_liquidity_counts_mortgages_of_loose_properties_only() -> None:
    state = owned({1: 0, 3: 0, 5: 0})  # brown is a group: not mortgaged for liquidity
    assert liquidity(state, 0) == state.seats[0].cash + 1000


def test_a_trade_handing_an_opponent_a_group_costs_us() -> None:
    state = owned({6: 1, 8: 1, 9: 0, 12: 1})
    after = with_transfer(state, 1, 0, 0, (12,), 0, (9,))
    assert "light-blue" in completed_groups(after, 1)
    assert trade_gain(state, after, 0, 1, BALANCED) < 0
