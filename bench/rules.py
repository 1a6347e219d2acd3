"""Rules-library benchmark (issue 15): today's code against the commit before the speed
work, both run in this same run, interleaved A B A B, one subprocess per sample.

Per side and sample it measures
- player-turns per second of whole 4-seat Classic games played by the simple policy,
- the mean time of one ``legal_commands(state, seat)`` over the states of a recorded game,
- the mean time of one ``apply(state, command, now)`` over the same states and commands,
and once, for today's code, the size of a mid-game state as JSON. It prints the medians,
the ratios (today / baseline; for times baseline / today, so higher is better), the
targets of issue 15 and the machine load. Times are CPU time of the measuring process
(``time.process_time``), so other work on a shared machine skews them less.

``--instructions`` adds a load-independent figure: the same three quantities counted in
machine instructions under valgrind's callgrind (one run per side and part; each part's
count minus that of the part it builds on: start-up for games, recording for the calls),
so a busy machine cannot move them. Slow (minutes); needs ``valgrind``.

    python bench/rules.py [--samples 5] [--games 6] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import BASELINE_COMMIT, baseline_env, current_env

TARGETS = {"turns_per_second": 3.0, "legal_us": 5.0, "apply_us": 2.0}
STATE_SIZE_TARGET = 4 * 1024
SAMPLE_COMMANDS = 3000


def _recorded_moves() -> list[tuple[Any, int, Any, float]]:
    """A recorded stretch of one game: the states, who decides, what they send."""
    from opolyx_rules import apply, awaiting, new_game
    from opolyx_rules.simulate import simple_policy

    state = new_game("classic", 4, 3)
    moves: list[tuple[Any, int, Any, float]] = []
    now = 0.0
    while not state.finished and len(moves) < SAMPLE_COMMANDS:
        seat = awaiting(state)[0]
        now += 1.0
        command = simple_policy(state, seat)
        moves.append((state, seat, command, now))
        state, _ = apply(state, command, now)
    return moves


def _worker(games: int) -> dict[str, float]:
    """One sample of the side this process imports (run in a subprocess)."""
    from opolyx_rules import apply, legal_commands
    from opolyx_rules.simulate import play_game

    turns = 0
    started = time.process_time()
    for seed in range(games):
        turns += play_game("classic", 4, seed).player_turns
    turns_per_second = turns / (time.process_time() - started)

    moves = _recorded_moves()
    started = time.process_time()
    for state, seat, _, _ in moves:
        legal_commands(state, seat)
    legal_us = (time.process_time() - started) / len(moves) * 1e6
    started = time.process_time()
    for state, _, command, now in moves:
        apply(state, command, now)
    apply_us = (time.process_time() - started) / len(moves) * 1e6
    return {"turns_per_second": turns_per_second, "legal_us": legal_us, "apply_us": apply_us}


#: the parts counted under callgrind: what each runs, and the part its count builds on
PARTS = {"start": None, "games": "start", "record": "start", "legal": "record", "apply": "record"}


def _part(part: str, games: int) -> int:
    """Run one part of the work for an instruction count; returns how many player-turns
    (games) or calls (legal, apply) it made."""
    from opolyx_rules import apply, legal_commands
    from opolyx_rules.simulate import play_game

    if part == "games":
        return sum(play_game("classic", 4, seed).player_turns for seed in range(games))
    if part == "start":
        return 0
    moves = _recorded_moves()
    if part == "legal":
        for state, seat, _, _ in moves:
            legal_commands(state, seat)
    elif part == "apply":
        for state, _, command, now in moves:
            apply(state, command, now)
    return len(moves)


def _instructions(env: dict[str, str], part: str, games: int) -> tuple[int, int]:
    """(instructions, count) of one part run under callgrind."""
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--worker",
            "--part",
            part,
            "--games",
            str(games),
        ],
        env={**env, "PYTHONHASHSEED": "0"},
        check=True,
        capture_output=True,
        text=True,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1)), int(out.stdout)


def _instruction_figures(env: dict[str, str], games: int) -> dict[str, float]:
    """Instructions per player-turn, per legal_commands and per apply of one side."""
    counted = {part: _instructions(env, part, games) for part in PARTS}

    def per_unit(part: str) -> float:
        base = PARTS[part]
        assert base is not None
        return (counted[part][0] - counted[base][0]) / counted[part][1]

    return {
        # player-turns per instruction: a rate, like the timed figure of that name
        "turns_per_second": 1 / per_unit("games"),
        "legal_us": per_unit("legal"),
        "apply_us": per_unit("apply"),
    }


def _mid_game_size(round_no: int = 60) -> tuple[int, int]:
    """JSON size of a 4-seat Classic state (stored, public) once it reaches ``round_no``."""
    from opolyx_rules import apply, awaiting, new_game, public_view, state_to_json
    from opolyx_rules.simulate import simple_policy

    state = new_game("classic", 4, 11)
    now = 0.0
    while not state.finished and state.round < round_no:
        seat = awaiting(state)[0]
        now += 1.0
        state, _ = apply(state, simple_policy(state, seat), now)
    stored = len(json.dumps(state_to_json(state), separators=(",", ":")))
    public = len(json.dumps(public_view(state), separators=(",", ":")))
    return stored, public


def _sample(env: dict[str, str], games: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", "--games", str(games)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def _ratios(baseline: dict[str, float], current: dict[str, float]) -> dict[str, float]:
    """Current over baseline, higher is better (for times and counts: baseline / current)."""
    higher_is_better = {"turns_per_second"}
    return {
        key: (current[key] / baseline[key])
        if key in higher_is_better
        else (baseline[key] / current[key])
        for key in TARGETS
    }


def _verdict(key: str, ratio: float) -> str:
    met = "met" if ratio >= TARGETS[key] else "NOT met"
    return f"ratio {ratio:5.2f}x (target {TARGETS[key]:.0f}x: {met})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions under callgrind (load-independent, slow)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--part", choices=sorted(PARTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(_part(args.part, args.games) if args.part else json.dumps(_worker(args.games)))
        return
    sides = {"baseline": baseline_env(), "current": current_env()}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    load_before = os.getloadavg()
    for _ in range(args.samples):
        for name, env in sides.items():  # A B A B ...
            samples[name].append(_sample(env, args.games))
    load_after = os.getloadavg()
    print(f"rules: current vs baseline {BASELINE_COMMIT}, {args.samples} interleaved samples")
    medians = {
        name: {key: statistics.median(s[key] for s in runs) for key in TARGETS}
        for name, runs in samples.items()
    }
    ratios = _ratios(medians["baseline"], medians["current"])
    for key, label in (
        ("turns_per_second", "player-turns/s (classic, 4 seats)"),
        ("legal_us", "legal_commands, us per call"),
        ("apply_us", "apply, us per call"),
    ):
        print(
            f"  {label:36s} baseline {medians['baseline'][key]:10,.1f}  "
            f"current {medians['current'][key]:10,.1f}  {_verdict(key, ratios[key])}"
        )
    stored, public = _mid_game_size()
    size_verdict = "met" if stored < STATE_SIZE_TARGET else "NOT met"
    print(
        f"  mid-game state (classic, round 60): stored {stored:,} B, public {public:,} B "
        f"(target under {STATE_SIZE_TARGET:,} B: {size_verdict})"
    )
    print(
        "  load average (1, 5, 15 min): before "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + " | after "
        + ", ".join(f"{x:.2f}" for x in load_after)
        + f" | {os.cpu_count()} CPUs"
    )
    if args.instructions:
        games = min(args.games, 2)  # instruction counts do not vary: fewer games suffice
        counts = {name: _instruction_figures(env, games) for name, env in sides.items()}
        ratios = _ratios(counts["baseline"], counts["current"])
        print(f"rules: instructions under callgrind ({games} games; the same every run)")
        for key, label in (
            ("turns_per_second", "per player-turn"),
            ("legal_us", "per legal_commands"),
            ("apply_us", "per apply"),
        ):
            base, now = counts["baseline"][key], counts["current"][key]
            if key == "turns_per_second":
                base, now = 1 / base, 1 / now
            print(
                f"  instructions {label:23s} baseline {base:10,.0f}  current {now:10,.0f}  "
                f"{_verdict(key, ratios[key])}"
            )


if __name__ == "__main__":
    main()
