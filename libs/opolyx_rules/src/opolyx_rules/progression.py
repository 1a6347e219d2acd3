"""Progression math of RULES.md R20: XP, levels, ranks, collectible cards and their boosts.

Every function here is pure: no I/O, no clock, no global randomness. A card drop takes its
randomness from an RNG passed in: anything with ``randbelow(n) -> int`` (the ``secrets``
module itself fits, as does a seeded generator in tests), so the caller decides where
chance comes from and can record it.

The inputs are plain values rather than the engine's ``State`` so that the table service and
the progression service can call these without holding a game. Nothing about progression is
computed anywhere else.

Rounds are numbered from 1 (R3). ``final_round`` always means the number of the round during
which the game ended, i.e. the last round that was (at least partly) played. R20's "a game
that ends before round 20 pays nothing" is read as ``final_round < 20``: a game that ends
anywhere in round 20 pays in full.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from math import isqrt
from typing import Protocol

from opolyx_rules.board import PROPERTY_SLOT, PROPERTY_SQUARES, STREET_GROUPS

__all__ = [
    "BOOST_CAP_PCT",
    "CARDS_PER_WIN",
    "CARD_DROP_FIRST_LEVEL",
    "CARD_DROP_LEVEL_STEP",
    "GROUP_XP",
    "MIN_PAYING_ROUND",
    "OTHER_PLACE_XP",
    "PLACEMENT_XP",
    "RANK_FLOORS",
    "RARITY_BOOST_PCT",
    "RARITY_ORDER",
    "RARITY_WEIGHT",
    "SURVIVAL_XP",
    "XP_PER_LEVEL_STEP",
    "Card",
    "RandBelow",
    "Rank",
    "Rarity",
    "XpAward",
    "best_boost",
    "boosts_by_square",
    "card_drop_levels",
    "cards_for_game",
    "draw_card",
    "is_card_drop_level",
    "level_for_xp",
    "rank_for_level",
    "rarity_for_roll",
    "xp_award",
    "xp_for_level",
    "xp_for_seat",
]


class RandBelow(Protocol):
    """The only randomness this module uses: a uniform integer in ``[0, n)``."""

    def randbelow(self, n: int, /) -> int: ...


# --- Tables (R20) -----------------------------------------------------------------------

#: A game whose final round is below this pays no XP and drops no card for the win.
MIN_PAYING_ROUND = 20
#: XP by place: 1st, 2nd, 3rd. Every later place gets ``OTHER_PLACE_XP``.
PLACEMENT_XP: tuple[int, ...] = (200, 100, 60)
OTHER_PLACE_XP = 40
#: XP per complete colour group held at the end of the game.
GROUP_XP = 25
#: XP for still being in the game when it ends.
SURVIVAL_XP = 50
#: Level L needs ``XP_PER_LEVEL_STEP * L * (L - 1) / 2`` total XP.
XP_PER_LEVEL_STEP = 100
#: A card drops at this level and at every ``CARD_DROP_LEVEL_STEP``-th level.
CARD_DROP_FIRST_LEVEL = 2
CARD_DROP_LEVEL_STEP = 5
#: Cards dropped for a won game (final round at least ``MIN_PAYING_ROUND``).
CARDS_PER_WIN = 1
#: No card boost ever exceeds this percentage.
BOOST_CAP_PCT = 33


class Rank(StrEnum):
    BRONZE = "Bronze"
    SILVER = "Silver"
    GOLD = "Gold"
    PLATINUM = "Platinum"
    DIAMOND = "Diamond"
    MASTER = "Master"


#: (lowest level, rank), in increasing order of level.
RANK_FLOORS: tuple[tuple[int, Rank], ...] = (
    (1, Rank.BRONZE),
    (10, Rank.SILVER),
    (20, Rank.GOLD),
    (30, Rank.PLATINUM),
    (40, Rank.DIAMOND),
    (50, Rank.MASTER),
)


class Rarity(StrEnum):
    COMMON = "common"
    UNCOMMON = "uncommon"
    RARE = "rare"
    EPIC = "epic"
    LEGENDARY = "legendary"

    @property
    def boost_pct(self) -> int:
        """The rent boost of a card of this rarity, in percent."""
        return RARITY_BOOST_PCT[self]

    @property
    def weight(self) -> int:
        """The chance of this rarity on a drop, in percent."""
        return RARITY_WEIGHT[self]


#: Rarities in the order their weights are laid out on the 0..99 roll.
RARITY_ORDER: tuple[Rarity, ...] = (
    Rarity.COMMON,
    Rarity.UNCOMMON,
    Rarity.RARE,
    Rarity.EPIC,
    Rarity.LEGENDARY,
)
#: Drop chance in percent; sums to 100.
RARITY_WEIGHT: dict[Rarity, int] = {
    Rarity.COMMON: 50,
    Rarity.UNCOMMON: 25,
    Rarity.RARE: 15,
    Rarity.EPIC: 7,
    Rarity.LEGENDARY: 3,
}
#: Rent boost in percent.
RARITY_BOOST_PCT: dict[Rarity, int] = {
    Rarity.COMMON: 3,
    Rarity.UNCOMMON: 6,
    Rarity.RARE: 10,
    Rarity.EPIC: 20,
    Rarity.LEGENDARY: 33,
}
_RARITY_ROLL = sum(RARITY_WEIGHT.values())
assert _RARITY_ROLL == 100, "rarity weights must sum to 100 percent"


# --- XP -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class XpAward:
    """The XP one seat earns from one finished game, by source."""

    placement: int
    groups: int
    survival: int

    @property
    def total(self) -> int:
        return self.placement + self.groups + self.survival


_NOTHING = XpAward(placement=0, groups=0, survival=0)


def xp_award(*, place: int, complete_groups: int, survived: bool, final_round: int) -> XpAward:
    """The XP of one seat of a finished game, broken down (R20).

    ``place`` is the seat's place as the engine computed it, 1 for the winner. In Team mode
    every member of the winning side is placed first, so the caller passes ``place=1`` for
    each of them; this function does not know about teams. ``complete_groups`` counts the
    colour groups (streets only, at most 8) the seat holds entirely at the end; ``survived``
    is whether the seat was still in the game when it ended; ``final_round`` is the round in
    which the game ended. A game with ``final_round < 20`` pays nothing.

    Raises ``ValueError`` for a place below 1, a group count outside 0..8 or a round below 1.
    """
    if place < 1:
        raise ValueError(f"place must be 1 or more (1 is the winner), got {place}")
    if not 0 <= complete_groups <= len(STREET_GROUPS):
        raise ValueError(
            f"complete_groups must be between 0 and {len(STREET_GROUPS)}, got {complete_groups}"
        )
    if final_round < 1:
        raise ValueError(f"final_round must be 1 or more (rounds start at 1), got {final_round}")
    if final_round < MIN_PAYING_ROUND:
        return _NOTHING
    placement = PLACEMENT_XP[place - 1] if place <= len(PLACEMENT_XP) else OTHER_PLACE_XP
    return XpAward(
        placement=placement,
        groups=GROUP_XP * complete_groups,
        survival=SURVIVAL_XP if survived else 0,
    )


def xp_for_seat(*, place: int, complete_groups: int, survived: bool, final_round: int) -> int:
    """Total XP of one seat of a finished game; see :func:`xp_award`."""
    return xp_award(
        place=place,
        complete_groups=complete_groups,
        survived=survived,
        final_round=final_round,
    ).total


# --- Levels and ranks ---------------------------------------------------------------------


def xp_for_level(level: int) -> int:
    """Total XP needed to reach ``level`` (level 1 at 0 XP). Raises ``ValueError`` below 1."""
    if level < 1:
        raise ValueError(f"levels start at 1, got {level}")
    return XP_PER_LEVEL_STEP * level * (level - 1) // 2


def level_for_xp(total_xp: int) -> int:
    """The level reached with ``total_xp``: the largest L with ``xp_for_level(L) <= total_xp``.

    Raises ``ValueError`` for negative XP.
    """
    if total_xp < 0:
        raise ValueError(f"total XP cannot be negative, got {total_xp}")
    # L(L-1) <= 2 * xp / step  <=>  L <= (1 + sqrt(1 + 4k)) / 2 with k = floor(2 * xp / step)
    k = 2 * total_xp // XP_PER_LEVEL_STEP
    return (1 + isqrt(1 + 4 * k)) // 2


def rank_for_level(level: int) -> Rank:
    """The rank of a level (a ``str`` enum: "Bronze" ... "Master"). ``ValueError`` below 1."""
    if level < 1:
        raise ValueError(f"levels start at 1, got {level}")
    rank = RANK_FLOORS[0][1]
    for floor_level, floor_rank in RANK_FLOORS:
        if level >= floor_level:
            rank = floor_rank
    return rank


# --- Card drops ---------------------------------------------------------------------------


def is_card_drop_level(level: int) -> bool:
    """Whether reaching ``level`` drops a card: level 2 and every 5th level (5, 10, ...)."""
    return level == CARD_DROP_FIRST_LEVEL or (level > 0 and level % CARD_DROP_LEVEL_STEP == 0)


def card_drop_levels(old_level: int, new_level: int) -> list[int]:
    """The card-dropping levels crossed going from ``old_level`` to ``new_level``.

    The interval is ``(old_level, new_level]``: the old level was already rewarded.
    Raises ``ValueError`` if a level is below 1 or the new level is below the old one.
    """
    if old_level < 1 or new_level < 1:
        raise ValueError(f"levels start at 1, got {old_level} -> {new_level}")
    if new_level < old_level:
        raise ValueError(f"levels never go down, got {old_level} -> {new_level}")
    return [lv for lv in range(old_level + 1, new_level + 1) if is_card_drop_level(lv)]


def cards_for_game(*, won: bool, final_round: int) -> int:
    """Cards dropped for a game's result: one for a win, none before round 20 (R20).

    In Team mode every member of the winning side counts as having won.
    """
    if final_round < 1:
        raise ValueError(f"final_round must be 1 or more (rounds start at 1), got {final_round}")
    return CARDS_PER_WIN if won and final_round >= MIN_PAYING_ROUND else 0


@dataclass(frozen=True, slots=True)
class Card:
    """A collectible card: one property square (board index) and a rarity."""

    square: int
    rarity: Rarity

    def __post_init__(self) -> None:
        if self.square not in PROPERTY_SLOT:
            raise ValueError(f"a card names a property square, {self.square} is not one")

    @property
    def boost_pct(self) -> int:
        return self.rarity.boost_pct


def _below(rng: RandBelow, n: int) -> int:
    value = rng.randbelow(n)
    if not 0 <= value < n:
        raise ValueError(f"rng.randbelow({n}) returned {value}, outside 0..{n - 1}")
    return value


def rarity_for_roll(roll: int) -> Rarity:
    """The rarity of a roll in 0..99 against the cumulative weights (0-49 common, ...)."""
    if not 0 <= roll < _RARITY_ROLL:
        raise ValueError(f"a rarity roll is in 0..{_RARITY_ROLL - 1}, got {roll}")
    ceiling = 0
    for rarity in RARITY_ORDER:
        ceiling += RARITY_WEIGHT[rarity]
        if roll < ceiling:
            return rarity
    raise AssertionError("unreachable: the weights sum to the roll range")


def draw_card(rng: RandBelow) -> Card:
    """Draw one card: ``rng.randbelow(28)`` picks the square, then ``rng.randbelow(100)``
    the rarity. The two calls are made in that order, always, so a recorded sequence of
    draws reproduces the card.
    """
    square = PROPERTY_SQUARES[_below(rng, len(PROPERTY_SQUARES))]
    rarity = rarity_for_roll(_below(rng, _RARITY_ROLL))
    return Card(square, rarity)


# --- Boosts -------------------------------------------------------------------------------


def capped_boost(pct: int) -> int:
    """A card's rent boost within the cap (R20): the one place the cap is applied."""
    return min(BOOST_CAP_PCT, pct)


def best_boost(cards: Iterable[Card], square: int) -> int:
    """The rent boost in percent of the owner's best card for exactly ``square``.

    Boosts never stack: only the best card counts, capped at 33. 0 without a card.
    """
    return capped_boost(max((c.boost_pct for c in cards if c.square == square), default=0))


def boosts_by_square(cards: Iterable[Card]) -> dict[int, int]:
    """Square -> best boost in percent, for every square the cards name (R20).

    This is what a seat brings to a new game; the boosts are fixed when the game starts.
    """
    best: dict[int, int] = {}
    for card in cards:
        best[card.square] = capped_boost(max(best.get(card.square, 0), card.boost_pct))
    return dict(sorted(best.items()))
