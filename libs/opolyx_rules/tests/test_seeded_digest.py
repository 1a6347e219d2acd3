"""Seeded simulated games end exactly as they did before the speed work (issue 15).

The digests below were recorded with the library as it was before issue 15 changed any
code (commit 82c6c84). A faster engine must produce the same games: the same final
results for every seed, and the same event stream, event for event. If a digest changes,
either a rule changed on purpose (then RULES.md, the rules version and the golden replays
change with it) or the optimisation is wrong.

To print the digests of the current code::

    .tools/bin/uv run --frozen --no-sync python libs/opolyx_rules/tests/test_seeded_digest.py
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from opolyx_rules import MODES, event_to_json, public_view
from opolyx_rules.simulate import play_game

#: (mode, seat counts) played for the results digest: every mode, small and large tables
RESULT_GAMES: tuple[tuple[str, tuple[int, ...]], ...] = tuple(
    (name, (4, 6) if name == "team" else (2, 4, 6)) for name in MODES
)
RESULT_SEEDS = range(4)
#: recorded before issue 15 changed any code
RESULTS_DIGEST = "de6222543728b95bc0249cd11d357c2676ee30ff02517efb9b26ad15b7a8d3b4"
EVENTS_DIGEST = "0bc93e65f764b10933d919f904a08d5dd45a71f0d2f4b51bc83bea6c8a75f369"


def _final(mode: str, seats: int, seed: int) -> dict[str, Any]:
    result = play_game(mode, seats, seed)
    view = public_view(result.state)
    return {
        "game": [mode, seats, seed],
        "commands": result.commands,
        "player_turns": result.player_turns,
        "winner": view["winner"],
        "placement": view["placement"],
        "round": view["round"],
        "reason": view["finish_reason"],
        "seats": view["seats"],
        "squares": view["squares"],
        "pot": view["pot"],
    }


def results_digest() -> str:
    finals = [
        _final(mode, seats, seed)
        for mode, counts in RESULT_GAMES
        for seats in counts
        for seed in RESULT_SEEDS
    ]
    return hashlib.sha256(json.dumps(finals, sort_keys=True).encode()).hexdigest()


def events_digest() -> str:
    digest = hashlib.sha256()
    for mode in MODES:
        result = play_game(mode, 4, 7, keep_events=True)
        for event in result.events:
            digest.update(json.dumps(event_to_json(event), sort_keys=True).encode())
    return digest.hexdigest()


def test_seeded_games_end_with_the_recorded_results() -> None:
    assert results_digest() == RESULTS_DIGEST


def test_seeded_games_produce_the_recorded_event_streams() -> None:
    assert events_digest() == EVENTS_DIGEST


if __name__ == "__main__":
    print("results", results_digest())
    print("events ", events_digest())
