"""A small deterministic random number generator whose whole state is one integer.

The state of the generator is part of the game state (the design allows no global
randomness), so it must be small and JSON-friendly: SplitMix64 keeps a single 64-bit
counter. Draws are unbiased (rejection sampling), so dice are exactly fair.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def seed_state(seed: int) -> int:
    """The generator state for a game seed (any integer, reduced to 64 bits)."""
    return mix(seed & _MASK)


def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def next_u64(state: int) -> tuple[int, int]:
    """One 64-bit draw: returns (value, next state)."""
    state = (state + _GAMMA) & _MASK
    return mix(state), state


def randbelow(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in [0, n): returns (value, next state)."""
    if n <= 0:
        raise ValueError("randbelow needs n > 0")
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        # next_u64 and mix, written out: this runs for every die.
        state = (state + _GAMMA) & _MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        if z < limit:
            return z % n, state


_LIMIT_6 = (1 << 64) - ((1 << 64) % 6)


def two_dice(state: int) -> tuple[int, int, int]:
    """Two draws in [0, 6): ``randbelow(state, 6)`` twice, written out because every roll
    needs it. Returns (first, second, next state)."""
    while True:
        state = (state + _GAMMA) & _MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        if z < _LIMIT_6:
            first = z % 6
            break
    while True:
        state = (state + _GAMMA) & _MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        if z < _LIMIT_6:
            return first, z % 6, state


class Rng:
    """A mutable view over the integer state, for callers outside the engine
    (progression card drops, bots): ``Rng(seed).randbelow(6)``."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed_state(seed)

    def randbelow(self, n: int) -> int:
        value, self.state = randbelow(self.state, n)
        return value
