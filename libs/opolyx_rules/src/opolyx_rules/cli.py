"""``opolyx-rules``: replay scenario files, simulate games, show a demo game.

opolyx-rules replay FILE
opolyx-rules simulate --mode classic --seats 4 --games N --seed S
opolyx-rules demo --mode classic --seats 4 --seed S
opolyx-rules verify REPLAY_FILE
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from .fairness import verify_replay
from .modes import MODES
from .narrate import describe
from .scenario import ScenarioError, run_scenario
from .simulate import play_game


def _replay(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as handle:
            result = run_scenario(handle)
    except OSError as exc:
        print(f"opolyx-rules: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(f"opolyx-rules: {path}: {exc}", file=sys.stderr)
        return 2
    json.dump(result.to_json(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def _simulate(mode: str, seats: int, games: int, seed: int) -> int:
    wins = [0] * seats
    rounds = turns = commands = 0
    started = time.perf_counter()
    for index in range(games):
        result = play_game(mode, seats, seed + index)
        rounds += result.state.round
        turns += result.player_turns
        commands += result.commands
        if result.state.winner is not None:
            wins[result.state.winner] += 1
    elapsed = time.perf_counter() - started
    summary = {
        "mode": mode,
        "seats": seats,
        "games": games,
        "mean_rounds": rounds / games if games else 0,
        "wins_per_seat": wins,
        "player_turns": turns,
        "commands": commands,
        "seconds": round(elapsed, 3),
        "player_turns_per_second": round(turns / elapsed) if elapsed else 0,
        "games_per_second": round(games / elapsed, 2) if elapsed else 0,
    }
    print(json.dumps(summary))
    return 0


def _demo(mode: str, seats: int, seed: int) -> int:
    result = play_game(mode, seats, seed, keep_events=True)
    for event in result.events:
        line = describe(event)
        if line:
            print(line)
    state = result.state
    print(f"\nGame over after {state.round} rounds ({state.finish_reason}).")
    print("Placement: " + ", ".join(f"seat {seat}" for seat in state.placement))
    return 0


def _verify(path: str) -> int:
    """Check a finished game offline from its replay file (docs/DICE.md): exit 0 when the
    seed, the dice and every recorded event check out, 1 when one does not, 2 when the
    file cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        print(f"opolyx-rules: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"opolyx-rules: {path} is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(data, dict):
        print(f"opolyx-rules: {path} is not a replay file (not a JSON object)", file=sys.stderr)
        return 2
    checks = verify_replay(data)
    for check in checks:
        print(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.message}")
    if all(check.ok for check in checks):
        print(f"{path}: the game is fair: its dice are the ones its committed seed draws")
        return 0
    print(f"{path}: verification FAILED", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="opolyx-rules", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    replay = sub.add_parser("replay", help="replay a scenario file (JSON lines)")
    replay.add_argument("file")
    verify = sub.add_parser("verify", help="check a finished game's replay file (seed, dice)")
    verify.add_argument("file")
    for name in ("simulate", "demo"):
        p = sub.add_parser(name, help=f"{name} games with the built-in policy")
        p.add_argument("--mode", choices=sorted(MODES), default="classic")
        p.add_argument("--seats", type=int, default=4)
        p.add_argument("--seed", type=int, default=1)
        if name == "simulate":
            p.add_argument("--games", type=int, default=10)
    args = parser.parse_args(argv)
    allowed = MODES[getattr(args, "mode", "classic")].allowed_seats
    if args.command == "verify":
        return _verify(args.file)
    if args.command != "replay" and args.seats not in allowed:
        parser.error(f"{args.mode} is played with {allowed} seats")
    if args.command == "replay":
        return _replay(args.file)
    if args.command == "simulate":
        return _simulate(args.mode, args.seats, args.games, args.seed)
    return _demo(args.mode, args.seats, args.seed)


if __name__ == "__main__":
    sys.exit(main())
