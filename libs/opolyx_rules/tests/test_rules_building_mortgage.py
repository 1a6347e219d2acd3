"""Story tests for building (R8) and mortgages (R9, R21)."""

from __future__ import annotations

import pytest
from opolyx_rules.commands import (
    Build,
    Mortgage,
    Pay,
    Roll,
    Sell,
    Unmortgage,
)
from opolyx_rules.events import (
    BuildingBuilt,
    BuildingSold,
    MortgageLifted,
    PropertyMortgaged,
)
from story import BANK, Table, game, names, of, owned, quiet_turn, transfers

# --- R8: building ----------------------------------------------------------------------------


def test_building_costs_the_building_cost_of_the_street() -> None:
    """R8/R1: a building on the dark-blue group costs 2000."""
    t = Table(game(2, squares=owned(0, 37, 39)))
    events = t.do(Build(0, 39))
    assert transfers(events) == [(0, BANK, 2000, "building")]
    assert of(events, BuildingBuilt) == [BuildingBuilt(0, 39, 1)]
    assert (t.prop(39).buildings, t.cash(0)) == (1, 13000)


def test_building_needs_the_whole_colour_group() -> None:
    """R8: only when the player holds the whole colour group."""
    t = Table(game(3, squares={**owned(0, 11, 13), **owned(1, 14)}))
    assert t.refuse(Build(0, 11)) == "build/group_incomplete"


def test_only_streets_take_buildings() -> None:
    """R8: only on streets (not dealerships or utilities)."""
    t = Table(game(2, squares=owned(0, 5, 15, 25, 35, 12, 28)))
    assert t.refuse(Build(0, 5)) == "build/not_street"
    assert t.refuse(Build(0, 12)) == "build/not_street"


def test_no_building_while_a_street_of_the_group_is_mortgaged() -> None:
    """R8: no street of the group may be mortgaged."""
    t = Table(game(2, squares={**owned(0, 39), **owned(0, 37, mortgaged=True)}))
    assert t.refuse(Build(0, 39)) == "build/group_mortgaged"


def test_at_most_five_buildings_per_street() -> None:
    """R8: at most 5 buildings per street."""
    t = Table(game(2, squares=owned(0, 37, 39, buildings=5)))
    assert t.refuse(Build(0, 39)) == "build/max"


def test_building_evenly_raises_the_lowest_street_first() -> None:
    """R8: even building: a street may be raised only if no street of its group has
    fewer buildings."""
    t = Table(game(2, squares={**owned(0, 11, 13, buildings=2), **owned(0, 14, buildings=1)}))
    assert t.refuse(Build(0, 11)) == "build/uneven"
    t.do(Build(0, 14))
    assert t.prop(14).buildings == 2


def test_each_street_rises_at_most_one_level_per_turn() -> None:
    """R8: each street at most one level per turn, even after doubles; the next turn it
    may rise again."""
    t = Table(game(2, dice=((5, 5), (2, 4), (4, 6)), squares=owned(0, 1, 3, 16)))
    t.do(Build(0, 1))
    t.do(Build(0, 3))
    assert t.refuse(Build(0, 1)) == "build/once_per_turn"
    t.do(Roll(0))  # doubles: another management window, same turn
    assert t.waits_for() == ("roll", 0)
    assert t.refuse(Build(0, 3)) == "build/once_per_turn"
    t.do(Roll(0))  # onto its own 16: seat 0's turn ends
    t.do(Roll(1))
    t.do(Build(0, 1))
    assert (t.prop(1).buildings, t.prop(3).buildings) == (2, 1)


def test_building_needs_the_cash() -> None:
    """R8: a building costs money the player must have."""
    t = Table(game(2, players={0: {"cash": 1999}}, squares=owned(0, 37, 39)))
    assert t.refuse(Build(0, 39)) == "funds/insufficient"


def test_selling_returns_half_the_building_cost() -> None:
    """R8/R1: selling a building back to the bank returns half its cost."""
    t = Table(game(2, squares=owned(0, 37, 39, buildings=2)))
    events = t.do(Sell(0, 39))
    assert transfers(events) == [(BANK, 0, 1000, "building_sale")]
    assert of(events, BuildingSold) == [BuildingSold(0, 39, 1)]
    assert t.cash(0) == 16000


def test_selling_is_even_too() -> None:
    """R8: even-building modes sell evenly: never leave a street two levels above
    another of its group (sell from the highest first)."""
    t = Table(game(2, squares={**owned(0, 37, buildings=2), **owned(0, 39, buildings=3)}))
    assert t.refuse(Sell(0, 37)) == "sell/uneven"
    t.do(Sell(0, 39))
    t.do(Sell(0, 37))
    assert (t.prop(37).buildings, t.prop(39).buildings) == (1, 2)


def test_nothing_to_sell_on_a_street_without_buildings() -> None:
    """R8: one building at a time, from a street that has one."""
    t = Table(game(2, squares=owned(0, 37, 39)))
    assert t.refuse(Sell(0, 39)) == "sell/no_buildings"


def test_selling_is_allowed_during_a_payment_pause_but_building_is_not() -> None:
    """R8/R11: selling is allowed in the management window and during a payment pause;
    building only before rolling."""
    t = Table(
        game(2, dice=((1, 3),), players={0: {"cash": 1000}}, squares=owned(0, 37, 39, buildings=1))
    )
    t.do(Roll(0))  # income tax 2000
    assert t.waits_for() == ("payment", 0)
    assert t.refuse(Build(0, 39)) == "manage/not_now"
    t.do(Sell(0, 39))
    assert t.cash(0) == 2000
    t.do(Pay(0))
    assert (t.cash(0), t.waits_for()) == (0, ("roll", 1))


def test_no_selling_outside_the_windows() -> None:
    """R8: selling happens in your management window or your payment pause only."""
    t = Table(game(2, first=1, squares=owned(0, 37, 39, buildings=1)))
    assert t.refuse(Sell(0, 39)) == "manage/not_now"


# --- R9: mortgages ---------------------------------------------------------------------------


@pytest.mark.parametrize(("square", "value"), [(1, 300), (39, 2000), (5, 1000), (12, 750)])
def test_mortgaging_pays_half_the_price(square: int, value: int) -> None:
    """R9: mortgage a street, a dealership or a utility for half its price."""
    t = Table(game(2, squares=owned(0, square)))
    events = t.do(Mortgage(0, square))
    assert transfers(events) == [(BANK, 0, value, "mortgage")]
    assert of(events, PropertyMortgaged) == [PropertyMortgaged(0, square)]
    assert t.prop(square).mortgaged
    assert t.cash(0) == 15000 + value


@pytest.mark.parametrize(("square", "cost"), [(1, 330), (39, 2200), (5, 1100), (12, 825)])
def test_lifting_a_mortgage_costs_half_the_price_plus_10_percent(square: int, cost: int) -> None:
    """R9/R1: lift it for mortgage value + 10%."""
    t = Table(game(2, squares=owned(0, square, mortgaged=True)))
    events = t.do(Unmortgage(0, square))
    assert transfers(events) == [(0, BANK, cost, "unmortgage")]
    assert of(events, MortgageLifted) == [MortgageLifted(0, square)]
    assert not t.prop(square).mortgaged
    assert t.cash(0) == 15000 - cost


def test_lifting_needs_the_cash() -> None:
    """R9: the lifting cost must be paid."""
    t = Table(game(2, players={0: {"cash": 2199}}, squares=owned(0, 39, mortgaged=True)))
    assert t.refuse(Unmortgage(0, 39)) == "funds/insufficient"


def test_no_mortgage_while_any_street_of_the_group_has_buildings() -> None:
    """R9/R21: a property cannot be mortgaged while any street of its group has buildings."""
    t = Table(game(2, squares={**owned(0, 11, 13), **owned(0, 14, buildings=1)}))
    assert t.refuse(Mortgage(0, 11)) == "mortgage/group_has_buildings"


def test_a_property_is_mortgaged_only_once_and_lifted_only_when_mortgaged() -> None:
    """R9: mortgaging a mortgaged property or lifting an unmortgaged one is refused."""
    t = Table(game(2, squares={**owned(0, 39, mortgaged=True), **owned(0, 37)}))
    assert t.refuse(Mortgage(0, 39)) == "mortgage/already"
    assert t.refuse(Unmortgage(0, 37)) == "mortgage/not_mortgaged"


def test_only_the_owner_mortgages() -> None:
    """R9: you mortgage your own properties."""
    t = Table(game(2, squares=owned(1, 39)))
    assert t.refuse(Mortgage(0, 39)) == "property/not_owned"


def test_mortgaging_is_allowed_in_a_payment_pause() -> None:
    """R9/R11: mortgage during a payment pause, then pay."""
    t = Table(game(2, dice=((1, 3),), players={0: {"cash": 1500}}, squares=owned(0, 12)))
    t.do(Roll(0))  # income tax 2000
    t.do(Mortgage(0, 12))
    t.do(Pay(0))
    assert (t.cash(0), t.prop(12).mortgaged) == (250, True)


def test_lifting_a_mortgage_is_a_before_the_roll_action() -> None:
    """R4.1/R9: lifting a mortgage is management: before the roll, not after."""
    t = Table(game(2, dice=((1, 3),), squares=owned(0, 12, mortgaged=True)))
    t.do(Roll(0))  # income tax pause
    assert t.refuse(Unmortgage(0, 12)) == "manage/not_now"


def test_a_street_sold_down_cannot_be_raised_again_in_the_same_turn() -> None:
    """R8: each street at most one level per turn: build, sell, build again is refused."""
    t = Table(game(2, squares=owned(0, 37, 39, buildings=1)))
    t.do(Build(0, 37))
    t.do(Sell(0, 37))
    assert t.refuse(Build(0, 37)) == "build/once_per_turn"
    t.do(Build(0, 39))
    assert (t.prop(37).buildings, t.prop(39).buildings) == (1, 2)


def test_a_classic_mortgage_never_expires() -> None:
    """R9/R2: in Classic a mortgage does not expire, however many rounds pass."""
    t = Table(game(2, round=300, squares=owned(0, 39, mortgaged=True, mortgaged_round=1)))
    events = quiet_turn(t, 0) + quiet_turn(t, 1)
    assert [n for n in names(events) if n.startswith("Mortgage")] == []
    assert (t.owner(39), t.prop(39).mortgaged) == (0, True)
