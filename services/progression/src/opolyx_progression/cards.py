"""Card draws with a recorded seed: every drop can be re-derived from its seed (audit).

The draw itself is the rules library's (`opolyx_rules.progression.draw_card`); this module
only supplies its randomness from the seed (the rules' SplitMix64 generator), so a stored
`(seed, square, rarity)` row can be checked by drawing again.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from opolyx_rules import rng
from opolyx_rules.progression import Card, draw_card

__all__ = ["SeedSource", "SeededDraws", "draw_from_seed", "random_seed"]

SeedSource = Callable[[], int]
"""Where a new draw seed comes from (a cryptographic one in production, a counter in tests)."""


class SeededDraws:
    """`randbelow` from a seed: the RNG `draw_card` takes."""

    def __init__(self, seed: int) -> None:
        self._state = rng.seed_state(seed)

    def randbelow(self, n: int, /) -> int:
        value, self._state = rng.randbelow(self._state, n)
        return value


def draw_from_seed(seed: int) -> Card:
    """The card the seed draws (always the same card for the same seed)."""
    return draw_card(SeededDraws(seed))


def random_seed() -> int:
    """A fresh unpredictable seed (fits a signed 64-bit column)."""
    return secrets.randbits(63)
