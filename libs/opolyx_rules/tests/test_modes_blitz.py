"""Blitz mode, told as short stories (RULES.md R2, R6, R20).

Blitz is Classic stopped after round 25: the richest seat (net worth) wins, and the rent
tax never applies.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mode_story import BANK, Story, of_type, played, transfers
from opolyx_rules.assets import net_worth


def play_quiet_round(story: Story, seats: int) -> None:
    """Every seat rolls 4 + 6 from Start to Just visiting: a round with no effect."""
    for seat in range(seats):
        story.override(seats={seat: {"position": 0}})
        story.do(seat, "roll")
        assert story.position(seat) == 10


def test_blitz_ends_when_round_25_completes_and_the_richest_wins() -> None:
    """R2, R20: Blitz ends once round 25 is complete (not earlier); the highest net worth
    wins and the others follow by net worth."""
    story = Story(
        "blitz",
        3,
        round=25,
        dice=[(4, 6)] * 3,
        seat_overrides={0: {"cash": 9000}, 1: {"cash": 21000}, 2: {"cash": 12000}},
    )
    for seat in (0, 1):
        story.override(seats={seat: {"position": 0}})
        story.do(seat, "roll")
        assert not story.state.finished
    story.override(seats={2: {"position": 0}})
    events = story.do(2, "roll")
    [finished] = of_type(events, "game_finished")
    assert finished == {
        "type": "game_finished",
        "winner": 1,
        "placement": [1, 2, 0],
        "reason": "round_limit",
        "round": 25,
    }
    assert story.state.finished and story.pending is None
    assert story.refused(0, "roll") == "game/finished"


def test_blitz_goes_on_after_round_24() -> None:
    """R2: round 24 completing starts round 25."""
    story = Story("blitz", 2, round=24, dice=[(4, 6)] * 2)
    play_quiet_round(story, 2)
    assert not story.state.finished
    assert story.state.round == 25
    assert story.pending == {"kind": "roll", "seat": 0, "deadline": 0.0 + 75.0}


def test_blitz_winner_is_the_highest_net_worth_not_the_most_cash() -> None:
    """R20: net worth = cash + unmortgaged prices + half of mortgaged + buildings at cost:
    seat 0 (10000 + 4000 + 3500 + 1000 for the mortgaged dealership + 4 x 2000 = 26500)
    beats seat 1 (20000 cash)."""
    story = Story(
        "blitz",
        2,
        round=25,
        dice=[(4, 6)] * 2,
        seat_overrides={0: {"cash": 10000}, 1: {"cash": 20000}},
        squares={
            39: {"owner": 0, "buildings": 4},
            37: {"owner": 0},
            35: {"owner": 0, "mortgaged": True},
        },
    )
    play_quiet_round(story, 2)
    assert story.view["winner"] == 0
    assert story.view["placement"] == [0, 1]


def test_blitz_tie_goes_to_the_lower_seat() -> None:
    """R20: equal net worth at the limit: the lower seat number wins."""
    story = Story("blitz", 3, round=25, dice=[(4, 6)] * 3, seat_overrides={0: {"cash": 1000}})
    play_quiet_round(story, 3)
    assert story.view["placement"] == [1, 2, 0]


@pytest.mark.parametrize("round_no", [1, 25, 150, 200, 400])
def test_blitz_never_taxes_rent(round_no: int) -> None:
    """R2, R6: Blitz has no rent tax: the owner receives the whole rent in any round."""
    story = Story(
        "blitz",
        2,
        round=round_no,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 36}},
        squares={39: {"owner": 1, "buildings": 1}, 37: {"owner": 1, "buildings": 1}},
    )
    story.do(0, "roll")
    events = story.do(0, "pay")
    assert transfers(events) == [
        {"type": "transfer", "frm": 0, "to": 1, "amount": 2000, "reason": "rent"}
    ]
    assert story.cash(1) == 17000


def test_classic_taxes_the_same_rent_at_round_200() -> None:
    """R6: the contrast: Classic withholds 99% of the rent at round 200."""
    story = Story(
        "classic",
        2,
        round=200,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 36}},
        squares={39: {"owner": 1, "buildings": 1}, 37: {"owner": 1, "buildings": 1}},
    )
    story.do(0, "roll")
    events = story.do(0, "pay")
    assert transfers(events, "rent_tax") == [
        {"type": "transfer", "frm": 0, "to": BANK, "amount": 1980, "reason": "rent_tax"}
    ]
    assert story.cash(1) == 15020


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_blitz_games_end_after_round_25_richest_first_without_rent_tax(seed: int) -> None:
    """R2, R20, R6: whole games of the simple policy: the game ends when round 25
    completes (unless one seat is left before), the survivors are placed by net worth
    (ties to the lower seat), rent is paid in full."""
    final, steps = played("blitz", 3, seed)
    assert final.finished
    if final.finish_reason == "round_limit":
        assert final.round == 25
        [(before, _, _)] = [step for step in steps if step[1]["type"] == "game_finished"]
        alive = [s.seat for s in before.seats if not s.out]
        ranked = sorted(alive, key=lambda seat: (-net_worth(before, seat), seat))
        assert list(final.placement[: len(alive)]) == ranked
        assert final.winner == ranked[0]
    else:
        assert final.round <= 25
    events = [event for _, event, _ in steps]
    assert transfers(events, "rent")  # rent was paid...
    assert transfers(events, "rent_tax") == []  # ...and never taxed
    assert not [e for e in of_type(events, "turn_started") if e["round"] > 25]
