"""Progression math of RULES.md R20, told as short stories."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opolyx_rules.board import PROPERTY_SQUARES
from opolyx_rules.progression import (
    Card,
    Rank,
    Rarity,
    XpAward,
    best_boost,
    boosts_by_square,
    card_drop_levels,
    cards_for_game,
    draw_card,
    is_card_drop_level,
    level_for_xp,
    rank_for_level,
    rarity_for_roll,
    xp_award,
    xp_for_level,
    xp_for_seat,
)


class ScriptedRng:
    """Answers ``randbelow`` from a fixed script, checking each answer fits the range."""

    def __init__(self, values: Iterable[int]) -> None:
        self._values = iter(values)
        self.asked: list[int] = []

    def randbelow(self, n: int, /) -> int:
        self.asked.append(n)
        value = next(self._values)
        assert 0 <= value < n
        return value


# --- XP (R20) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("place", "expected"), [(1, 200), (2, 100), (3, 60), (4, 40), (5, 40), (6, 40)]
)
def test_placement_pays_200_100_60_then_40_for_every_other_place(place: int, expected: int) -> None:
    # R20: placement 1st 200, 2nd 100, 3rd 60, others 40
    award = xp_award(place=place, complete_groups=0, survived=False, final_round=30)
    assert award == XpAward(placement=expected, groups=0, survival=0)


def test_a_surviving_winner_with_two_full_groups_earns_placement_groups_and_survival() -> None:
    # R20: + 25 per complete colour group held at the end; + 50 for surviving to the end
    award = xp_award(place=1, complete_groups=2, survived=True, final_round=40)
    assert award == XpAward(placement=200, groups=50, survival=50)
    assert award.total == 300
    assert xp_for_seat(place=1, complete_groups=2, survived=True, final_round=40) == 300


def test_a_seat_that_went_out_gets_no_survival_bonus() -> None:
    award = xp_award(place=4, complete_groups=0, survived=False, final_round=25)
    assert award.survival == 0
    assert award.total == 40


@pytest.mark.parametrize("final_round", [1, 10, 19])
def test_a_game_ending_before_round_20_pays_nothing(final_round: int) -> None:
    # R20: a game that ends before round 20 pays nothing
    award = xp_award(place=1, complete_groups=3, survived=True, final_round=final_round)
    assert award == XpAward(placement=0, groups=0, survival=0)


def test_a_game_ending_during_round_20_pays_in_full() -> None:
    # "before round 20" means final round < 20; ending in round 20 itself pays.
    assert xp_for_seat(place=1, complete_groups=1, survived=True, final_round=20) == 275


def test_in_team_mode_every_winner_is_placed_first_and_earns_first_place_xp() -> None:
    # R20: in Team mode every member of the winning side is placed first. The engine
    # computes the places; both winners arrive here with place=1.
    winners = [
        xp_award(place=1, complete_groups=0, survived=True, final_round=60),
        xp_award(place=1, complete_groups=1, survived=False, final_round=60),
    ]
    assert [w.placement for w in winners] == [200, 200]
    assert [w.total for w in winners] == [250, 225]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"place": 0, "complete_groups": 0, "survived": True, "final_round": 30},
        {"place": 1, "complete_groups": -1, "survived": True, "final_round": 30},
        {"place": 1, "complete_groups": 9, "survived": True, "final_round": 30},
        {"place": 1, "complete_groups": 0, "survived": True, "final_round": 0},
    ],
)
def test_impossible_xp_inputs_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        xp_award(**kwargs)  # type: ignore[arg-type]


# --- Levels and ranks (R20) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "xp"), [(1, 0), (2, 100), (3, 300), (4, 600), (5, 1000), (10, 4500), (50, 122500)]
)
def test_level_l_needs_100_times_l_times_l_minus_1_over_2_xp(level: int, xp: int) -> None:
    # R20: level L needs 100 * L * (L - 1) / 2 total XP (level 1 at 0 XP)
    assert xp_for_level(level) == xp
    assert level_for_xp(xp) == level
    assert level_for_xp(xp - 1 if xp else 0) == max(1, level - 1)


def test_a_new_player_is_level_1_and_one_xp_short_of_level_2_stays_there() -> None:
    assert level_for_xp(0) == 1
    assert level_for_xp(99) == 1
    assert level_for_xp(100) == 2
    assert level_for_xp(299) == 2


@pytest.mark.parametrize(
    ("level", "rank"),
    [
        (1, Rank.BRONZE),
        (9, Rank.BRONZE),
        (10, Rank.SILVER),
        (19, Rank.SILVER),
        (20, Rank.GOLD),
        (29, Rank.GOLD),
        (30, Rank.PLATINUM),
        (39, Rank.PLATINUM),
        (40, Rank.DIAMOND),
        (49, Rank.DIAMOND),
        (50, Rank.MASTER),
        (500, Rank.MASTER),
    ],
)
def test_ranks_change_at_levels_10_20_30_40_50(level: int, rank: Rank) -> None:
    # R20: Bronze 1-9, Silver 10-19, Gold 20-29, Platinum 30-39, Diamond 40-49, Master 50+
    assert rank_for_level(level) == rank


def test_a_rank_reads_as_its_name() -> None:
    assert rank_for_level(12) == "Silver"


def test_negative_xp_and_level_zero_are_refused() -> None:
    with pytest.raises(ValueError):
        level_for_xp(-1)
    with pytest.raises(ValueError):
        xp_for_level(0)
    with pytest.raises(ValueError):
        rank_for_level(0)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=10**6))
def test_more_xp_never_means_a_lower_level(xp: int, extra: int) -> None:
    assert level_for_xp(xp + extra) >= level_for_xp(xp)


@given(st.integers(min_value=1, max_value=10**6))
def test_level_for_xp_inverts_xp_for_level(level: int) -> None:
    assert level_for_xp(xp_for_level(level)) == level
    assert level_for_xp(xp_for_level(level + 1) - 1) == level


@given(st.integers(min_value=0, max_value=10**12))
def test_the_level_of_some_xp_is_the_highest_level_it_affords(xp: int) -> None:
    level = level_for_xp(xp)
    assert xp_for_level(level) <= xp < xp_for_level(level + 1)


# --- Card drops (R20) ---------------------------------------------------------------------


def test_cards_drop_at_level_2_and_every_5th_level_from_5() -> None:
    # R20: one drops at levels 2, 5, 10, 15, 20, ...
    assert [lv for lv in range(1, 31) if is_card_drop_level(lv)] == [2, 5, 10, 15, 20, 25, 30]


def test_levelling_from_1_to_11_crosses_three_drop_levels() -> None:
    assert card_drop_levels(1, 11) == [2, 5, 10]


def test_the_old_level_was_already_rewarded_and_the_new_one_counts() -> None:
    # (old, new]: reaching 5 from 2 drops for 5, not again for 2
    assert card_drop_levels(2, 5) == [5]
    assert card_drop_levels(5, 9) == []
    assert card_drop_levels(7, 7) == []


def test_levels_going_down_are_refused() -> None:
    with pytest.raises(ValueError):
        card_drop_levels(6, 5)


@pytest.mark.parametrize(
    ("won", "final_round", "cards"),
    [(True, 20, 1), (True, 200, 1), (True, 19, 0), (False, 200, 0), (False, 5, 0)],
)
def test_a_win_drops_one_card_but_not_before_round_20(
    won: bool, final_round: int, cards: int
) -> None:
    # R20: a card drops for every game won (not before round 20)
    assert cards_for_game(won=won, final_round=final_round) == cards


def test_rolls_0_to_99_give_exactly_50_25_15_7_3() -> None:
    # R20: common 50%, uncommon 25%, rare 15%, epic 7%, legendary 3%
    rng = ScriptedRng(v for r in range(100) for v in (0, r))
    drawn = Counter(draw_card(rng).rarity for _ in range(100))
    assert drawn == {
        Rarity.COMMON: 50,
        Rarity.UNCOMMON: 25,
        Rarity.RARE: 15,
        Rarity.EPIC: 7,
        Rarity.LEGENDARY: 3,
    }


def test_rarity_bands_sit_on_cumulative_weights() -> None:
    assert [rarity_for_roll(r) for r in (0, 49, 50, 74, 75, 89, 90, 96, 97, 99)] == [
        Rarity.COMMON,
        Rarity.COMMON,
        Rarity.UNCOMMON,
        Rarity.UNCOMMON,
        Rarity.RARE,
        Rarity.RARE,
        Rarity.EPIC,
        Rarity.EPIC,
        Rarity.LEGENDARY,
        Rarity.LEGENDARY,
    ]


def test_every_property_square_is_equally_likely() -> None:
    # R20: a card names one of the 28 property squares (uniformly)
    rng = ScriptedRng(v for i in range(28) for v in (i, 0))
    squares = [draw_card(rng).square for _ in range(28)]
    assert sorted(squares) == sorted(PROPERTY_SQUARES)
    assert len(set(squares)) == 28


def test_a_draw_asks_for_the_square_first_then_the_rarity() -> None:
    rng = ScriptedRng([27, 99])
    assert draw_card(rng) == Card(39, Rarity.LEGENDARY)
    assert rng.asked == [28, 100]


def test_an_rng_answer_out_of_range_is_refused() -> None:
    class Broken:
        def randbelow(self, n: int, /) -> int:
            return n

    with pytest.raises(ValueError):
        draw_card(Broken())


def test_rarities_carry_their_rent_boost() -> None:
    # R20: +3%, +6%, +10%, +20%, +33%
    assert [r.boost_pct for r in Rarity] == [3, 6, 10, 20, 33]


def test_a_card_must_name_a_property_square() -> None:
    with pytest.raises(ValueError):
        Card(0, Rarity.COMMON)  # Start is not a property


# --- Boosts (R20) -------------------------------------------------------------------------


def test_only_the_best_card_for_a_square_counts_and_boosts_never_stack() -> None:
    # R20: only the owner's best card for a square counts; capped at 33%
    cards = [Card(39, Rarity.LEGENDARY), Card(39, Rarity.EPIC), Card(39, Rarity.RARE)]
    assert best_boost(cards, 39) == 33


def test_several_small_cards_for_a_square_do_not_add_up() -> None:
    cards = [Card(1, Rarity.COMMON)] * 5 + [Card(1, Rarity.UNCOMMON)]
    assert best_boost(cards, 1) == 6


def test_a_card_boosts_only_its_exact_square() -> None:
    # a card for Brambleway (1) does nothing for Mudlark Lane (3), same group
    cards = [Card(1, Rarity.EPIC)]
    assert best_boost(cards, 3) == 0
    assert best_boost([], 1) == 0


def test_a_seat_brings_its_best_boost_per_square_to_a_new_game() -> None:
    cards = [
        Card(39, Rarity.COMMON),
        Card(39, Rarity.LEGENDARY),
        Card(5, Rarity.RARE),
        Card(12, Rarity.COMMON),
        Card(5, Rarity.UNCOMMON),
    ]
    assert boosts_by_square(cards) == {5: 10, 12: 3, 39: 33}
    assert boosts_by_square([]) == {}


@given(st.lists(st.builds(Card, st.sampled_from(PROPERTY_SQUARES), st.sampled_from(Rarity))))
def test_no_boost_ever_exceeds_33_percent(cards: list[Card]) -> None:
    boosts = boosts_by_square(cards)
    assert all(0 < b <= 33 for b in boosts.values())
    assert all(best_boost(cards, sq) == boosts.get(sq, 0) for sq in PROPERTY_SQUARES)
