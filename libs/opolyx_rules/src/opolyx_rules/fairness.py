"""Checking a finished game's dice against its revealed seed (docs/DICE.md specifies it).

A game publishes ``seed_commitment`` (SHA-256 of the seed's decimal string) when it starts
and reveals the seed when it ends. Every chance outcome of the game is drawn from one
SplitMix64 generator seeded with that seed, in the order the events report them, so the
seed alone says what every die and card must have been. ``check_dice`` walks the events,
draws what the seed gives for each chance event, and reports the first difference.

Pure: a seed and events in, a verdict out. The browser's "verify fairness" view
(static/js/replay/fairness.js) implements the same walk; a test keeps the two in step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .chance import ALL_CARDS_MASK, DECK_SIZE, SPEED_DIE_FACES
from .commands import command_from_json
from .engine import SeatSetup, apply, new_game, seed_commitment
from .errors import RulesError
from .events import event_to_json
from .forking import fork_position
from .jsonio import public_view
from .rng import randbelow, seed_state, two_dice

__all__ = [
    "REPLAY_FORMAT",
    "Check",
    "DiceVerdict",
    "check_commitment",
    "check_dice",
    "verify_replay",
]


def check_commitment(seed: int, commitment: str) -> bool:
    """Whether SHA-256 of the seed's decimal string (``seed_commitment``) is ``commitment``."""
    return seed_commitment(seed) == commitment.lower()


@dataclass(frozen=True, slots=True)
class DiceVerdict:
    ok: bool
    message: str
    draws: int = 0
    """Chance outcomes checked (a roll of two dice counts once)."""
    counts: dict[str, int] = field(default_factory=dict)
    """Checked outcomes by kind: first_seat, dice, speed_die, jackpot_die, card."""
    event_index: int | None = None
    """Index (in the events given) of the first event the seed contradicts."""


def check_dice(
    seed: int,
    events: Iterable[Mapping[str, Any]],
    *,
    seats: int | None = None,
    first_seat: int | None = None,
) -> DiceVerdict:
    """Whether every chance outcome in ``events`` (rules events as JSON, in game order) is
    the one ``seed`` draws. ``seats`` and ``first_seat``: when the game drew its first
    seat (every game a table creates does; a game forked from a position does not), the
    draw ``randbelow(seats)`` comes first and must equal ``first_seat``."""
    rng = seed_state(seed)
    counts = {"first_seat": 0, "dice": 0, "speed_die": 0, "jackpot_die": 0, "card": 0}
    if first_seat is not None:
        if seats is None or seats <= 0:
            raise ValueError("checking the first seat needs the seat count")
        drawn, rng = randbelow(rng, seats)
        if drawn != first_seat:
            return DiceVerdict(
                False,
                f"the seed draws seat {drawn} to start, the game started with seat {first_seat}",
                0,
                counts,
                None,
            )
        counts["first_seat"] = 1
    drawn_cards = 0
    for index, event in enumerate(events):
        kind = event.get("type")
        if kind == "dice_rolled":
            a, b, rng = two_dice(rng)
            expected = [a + 1, b + 1]
            if list(event.get("white", ())) != expected:
                return _differs(index, event, f"dice {expected}", event.get("white"), counts)
            counts["dice"] += 1
            third = event.get("third")
            if third is not None:
                face, rng = randbelow(rng, 6)
                if SPEED_DIE_FACES[face].value != third:
                    return _differs(
                        index, event, f"Speed die {SPEED_DIE_FACES[face].value!r}", third, counts
                    )
                counts["speed_die"] += 1
        elif kind == "jackpot_played":
            face, rng = randbelow(rng, 6)
            if event.get("die") != face + 1:
                return _differs(index, event, f"Jackpot die {face + 1}", event.get("die"), counts)
            counts["jackpot_die"] += 1
        elif kind == "card_drawn":
            reshuffled = (drawn_cards & ALL_CARDS_MASK) == ALL_CARDS_MASK
            if reshuffled:
                drawn_cards = 0
            remaining = [c for c in range(1, DECK_SIZE + 1) if not drawn_cards & (1 << c)]
            pick, rng = randbelow(rng, len(remaining))
            card = remaining[pick]
            if event.get("card") != card or bool(event.get("reshuffled")) != reshuffled:
                return _differs(index, event, f"card {card}", event.get("card"), counts)
            drawn_cards |= 1 << card
            counts["card"] += 1
    total = sum(counts.values())
    return DiceVerdict(
        True, f"all {total} chance outcomes are the ones the seed draws", total, counts, None
    )


def _differs(
    index: int, event: Mapping[str, Any], expected: str, found: Any, counts: dict[str, int]
) -> DiceVerdict:
    seat = event.get("seat")
    who = f" of seat {seat}" if seat is not None else ""
    return DiceVerdict(
        False,
        f"event {index} ({event.get('type')}{who}): the seed draws {expected}, "
        f"the game shows {found!r}",
        sum(counts.values()),
        counts,
        index,
    )


# -- a whole game from its replay file -------------------------------------------------------

REPLAY_FORMAT = "opolyx-replay"
REPLAY_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    message: str


def verify_replay(data: Mapping[str, Any]) -> list[Check]:
    """Every check of a replay file (the format is in docs/DICE.md): the seed against the
    commitment, the dice against the seed, and the whole game played again from the seed
    with the recorded commands, which must give the recorded events exactly. The checks
    after the first failing one are still run when they can be."""

    if data.get("format") != REPLAY_FORMAT or data.get("format_version") != REPLAY_FORMAT_VERSION:
        return [Check("format", False, f"not an {REPLAY_FORMAT} file of version 1")]
    seed = data.get("seed")
    commitment = data.get("seed_commitment")
    if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(commitment, str):
        return [Check("seed", False, "the file has no revealed seed (the game is not over?)")]
    checks = [
        Check(
            "commitment",
            check_commitment(seed, commitment),
            f"sha256({seed}) = {seed_commitment(seed)}; the game committed to {commitment}",
        )
    ]
    initial = data.get("initial") or {}
    batches = data.get("batches") or []
    events = [event for batch in batches for event in batch.get("events", [])]
    drawn = bool(data.get("first_seat_drawn", True))
    seats = data.get("seats") or []
    verdict = check_dice(
        seed,
        events,
        seats=len(seats),
        first_seat=initial.get("first_seat") if drawn else None,
    )
    checks.append(Check("dice", verdict.ok, verdict.message))
    try:
        if drawn:
            setups = [
                SeatSetup({int(sq): int(pct) for sq, pct in (s.get("boosts") or {}).items()})
                for s in seats
            ]
            state = new_game(str(data.get("mode")), setups, seed)
        else:
            state = fork_position(initial, seed)
    except (RulesError, TypeError, ValueError, AttributeError) as exc:
        checks.append(Check("start", False, f"the game cannot be set up again: {exc}"))
        return checks
    start_ok = _plain(public_view(state)) == _plain(initial)
    checks.append(
        Check(
            "start",
            start_ok,
            "the seed sets up the published starting position"
            if start_ok
            else "the seed sets up another starting position than the published one",
        )
    )
    for number, batch in enumerate(batches):
        try:
            command = command_from_json(batch["command"])
            state, produced = apply(state, command, float(batch["at"]))
        except (RulesError, KeyError, TypeError, ValueError) as exc:
            checks.append(Check("replay", False, f"command {number} cannot be played: {exc}"))
            return checks
        if _plain([event_to_json(e) for e in produced]) != _plain(batch.get("events", [])):
            checks.append(
                Check(
                    "replay",
                    False,
                    f"command {number} ({batch['command'].get('type')}) gives other events "
                    "than the recorded ones",
                )
            )
            return checks
    checks.append(
        Check("replay", True, f"all {len(batches)} commands give exactly the recorded events")
    )
    return checks


def _plain(value: Any) -> Any:
    """The JSON value (enums as their strings, tuples as lists) for comparing."""
    return json.loads(json.dumps(value))
