"""Rules-library benchmark (issue 2, 3): player-turns and games per second per mode on
one core, next to a same-run baseline, and the size of a mid-game state as JSON.

Baseline: a bare loop that only rolls two dice with the same RNG and moves a pawn, the
floor any Python turn costs. The ratio says how many bare turns one full-rules turn is
worth. The issue's target (25,000 player-turns/s, 2.5x the fastest full-rules Python
simulator measured on these machines: 9,400/s) is printed beside it.

    python bench/rules.py [--games N] [--modes classic,speed]
"""

from __future__ import annotations

import argparse
import json
import time

from opolyx_rules import MODES, apply, awaiting, new_game, public_view, state_to_json
from opolyx_rules.rng import randbelow, seed_state
from opolyx_rules.simulate import play_game, simple_policy

TARGET_TURNS_PER_SECOND = 25_000
REFERENCE_SIMULATOR = 9_400
STATE_SIZE_TARGET = 16 * 1024


def bare_turns_per_second(turns: int = 200_000) -> float:
    rng = seed_state(1)
    position = 0
    started = time.perf_counter()
    for _ in range(turns):
        a, rng = randbelow(rng, 6)
        b, rng = randbelow(rng, 6)
        position = (position + a + b + 2) % 40
    return turns / (time.perf_counter() - started)


def mode_figures(mode: str, games: int, seats: int) -> dict[str, float]:
    turns = 0
    started = time.perf_counter()
    for seed in range(games):
        turns += play_game(mode, seats, seed).player_turns
    elapsed = time.perf_counter() - started
    return {"turns_per_second": turns / elapsed, "games_per_second": games / elapsed}


def mid_game_sizes(round_no: int = 60) -> tuple[int, int]:
    """JSON size of a 4-seat Classic state (stored, public) once it reaches ``round_no``."""
    state = new_game("classic", 4, 11)
    now = 0.0
    while not state.finished and state.round < round_no:
        seat = awaiting(state)[0]
        now += 1.0
        state, _ = apply(state, simple_policy(state, seat), now)
    stored = len(json.dumps(state_to_json(state), separators=(",", ":")))
    public = len(json.dumps(public_view(state), separators=(",", ":")))
    return stored, public


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    bare = bare_turns_per_second()
    print(f"baseline: bare dice-and-move loop      {bare:12,.0f} turns/s")
    for mode in args.modes.split(","):
        seats = 4
        figures = mode_figures(mode, args.games, seats)
        tps = figures["turns_per_second"]
        print(
            f"{mode:8s} {seats} seats, {args.games} games: {tps:10,.0f} player-turns/s "
            f"{figures['games_per_second']:7.2f} games/s | "
            f"{tps / bare:.3f}x baseline, {tps / TARGET_TURNS_PER_SECOND:.2f}x target, "
            f"{tps / REFERENCE_SIMULATOR:.2f}x reference simulator"
        )
    stored, public = mid_game_sizes()
    print(
        f"mid-game state (classic, round 60): stored {stored:,} B, public view {public:,} B "
        f"(target under {STATE_SIZE_TARGET:,} B: {stored / STATE_SIZE_TARGET:.2f}x)"
    )


if __name__ == "__main__":
    main()
