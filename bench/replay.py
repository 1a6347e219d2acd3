"""Replay benchmark (issue 16): a 500-round, four-seat Classic game (the simple player's, to
the round limit), stored in TABLE_EVENTS on a real nats-server, replayed the way the
gateway does it.

Figures, each the median of `--samples` interleaved rounds:
- open: what the first viewer of a game waits for: reading its events messages from the
  stream as the gateway's role (`Replays.read`) plus rebuilding every turn's state and the
  analytics (`build_quietly`), then the first page.
- step: what the next step costs, two ways, interleaved A B A B on random steps:
  A (baseline, "rebuilt on request") rebuilds that step's state from the game's start
  with the rules library (`position_at` + `public_view`); B (chosen, "precomputed") takes
  it from the built replay's page (a new page is serialised once, then cached).
- analytics: `game_analytics` of the whole game against its floor, rebuilding the final
  state from the same events (`replay`): the ratio says what the analytics add.

Wall times on a shared machine mostly measure the queue for a core, so the open also
prints the CPU time of this process (the gateway's side; nats-server runs beside it).
Targets: a 500-round game opens in under 1 s; a step is "instant" (well under a frame,
16 ms). Prints the machine load (`os.getloadavg()`) before and after.

    python bench/replay.py [--samples 5] [--steps 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

OPEN_TARGET_S = 1.0
STEP_TARGET_S = 0.016


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def _store(nc: Any, table_id: str, messages: list[Any]) -> None:
    from opolyx_contracts import subjects
    from opolyx_contracts.table import event_message_id
    from opolyx_service.connection import ensure_stream

    js = nc.jetstream()
    await ensure_stream(js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
    for message in messages:
        await js.publish(
            subjects.table_events(table_id),
            message.model_dump_json().encode(),
            headers={"Nats-Msg-Id": event_message_id(table_id, message.first_seq)},
        )


async def _run(samples: int, steps: int) -> None:
    import opolyx_rules
    from opolyx_gateway.replays import Replays, build_quietly
    from opolyx_rules.analytics import game_analytics
    from opolyx_rules.forking import position_at
    from opolyx_testing.nats_server import start_nats_server
    from opolyx_testing.recorded_games import record_game

    print(f"load before: {os.getloadavg()}")
    game = record_game("classic", 4, 1)
    assert game.final.round == 500, "seed 1 plays to the round limit"
    events = [opolyx_rules.event_from_json(e) for e in game.events]
    print(
        f"game: {game.final.round} rounds, {len(game.batches)} commands, {len(events)} events, "
        f"{sum(1 for e in game.events if e['type'] == 'offer_closed')} trade offers"
    )
    tables = [f"t-bench-{i}" for i in range(samples)]
    with tempfile.TemporaryDirectory() as tmp, start_nats_server(Path(tmp)) as server:
        admin = await server.connect()
        for table_id in tables:
            await _store(admin, table_id, game.stored(table_id))
        gateway = await server.connect("gateway")
        replays = Replays(gateway.jetstream(), kept=samples + 1)
        reads: list[float] = []
        builds: list[float] = []
        opens: list[float] = []
        open_cpu: list[float] = []
        built = None
        for table_id in tables:  # every sample a game nobody opened yet
            started = time.perf_counter()
            cpu = time.process_time()
            stored = await replays.read(table_id)
            read = time.perf_counter()
            built = await asyncio.to_thread(build_quietly, table_id, stored)
            done = time.perf_counter()
            built.page(0)
            opened = time.perf_counter()
            open_cpu.append(time.process_time() - cpu)
            reads.append(read - started)
            builds.append(done - read)
            opens.append(opened - started)
        await gateway.drain()
        await admin.drain()
    assert built is not None
    print(
        f"open: {_median_ms(opens):.0f} ms median of {samples} (read {_median_ms(reads):.0f} ms"
        f" + rebuild {_median_ms(builds):.0f} ms + first page); target < {OPEN_TARGET_S * 1000:.0f}"
        f" ms: {'met' if statistics.median(opens) < OPEN_TARGET_S else 'NOT met'};"
        f" {built.steps} steps; CPU of this process {_median_ms(open_cpu):.0f} ms (on a loaded"
        " machine the wall time is mostly waiting for a core)"
    )

    rng = random.Random(16)
    chosen = [rng.randrange(built.steps) for _ in range(steps)]
    rebuilt: list[float] = []
    paged: list[float] = []
    cold_pages: list[float] = []
    for step in chosen:  # A B A B
        started = time.perf_counter()
        opolyx_rules.public_view(position_at(game.initial, events, step, finished=True))
        rebuilt.append(time.perf_counter() - started)
        start = step - step % 50
        was_cached = start in built.pages
        started = time.perf_counter()
        built.page(step)
        elapsed = time.perf_counter() - started
        (paged if was_cached else cold_pages).append(elapsed)
    step_b = statistics.median(paged) if paged else 0.0
    print(
        f"step A (rebuilt on request): {_median_ms(rebuilt):.2f} ms median of {len(rebuilt)};"
        f" B (precomputed, page cached): {step_b * 1000:.3f} ms median of {len(paged)},"
        f" first ask of a page (50 states serialised) {_median_ms(cold_pages):.1f} ms median of"
        f" {len(cold_pages)}; ratio A/B {statistics.median(rebuilt) / max(step_b, 1e-9):.0f}x;"
        f" target < {STEP_TARGET_S * 1000:.0f} ms: {'met' if step_b < STEP_TARGET_S else 'NOT met'}"
    )

    floors: list[float] = []
    analytics: list[float] = []
    for _ in range(samples):  # A B A B
        started = time.perf_counter()
        opolyx_rules.replay(game.initial, events)
        floors.append(time.perf_counter() - started)
        started = time.perf_counter()
        game_analytics(game.initial, events)
        analytics.append(time.perf_counter() - started)
    print(
        f"analytics: {_median_ms(analytics):.0f} ms per game median of {samples}; floor"
        f" (rebuilding the final state from the events) {_median_ms(floors):.0f} ms;"
        f" ratio {statistics.median(analytics) / statistics.median(floors):.1f}x"
    )
    print(f"load after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(_run(args.samples, args.steps))


if __name__ == "__main__":
    main()
