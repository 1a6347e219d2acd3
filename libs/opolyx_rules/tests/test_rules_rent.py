"""Story tests for rent (R6): streets, full groups, buildings, dealerships, utilities,
mortgages, the collectible card boost (R20) and the rent tax.

In every story seat 0 is the tenant who rolls onto the square, seat 1 the owner.
"""

from __future__ import annotations

from fractions import Fraction
from math import floor
from typing import Any

import pytest
from opolyx_rules.commands import Pay, Roll
from opolyx_rules.events import PaymentRequired
from story import BANK, Table, game, names, of, owned, transfers


def land(
    square: int,
    squares: dict[int, dict[str, Any]],
    *,
    dice: tuple[int, int] = (3, 4),
    round: int | None = None,
    boosts: dict[int, dict[int, int]] | None = None,
) -> tuple[Table, list[Any]]:
    """Seat 0 rolls ``dice`` onto ``square`` in a 3-seat game; returns the table and
    the events of the roll."""
    start = (square - sum(dice)) % 40
    t = Table(
        game(
            3,
            dice=(dice,),
            round=round,
            boosts=boosts,
            players={0: {"position": start}},
            squares=squares,
        )
    )
    return t, t.do(Roll(0))


def rent_asked(events: list[Any]) -> int:
    (required,) = of(events, PaymentRequired)
    assert required.reason == "rent"
    assert required.seat == 0
    assert required.creditors == ((1, required.amount),)
    return required.amount


# --- streets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("square", "rent"), [(1, 20), (3, 40), (14, 120), (39, 500)])
def test_a_street_alone_collects_its_base_rent(square: int, rent: int) -> None:
    """R6: street: base rent."""
    t, events = land(square, owned(1, square))
    assert rent_asked(events) == rent
    before = t.cash(0)
    assert transfers(t.do(Pay(0))) == [(0, 1, rent, "rent")]
    assert (t.cash(0), t.cash(1)) == (before - rent, 15000 + rent)


def test_rent_doubles_for_a_full_unbuilt_group() -> None:
    """R6: doubled when one owner holds the whole colour group and it has no buildings."""
    _, events = land(39, owned(1, 37, 39))
    assert rent_asked(events) == 1000
    _, events = land(13, owned(1, 11, 13, 14))
    assert rent_asked(events) == 200


def test_rent_is_not_doubled_when_one_street_of_the_group_belongs_to_another() -> None:
    """R6: doubling needs the whole group in one hand."""
    _, events = land(39, {**owned(1, 39), **owned(2, 37)})
    assert rent_asked(events) == 500


def test_a_mortgaged_street_still_counts_for_the_full_group() -> None:
    """R6: a mortgaged street in the group still counts as held."""
    _, events = land(39, {**owned(1, 39), **owned(1, 37, mortgaged=True)})
    assert rent_asked(events) == 1000


def test_an_unbuilt_street_is_not_doubled_once_its_group_has_buildings() -> None:
    """R6: doubled only when no street of the group has buildings."""
    _, events = land(13, {**owned(1, 11, 14, buildings=1), **owned(1, 13)})
    assert rent_asked(events) == 100


@pytest.mark.parametrize(
    ("buildings", "rent"), [(1, 2000), (2, 6000), (3, 14000), (4, 17000), (5, 20000)]
)
def test_a_built_street_collects_the_row_for_its_building_count(buildings: int, rent: int) -> None:
    """R6: with buildings the rent is the row for that building count (square 39)."""
    _, events = land(39, owned(1, 37, 39, buildings=buildings))
    assert rent_asked(events) == rent


@pytest.mark.parametrize(
    ("buildings", "rent"), [(1, 100), (2, 300), (3, 900), (4, 1600), (5, 2500)]
)
def test_a_built_brown_street_collects_its_row(buildings: int, rent: int) -> None:
    """R6: rent rows of square 1."""
    _, events = land(1, owned(1, 1, 3, buildings=buildings))
    assert rent_asked(events) == rent


# --- dealerships and utilities ---------------------------------------------------------------


@pytest.mark.parametrize(("held", "rent"), [(1, 250), (2, 500), (3, 1000), (4, 2000)])
def test_dealership_rent_depends_on_how_many_the_owner_holds(held: int, rent: int) -> None:
    """R6: dealerships 250 / 500 / 1000 / 2000 for 1 / 2 / 3 / 4 held."""
    dealers = (15, 25, 35, 5)[:held]
    _, events = land(15, owned(1, *dealers))
    assert rent_asked(events) == rent


def test_dealerships_held_by_another_owner_do_not_count() -> None:
    """R6: only dealerships held by the owner count."""
    _, events = land(15, {**owned(1, 15, 25), **owned(2, 5, 35)})
    assert rent_asked(events) == 500


@pytest.mark.parametrize(
    ("dice", "held", "rent"),
    [((3, 4), 1, 280), ((1, 2), 1, 120), ((3, 4), 2, 700), ((6, 5), 2, 1100)],
)
def test_utility_rent_is_the_dice_total_times_40_or_100(
    dice: tuple[int, int], held: int, rent: int
) -> None:
    """R6: utilities: the two white dice of the roll that brought the tenant x 40 (one
    held) or x 100 (both)."""
    _, events = land(12, owned(1, *(12, 28)[:held]), dice=dice)
    assert rent_asked(events) == rent


# --- mortgaged, own --------------------------------------------------------------------------


@pytest.mark.parametrize("square", [39, 15, 12])
def test_a_mortgaged_property_collects_no_rent(square: int) -> None:
    """R6/R9/R21: a mortgaged property always collects zero rent."""
    squares = {**owned(1, 37, 39, 5, 15, 28), **owned(1, square, mortgaged=True)}
    t, events = land(square, squares)
    assert of(events, PaymentRequired) == []
    assert transfers(events) == []
    assert (t.cash(0), t.cash(1)) == (15000, 15000)
    assert names(events)[-2:] == ["TurnEnded", "TurnStarted"]


# --- collectible card boost ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pct", "squares", "rent"),
    [
        (33, owned(1, 39), 665),
        (20, owned(1, 37, 39), 1200),
        (3, owned(1, 37, 39, buildings=2), 6180),
        (33, owned(1, 37, 39, buildings=5), 26600),
    ],
)
def test_the_owners_card_raises_the_rent_by_its_percentage(
    pct: int, squares: dict[int, dict[str, Any]], rent: int
) -> None:
    """R6/R20: rent + floor(rent x boost) for the owner's card on that exact square."""
    _, events = land(39, squares, boosts={1: {39: pct}})
    assert rent_asked(events) == rent


def test_the_card_boost_rounds_down() -> None:
    """R6: percentages are applied and rounded down: 20 + floor(20 x 33%) = 26."""
    _, events = land(1, owned(1, 1), boosts={1: {1: 33}})
    assert rent_asked(events) == 26


def test_the_card_boost_is_capped_at_33_percent() -> None:
    """R6/R20: the boost is capped at 33%."""
    _, events = land(39, owned(1, 39), boosts={1: {39: 50}})
    assert rent_asked(events) == 665


def test_a_card_for_another_square_or_held_by_the_tenant_changes_nothing() -> None:
    """R6/R20: only the owner's card for that exact square counts."""
    _, events = land(39, owned(1, 39), boosts={1: {37: 33}, 0: {39: 33}})
    assert rent_asked(events) == 500


# --- rent tax --------------------------------------------------------------------------------


def withheld(rent: int, round_no: int) -> int:
    """R6's formula, computed exactly: floor(rent x 0.99 x min(1, (r-99)/101))."""
    if round_no < 100:
        return 0
    share = Fraction(99, 100) * min(Fraction(1), Fraction(round_no - 100 + 1, 200 - 100 + 1))
    return floor(rent * share)


@pytest.mark.parametrize(
    ("round_no", "owner_gets"),
    [(1, 1000), (99, 1000), (100, 991), (101, 981), (150, 501), (199, 20), (200, 10), (450, 10)],
)
def test_the_rent_tax_withholds_a_growing_share_of_the_rent(round_no: int, owner_gets: int) -> None:
    """R6: from round 100 the owner keeps rent - floor(rent x share), share = 0.99 x
    min(1, (r - 100 + 1) / (200 - 100 + 1)); the tenant pays the whole rent and the
    withheld part leaves the game."""
    assert 1000 - withheld(1000, round_no) == owner_gets
    t, events = land(39, owned(1, 37, 39), round=round_no)
    assert rent_asked(events) == 1000
    events = t.do(Pay(0))
    paid = transfers(events)
    assert paid[0] == (0, 1, owner_gets, "rent")
    if owner_gets < 1000:
        assert paid[1] == (0, BANK, 1000 - owner_gets, "rent_tax")
    assert (t.cash(0), t.cash(1)) == (14000, 15000 + owner_gets)


@pytest.mark.parametrize(("rent_square", "rent"), [(1, 20), (39, 500)])
def test_the_withheld_rent_is_rounded_down(rent_square: int, rent: int) -> None:
    """R6: floor(rent x share) at round 100: 20 -> 0 withheld, 500 -> 4 withheld."""
    t, _ = land(rent_square, owned(1, rent_square), round=100)
    before = t.cash(0)
    t.do(Pay(0))
    assert t.cash(1) == 15000 + rent - withheld(rent, 100)
    assert withheld(rent, 100) == {20: 0, 500: 4}[rent]
    assert t.cash(0) == before - rent


def test_the_card_boost_applies_before_the_rent_tax() -> None:
    """R6: the boosted rent (665) is what the tax applies to at round 200."""
    t, events = land(39, owned(1, 39), round=200, boosts={1: {39: 33}})
    assert rent_asked(events) == 665
    events = t.do(Pay(0))
    assert transfers(events) == [(0, 1, 7, "rent"), (0, BANK, 658, "rent_tax")]
