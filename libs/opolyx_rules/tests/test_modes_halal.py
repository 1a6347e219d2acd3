"""Halal mode, told as short stories (RULES.md R1, R2, R9, R14).

Halal is Classic without mortgage interest (lifting costs exactly half the price) and
without the Jackpot bet (square 20 is a rest square).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mode_story import BANK, Story, of_type, played, transfers


@pytest.mark.parametrize(("square", "cost"), [(39, 2000), (37, 1750), (1, 300), (12, 750)])
def test_lifting_a_mortgage_costs_exactly_half_the_price(square: int, cost: int) -> None:
    """R1, R9, R2: Halal has no mortgage interest: lifting costs the mortgage value only."""
    story = Story("halal", 2, squares={square: {"owner": 0, "mortgaged": True}})
    events = story.do(0, "unmortgage", square=square)
    assert transfers(events) == [
        {"type": "transfer", "frm": 0, "to": BANK, "amount": cost, "reason": "unmortgage"}
    ]
    assert story.cash(0) == 15000 - cost
    assert not story.square(square)["mortgaged"]


def test_classic_charges_ten_percent_interest_on_the_same_lift() -> None:
    """R1: the contrast: Classic lifts 37 for 1750 + 175."""
    story = Story("classic", 2, squares={37: {"owner": 0, "mortgaged": True}})
    events = story.do(0, "unmortgage", square=37)
    assert transfers(events)[0]["amount"] == 1925


def test_mortgage_then_lift_round_trip_costs_nothing() -> None:
    """R9, R2: mortgaging 39 pays 2000; lifting it costs 2000: cash is back where it was."""
    story = Story("halal", 2, squares={39: {"owner": 0}})
    story.do(0, "mortgage", square=39)
    assert story.cash(0) == 17000
    story.do(0, "unmortgage", square=39)
    assert story.cash(0) == 15000


def test_lifting_needs_the_whole_half_price_in_cash() -> None:
    """R9: with 1999 in cash, 39 (mortgage value 2000) cannot be lifted."""
    story = Story(
        "halal",
        2,
        seat_overrides={0: {"cash": 1999}},
        squares={39: {"owner": 0, "mortgaged": True}},
    )
    assert story.refused(0, "unmortgage", square=39) == "funds/insufficient"


def test_square_20_is_a_rest_square_without_a_bet() -> None:
    """R14, R2: in Halal landing on 20 offers nothing: no bet, no money, the turn ends."""
    story = Story("halal", 2, dice=[(4, 6)], jackpot_die=[5], seat_overrides={0: {"position": 10}})
    events = story.do(0, "roll")
    assert story.position(0) == 20
    assert of_type(events, "jackpot_offered") == []
    assert transfers(events) == []
    assert story.cash(0) == 15000
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 1
    assert story.refused(0, "jackpot", numbers=[5]) == "turn/not_your_turn"


def test_doubles_onto_20_just_roll_again() -> None:
    """R14, R4: doubles onto the rest square: no bet, the player simply rolls again."""
    story = Story("halal", 2, dice=[(5, 5)], seat_overrides={0: {"position": 10}})
    events = story.do(0, "roll")
    assert of_type(events, "jackpot_offered") == []
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 0
    assert "jackpot" not in story.legal_types(0)


def test_classic_offers_the_bet_on_the_same_landing() -> None:
    """R14: the contrast: Classic offers the Jackpot bet on square 20."""
    story = Story("classic", 2, dice=[(4, 6)], seat_overrides={0: {"position": 10}})
    story.do(0, "roll")
    assert story.pending["kind"] == "jackpot"


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_halal_games_never_offer_a_bet(seed: int) -> None:
    """R14, R2: over whole games, seats land on 20 and nothing is ever bet there."""
    _, steps = played("halal", 3, seed)
    events = [event for _, event, _ in steps]
    assert [m for m in of_type(events, "moved") if m["to"] == 20]
    assert of_type(events, "jackpot_offered") == of_type(events, "jackpot_played") == []
    assert not [t for t in transfers(events) if t["reason"].startswith("jackpot")]
