"""Chance outcomes: dice, the Speed die, the Jackpot die and event-card draws.

Each draw is a pure function of (rng, script) returning the outcome and the advanced
(rng, script). The engine draws to learn the outcome it puts in an event; ``evolve``
draws again from the same inputs to advance the state, so replaying events consumes
exactly the same randomness without the events ever carrying the RNG state.
"""

from __future__ import annotations

from functools import lru_cache

from .rng import randbelow, two_dice
from .state import Script, SpeedFace

SPEED_DIE_FACES: tuple[SpeedFace, ...] = (
    SpeedFace.ONE,
    SpeedFace.TWO,
    SpeedFace.THREE,
    SpeedFace.BUS,
    SpeedFace.X,
    SpeedFace.X,
)
DECK_SIZE = 16
ALL_CARDS_MASK = ((1 << (DECK_SIZE + 1)) - 1) & ~1  # bits 1..16


DiceDraw = tuple[tuple[int, int], int, Script]
#: the last dice draw: (rng, script, result). The engine draws the dice to put them in an
#: event and ``evolve`` draws them again from the very same inputs to advance the state;
#: remembering one pure result saves the second draw on every roll. One tuple, replaced
#: whole, so concurrent callers can only miss, never see a mixed entry.
_LAST_DICE: list[tuple[int, Script, DiceDraw] | None] = [None]


def draw_dice(rng: int, script: Script) -> DiceDraw:
    last = _LAST_DICE[0]
    if last is not None and last[0] == rng and last[1] is script:
        return last[2]
    if script.dice:
        a, b = script.dice[0]
        result: DiceDraw = ((a, b), rng, script._replace(dice=script.dice[1:]))
    else:
        first, second, after = two_dice(rng)
        result = ((first + 1, second + 1), after, script)
    _LAST_DICE[0] = (rng, script, result)
    return result


# The same for the (rarer) Speed die: a small cache of the pure function.


@lru_cache(maxsize=16)
def draw_speed_die(rng: int, script: Script) -> tuple[SpeedFace, int, Script]:
    if script.speed_die:
        face = SpeedFace(script.speed_die[0])
        return face, rng, script._replace(speed_die=script.speed_die[1:])
    index, rng = randbelow(rng, 6)
    return SPEED_DIE_FACES[index], rng, script


def draw_jackpot_die(rng: int, script: Script) -> tuple[int, int, Script]:
    if script.jackpot_die:
        return script.jackpot_die[0], rng, script._replace(jackpot_die=script.jackpot_die[1:])
    face, rng = randbelow(rng, 6)
    return face + 1, rng, script


def draw_card(rng: int, script: Script, drawn: int) -> tuple[int, bool, int, Script]:
    """Draw a card not yet drawn since the last shuffle (R15).

    Returns (card, reshuffled, rng, script); ``reshuffled`` says the deck was shuffled
    anew before this draw because all 16 had been drawn.
    """
    reshuffled = (drawn & ALL_CARDS_MASK) == ALL_CARDS_MASK
    if reshuffled:
        drawn = 0
    if script.deck:
        return script.deck[0], reshuffled, rng, script._replace(deck=script.deck[1:])
    remaining = _remaining(drawn)
    index, rng = randbelow(rng, len(remaining))
    return remaining[index], reshuffled, rng, script


@lru_cache(maxsize=4096)
def _remaining(drawn: int) -> tuple[int, ...]:
    """The cards not drawn since the last shuffle, in order (drawn twice per card: by the
    engine and by ``evolve``)."""
    return tuple(c for c in range(1, DECK_SIZE + 1) if not drawn & (1 << c))
