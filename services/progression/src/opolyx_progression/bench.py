"""Benchmark: finished games credited per second, and the weekly leaderboard's latency.

    python -m opolyx_progression.bench [--games 1200] [--players 100000] [--postgres-url URL]

1. Crediting on SQLite (a file, WAL): `CreditStore.credit` of 4-seat games (3 humans, 1 bot)
   with their statistics already folded (the events read is NATS's cost, not this one's),
   against a baseline of plain INSERTs of the same rows (the game, each seat's credit, the
   card drops, the mission progress, the weekly XP, the players) into a second database
   file: one transaction per game on both sides, in blocks interleaved A B A B. Target: at
   least 200 games/s.
2. The weekly leaderboard on PostgreSQL with `--players` seeded players: the full reply
   (top 100, the asker's row, their position, the week's player count) against a baseline
   of a primary-key lookup of one weekly row, interleaved query by query. Target: p99 under
   20 ms. Without `--postgres-url` a throwaway local cluster is started (the test harness's).

Prints the figures, the ratios and the machine load (os.getloadavg) at start and end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from opolyx_contracts.table import GameFinished, SeatResult
from opolyx_testing.measuring import percentile
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression import reads
from opolyx_progression.crediting import plan_game
from opolyx_progression.database import open_database
from opolyx_progression.periods import iso_week_key
from opolyx_progression.schema import (
    cards,
    credited_games,
    game_credits,
    mission_progress,
    players,
    weekly_xp,
)
from opolyx_progression.stats import GameStats, SeatStats
from opolyx_progression.store import CreditStore
from opolyx_progression.weekly import add_weekly_xp

AT = 1796212800.0  # a Wednesday of ISO week 2026-W49
WEEK = iso_week_key(AT)


def _games(count: int, pool: int, rng: random.Random) -> Iterator[tuple[GameFinished, GameStats]]:
    for n in range(count):
        humans = rng.sample(range(pool), 3)
        seats = [
            SeatResult(
                seat=i,
                player_id=f"p{pid}",
                bot=False,
                place=i + 1,
                survived=i < 2,
                complete_groups=rng.randint(0, 2),
                cash=1000,
                net_worth=5000,
                properties=4,
                buildings=2,
            )
            for i, pid in enumerate(humans)
        ]
        seats.append(
            SeatResult(
                seat=3,
                player_id="bot-ada",
                bot=True,
                place=4,
                survived=False,
                complete_groups=0,
                cash=0,
                net_worth=0,
                properties=0,
                buildings=0,
            )
        )
        game = GameFinished(
            table_id=f"g{n}",
            room_id=None,
            mode=rng.choice(["classic", "speed"]),
            rules_version="1.0",
            rounds=rng.randint(20, 120),
            winner=0,
            placement=[0, 1, 2, 3],
            seats=seats,
            seed=n,
            seed_commitment="0" * 64,
            replay=[],
            last_seq=0,
            finished_at=AT,
        )
        stats = GameStats(
            seats={
                i: SeatStats(
                    properties_bought=rng.randint(0, 8),
                    auctions_won=rng.randint(0, 2),
                    rent_collected=rng.randint(0, 6000),
                    buildings_built=rng.randint(0, 6),
                    trades_completed=rng.randint(0, 2),
                )
                for i in range(4)
            }
        )
        yield game, stats


def _plain_rows(game: GameFinished, stats: GameStats, seeds: Iterator[int]) -> dict[str, Any]:
    """The rows crediting writes for a game, computed up front (no reads, no logic left)."""
    plan = plan_game(game, stats, {}, {}, flagged=False, new_seed=seeds.__next__)
    return {
        "game": {
            "table_id": game.table_id,
            "mode": game.mode,
            "rounds": game.rounds,
            "reason": "paid",
            "finished_at": AT,
            "credited_at": AT,
            "events_seq": 0,
        },
        "players": [
            {
                "player_id": c.player_id,
                "total_xp": c.total_after,
                "level": c.level_after,
                "games_credited": 1,
                "created_at": AT,
            }
            for c in plan
        ],
        "credits": [
            {
                "table_id": game.table_id,
                "player_id": c.player_id,
                "seat": c.seat,
                "place": c.place,
                "reason": c.reason,
                "placement_xp": c.award.placement,
                "groups_xp": c.award.groups,
                "survival_xp": c.award.survival,
                "mission_xp": c.mission_xp,
                "missions_completed": json.dumps([s.mission_id for s in c.missions]),
                "level_before": c.level_before,
                "level_after": c.level_after,
                "credited_at": AT,
            }
            for c in plan
        ],
        "weekly": [{"week": WEEK, "player_id": c.player_id, "xp": c.xp} for c in plan],
        "missions": [
            {
                "player_id": c.player_id,
                "period_key": s.period_key,
                "mission_id": s.mission_id,
                "progress": s.progress,
                "completed_at": None,
            }
            for c in plan
            for s in c.missions
        ],
        "cards": [
            {
                "player_id": c.player_id,
                "square": d.card.square,
                "rarity": d.card.rarity.value,
                "source": d.source,
                "level": d.level,
                "table_id": game.table_id,
                "seed": d.seed,
                "drawn_at": AT,
            }
            for c in plan
            for d in c.cards
        ],
    }


async def _plain_insert(engine: AsyncEngine, games: list[dict[str, Any]], suffix: str) -> None:
    """The baseline: the same rows as plain INSERTs, one transaction and one statement per
    table for the batch. Player and mission keys get a per-batch suffix so that plain
    inserts never conflict (no upsert logic either)."""

    def rows(key: str) -> list[dict[str, Any]]:
        return [{**r, "player_id": r["player_id"] + suffix} for g in games for r in g[key]]

    async with engine.begin() as conn:
        await conn.execute(credited_games.insert(), [g["game"] for g in games])
        people = {r["player_id"]: r for r in rows("players")}
        await conn.execute(players.insert(), list(people.values()))
        await conn.execute(game_credits.insert(), rows("credits"))
        weekly = {r["player_id"]: r for r in rows("weekly")}
        await conn.execute(weekly_xp.insert(), list(weekly.values()))
        missions = {(r["player_id"], r["period_key"], r["mission_id"]): r for r in rows("missions")}
        if missions:
            await conn.execute(mission_progress.insert(), list(missions.values()))
        if drops := rows("cards"):
            await conn.execute(cards.insert(), drops)


async def bench_crediting(games: int, batch: int, workdir: Path) -> dict[str, float]:
    rng = random.Random(7)
    credit_engine = await open_database(f"sqlite+aiosqlite:///{workdir / 'credit.sqlite3'}")
    plain_engine = await open_database(f"sqlite+aiosqlite:///{workdir / 'plain.sqlite3'}")
    seeds = itertools.count(1)
    store = CreditStore(credit_engine, new_seed=seeds.__next__, clock=lambda: AT)
    work = list(_games(games, 2000, rng))
    plain = [_plain_rows(g, s, seeds) for g, s in work]
    times: dict[str, float] = {"credit": 0.0, "plain": 0.0}
    try:
        # Blocks interleaved A B A B: one fetch-sized batch credited, then the same inserted.
        for start in range(0, games, batch):
            block = slice(start, min(games, start + batch))
            began = time.perf_counter()
            await store.credit_many(work[block])
            times["credit"] += time.perf_counter() - began
            began = time.perf_counter()
            await _plain_insert(plain_engine, plain[block], f"#{start}")
            times["plain"] += time.perf_counter() - began
    finally:
        await credit_engine.dispose()
        await plain_engine.dispose()
    return {side: games / spent for side, spent in times.items()}


async def _seed_players(engine: AsyncEngine, count: int) -> None:
    rng = random.Random(11)
    chunk = 5_000
    async with engine.begin() as conn:
        for start in range(0, count, chunk):
            ids = range(start, min(count, start + chunk))
            xps = {i: rng.randint(0, 5000) for i in ids}
            await conn.execute(
                players.insert(),
                [
                    {
                        "player_id": f"p{i}",
                        "display_name": f"Player {i}",
                        "total_xp": xps[i] * 3,
                        "level": 1,
                        "games_credited": 1,
                        "created_at": AT,
                    }
                    for i in ids
                ],
            )
            await add_weekly_xp(conn, {(WEEK, f"p{i}"): xps[i] for i in ids})
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE"))


async def bench_leaderboard(url: str, count: int, queries: int) -> dict[str, dict[str, float]]:
    engine = await open_database(url)
    try:
        await _seed_players(engine, count)
        rng = random.Random(3)
        samples: dict[str, list[float]] = {"leaderboard": [], "cached": [], "pk_lookup": []}
        # The service shares the top 100 for a second (`leaderboard_cache_seconds`); the
        # asker's row and position are read fresh either way. Both are measured.
        tops = reads.TopCache(1.0)
        async with engine.connect() as conn:
            for _ in range(queries):
                asker = f"p{rng.randrange(count)}"
                began = time.perf_counter()
                board = await reads.leaderboard(conn, asker, "weekly", WEEK, AT)
                samples["leaderboard"].append(time.perf_counter() - began)
                assert board.own is not None and len(board.entries) == 100
                began = time.perf_counter()
                await reads.leaderboard(conn, asker, "weekly", WEEK, time.time(), cache=tops)
                samples["cached"].append(time.perf_counter() - began)
                began = time.perf_counter()
                await conn.scalar(
                    select(weekly_xp.c.xp).where(
                        weekly_xp.c.week == WEEK, weekly_xp.c.player_id == asker
                    )
                )
                samples["pk_lookup"].append(time.perf_counter() - began)
    finally:
        await engine.dispose()
    return {
        side: {
            "p50_ms": statistics.median(values) * 1000,
            "p99_ms": percentile(values, 0.99) * 1000,
        }
        for side, values in samples.items()
    }


async def run(args: argparse.Namespace) -> None:
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="progression-bench-") as tmp:
        workdir = Path(tmp)
        rates = await bench_crediting(args.games, args.batch, workdir)
        print(
            f"crediting on SQLite, {args.games} games of 3 humans + 1 bot, in batches of"
            f" {args.batch} (one GAMES fetch), interleaved A B:"
        )
        print(f"  credited        {rates['credit']:8.0f} games/s   (target >= 200)")
        print(f"  plain inserts   {rates['plain']:8.0f} games/s   (baseline, same rows)")
        print(f"  ratio credit / plain = {rates['credit'] / rates['plain']:.2f}")
        with contextlib.ExitStack() as stack:
            url = args.postgres_url
            if url is None:
                # The test harness's throwaway cluster (a development dependency).
                from opolyx_testing.postgres import start_postgres

                try:
                    url = stack.enter_context(start_postgres(workdir / "pg")).async_url
                except (RuntimeError, OSError) as exc:
                    print(f"leaderboard on PostgreSQL skipped: {exc} (make pg-deps installs it)")
                    url = None
            latency = await bench_leaderboard(url, args.players, args.queries) if url else None
        if latency is None:
            _print_load(load_start)
            return
        board, cached, lookup = latency["leaderboard"], latency["cached"], latency["pk_lookup"]
        print(f"weekly leaderboard on PostgreSQL, {args.players} players, {args.queries} queries:")
        print(
            f"  uncached        p50 {board['p50_ms']:6.2f} ms   p99 {board['p99_ms']:6.2f} ms"
            "   (every query read; target p99 < 20)"
        )
        print(
            f"  top 100 shared  p50 {cached['p50_ms']:6.2f} ms   p99 {cached['p99_ms']:6.2f} ms"
            "   (the service's path: top 100 kept 1 s, own row and position fresh)"
        )
        print(
            f"  pk lookup       p50 {lookup['p50_ms']:6.2f} ms   p99 {lookup['p99_ms']:6.2f} ms"
            "   (baseline)"
        )
        print(
            f"  ratio p99 uncached / lookup = {board['p99_ms'] / lookup['p99_ms']:.1f},"
            f" shared / lookup = {cached['p99_ms'] / lookup['p99_ms']:.1f}"
        )
    _print_load(load_start)


def _print_load(load_start: tuple[float, float, float]) -> None:
    load_end = os.getloadavg()
    print(
        "load average (1, 5, 15 min): start "
        + " ".join(f"{v:.2f}" for v in load_start)
        + ", end "
        + " ".join(f"{v:.2f}" for v in load_end)
        + f" on {os.cpu_count()} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1200)
    parser.add_argument("--batch", type=int, default=64, help="games per transaction (a fetch)")
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--postgres-url", default=None)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
