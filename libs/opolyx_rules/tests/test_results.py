"""Per-seat results of a finished game (R20): places, XP inputs, XP, card drops."""

from __future__ import annotations

from opolyx_rules import apply, new_game, places, seat_results
from opolyx_rules.commands import Resign
from opolyx_rules.scenario import with_overrides


def test_team_winning_side_is_placed_first_together() -> None:
    """R17/R20: when a side wins, every member of it is placed first."""
    state = new_game("team", 4, 1, first_seat=0)
    state, _ = apply(state, Resign(1), 1.0)
    state, _ = apply(state, Resign(3), 2.0)
    assert state.finished
    assert places(state) == {0: 1, 2: 1, 3: 2, 1: 3}


def test_xp_counts_placement_groups_and_survival_from_round_20() -> None:
    """R20: 1st 200 + 25 per complete colour group + 50 for surviving; a card for the win."""
    state = new_game("classic", 2, 1, first_seat=0)
    state = with_overrides(state, {"round": 30, "squares": {"1": {"owner": 0}, "3": {"owner": 0}}})
    state, _ = apply(state, Resign(1), 1.0)
    winner, loser = seat_results(state)
    assert winner["place"] == 1 and winner["complete_groups"] == 1
    assert winner["xp"] == 200 + 25 + 50 and winner["cards_won"] == 1
    assert loser["place"] == 2 and not loser["survived"] and loser["xp"] == 100


def test_a_game_ending_before_round_20_pays_no_xp() -> None:
    """R20: a game that ends before round 20 pays nothing."""
    state = new_game("classic", 3, 1, first_seat=0)
    state, _ = apply(state, Resign(1), 1.0)
    state, _ = apply(state, Resign(2), 2.0)
    assert [r["xp"] for r in seat_results(state)] == [0, 0, 0]
    assert [r["cards_won"] for r in seat_results(state)] == [0, 0, 0]
