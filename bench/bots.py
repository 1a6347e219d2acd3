"""Bot worker CPU per decision, beside the floor of only reading the request, one run.

    python bench/bots.py [--games 6] [--rounds 5]

The decision requests are the ones a table sends (`DecisionRequest`: the public view of
about 4 KB and the seat's legal commands), collected from seeded 4-seat Classic games
played by the simple policy. Per request the worker parses it with the contract, rebuilds
the state, lets the seat's style choose (`opolyx_bots.worker.decide_for_request`) and
encodes the `TableCommand` it sends. The floor parses the same bytes with orjson and
nothing else. The two sides run interleaved (A B A B), in CPU time of this process, so
the figure is what one decision costs a worker's core; `deploy/CAPACITY.md` plans bot
pods with it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import opolyx_rules
import orjson
from opolyx_bots.worker import decide_for_request
from opolyx_contracts.table import DecisionRequest, TableCommand
from opolyx_rules import (
    awaiting,
    command_to_json,
    legal_commands,
    new_game,
    public_view,
    simple_policy,
)


def collect_requests(games: int, per_game: int) -> list[bytes]:
    """Encoded decision requests for the seats that must act, every few commands of each game."""
    requests: list[bytes] = []
    for seed in range(games):
        state = new_game("classic", 4, seed)
        now = 0.0
        for step in range(per_game * 5):
            if state.finished:
                break
            pending = state.pending
            seat = pending.seat if pending is not None and not state.offers else awaiting(state)[0]
            if step % 5 == 0:
                legal = legal_commands(state, seat)
                request = DecisionRequest.model_validate(
                    {
                        "table_id": f"bench{seed}",
                        "seat": seat,
                        "player_id": f"bot-shark-{seat}",
                        "command_subject": "opolyx.table.bots.0",
                        "command_id": f"bench-{seed}-{step}",
                        "version": step,
                        "attempt": 1,
                        "state": public_view(state),
                        "legal": [command_to_json(c) for c in legal],
                        "deadline_at": None,
                    }
                )
                requests.append(request.model_dump_json().encode())
            now += 1.0
            state, _ = opolyx_rules.apply(state, simple_policy(state, seat), now)
    return requests


def worker_side(requests: list[bytes], rng: random.Random) -> None:
    for raw in requests:
        request = DecisionRequest.model_validate_json(raw)
        command = decide_for_request(request, rng)
        if command is not None:
            TableCommand.model_validate(
                {
                    "command_id": request.command_id,
                    "player_id": request.player_id,
                    "expected_version": request.version,
                    "command": {k: v for k, v in command_to_json(command).items() if k != "seat"},
                }
            ).model_dump_json()


def floor_side(requests: list[bytes]) -> None:
    for raw in requests:
        orjson.loads(raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--per-game", type=int, default=150, help="requests kept per game")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    requests = collect_requests(args.games, args.per_game)
    size = statistics.mean(len(r) for r in requests)
    load_before = os.getloadavg()
    worker: list[float] = []
    floor: list[float] = []
    rng = random.Random(1)
    for _ in range(args.rounds):  # A B A B: neither side always first in a pair
        for side in ("worker", "floor") if len(worker) % 2 == 0 else ("floor", "worker"):
            started = time.process_time()
            if side == "worker":
                worker_side(requests, rng)
                worker.append((time.process_time() - started) / len(requests))
            else:
                floor_side(requests)
                floor.append((time.process_time() - started) / len(requests))
    w, f = statistics.median(worker), statistics.median(floor)
    print(
        f"bots: CPU per decision, {len(requests)} requests of {size:,.0f} B on average, "
        f"{args.rounds} interleaved rounds"
    )
    print(f"  worker (parse, rebuild the state, choose, encode the command)  {1e3 * w:.3f} ms")
    print(f"  floor (orjson.loads of the same request)                       {1e3 * f:.3f} ms")
    print(f"  ratio worker / floor {w / f:.1f}x; one core answers {1 / w:,.0f} decisions/s")
    print(f"  load average (1, 5, 15 min): before {load_before} | after {os.getloadavg()}")


if __name__ == "__main__":
    main()
