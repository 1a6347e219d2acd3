"""Crediting a finished game: one transaction, exactly once per table id.

The transaction starts by inserting the game into `credited_games`; its primary key makes a
redelivered game (GAMES is at-least-once, and a process can die between the commit and the
ack) a no-op. Everything the game changes (XP, levels, weekly XP, missions, cards, evidence,
flags) is written in the same transaction, so a crash leaves either all of it or nothing.
On PostgreSQL the players' rows are locked in a fixed order, so two instances crediting
games of the same player serialise instead of losing an update.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opolyx_contracts.table import GameFinished
from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from opolyx_progression.cards import SeedSource, random_seed
from opolyx_progression.crediting import SeatCredit, pays, plan_game
from opolyx_progression.integrity import Evidence, FarmingFlag, FarmingRules, find_farming
from opolyx_progression.periods import day_key, iso_week_key
from opolyx_progression.schema import (
    cards,
    credited_games,
    evidence,
    farming_flags,
    game_credits,
    mission_progress,
    players,
    weekly_xp,
)
from opolyx_progression.sql import insert_ignore, upsert
from opolyx_progression.stats import GameStats

__all__ = ["CreditOutcome", "CreditStore", "game_evidence"]

Clock = Callable[[], float]


@dataclass(frozen=True)
class CreditOutcome:
    table_id: str
    reason: str
    credits: tuple[SeatCredit, ...]
    flags: tuple[FarmingFlag, ...]


def game_evidence(finished: GameFinished, stats: GameStats) -> list[Evidence]:
    """The value moved between two different human players in the game, by player id.

    Team games are left out: allies may give each other anything (R10), one-way included.
    """
    if finished.mode == "team":
        return []
    humans = {s.seat: s.player_id for s in finished.seats if not s.bot}
    out: list[Evidence] = []
    for transfer in stats.transfers:
        giver, receiver = humans.get(transfer.giver), humans.get(transfer.receiver)
        if giver is None or receiver is None or giver == receiver:
            continue
        out.append(Evidence(finished.table_id, giver, receiver, transfer.kind, transfer.value))
    return out


class CreditStore:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        farming: FarmingRules | None = None,
        new_seed: SeedSource = random_seed,
        clock: Clock = time.time,
    ) -> None:
        self.engine = engine
        self.farming = farming or FarmingRules()
        self.new_seed = new_seed
        self.clock = clock

    async def is_credited(self, table_id: str) -> bool:
        async with self.engine.connect() as conn:
            found = await conn.scalar(
                select(credited_games.c.table_id).where(credited_games.c.table_id == table_id)
            )
        return found is not None

    async def credit(self, finished: GameFinished, stats: GameStats) -> CreditOutcome | None:
        """Credit `finished` once; None when it was credited before (a redelivery)."""
        async with self.engine.begin() as conn:
            return await self._credit(conn, finished, stats)

    async def _credit(
        self, conn: AsyncConnection, finished: GameFinished, stats: GameStats
    ) -> CreditOutcome | None:
        now = self.clock()
        claimed = await conn.execute(
            insert_ignore(conn, credited_games, ["table_id"]).values(
                table_id=finished.table_id,
                mode=finished.mode,
                rounds=finished.rounds,
                reason="pending",
                finished_at=finished.finished_at,
                credited_at=now,
                events_seq=stats.last_seq,
            )
        )
        if claimed.rowcount != 1:
            return None
        ids = sorted({s.player_id for s in finished.seats if not s.bot})
        totals = await self._lock_players(conn, ids, now)
        found = game_evidence(finished, stats) if pays(finished) else []
        flags = find_farming(found, await self._history(conn, found), self.farming)
        progress = await self._progress(conn, ids, finished.finished_at)
        plan = plan_game(
            finished, stats, totals, progress, flagged=bool(flags), new_seed=self.new_seed
        )
        reason = plan[0].reason if plan else ("paid" if pays(finished) else "too_short")
        if flags:
            reason = "flagged"
        await conn.execute(
            update(credited_games)
            .where(credited_games.c.table_id == finished.table_id)
            .values(reason=reason)
        )
        await self._write_credits(conn, finished, plan, now)
        if found:
            await conn.execute(
                evidence.insert(),
                [
                    {
                        "table_id": e.table_id,
                        "giver_id": e.giver_id,
                        "receiver_id": e.receiver_id,
                        "kind": e.kind,
                        "value": e.value,
                        "at": finished.finished_at,
                    }
                    for e in found
                ],
            )
        if flags:
            await conn.execute(
                farming_flags.insert(),
                [
                    {
                        "table_id": finished.table_id,
                        "kind": f.kind,
                        "giver_id": f.giver_id,
                        "receiver_id": f.receiver_id,
                        "games": json.dumps(list(f.games)),
                        "value": f.value,
                        "detail": f.detail,
                        "flagged_at": now,
                    }
                    for f in flags
                ],
            )
        return CreditOutcome(finished.table_id, reason, tuple(plan), tuple(flags))

    async def _lock_players(
        self, conn: AsyncConnection, ids: list[str], now: float
    ) -> dict[str, int]:
        if not ids:
            return {}
        await conn.execute(
            insert_ignore(conn, players, ["player_id"]),
            [
                {
                    "player_id": pid,
                    "total_xp": 0,
                    "level": 1,
                    "games_credited": 0,
                    "created_at": now,
                }
                for pid in ids
            ],
        )
        query = (
            select(players.c.player_id, players.c.total_xp)
            .where(players.c.player_id.in_(ids))
            .order_by(players.c.player_id)
            .with_for_update()
        )
        return {row.player_id: int(row.total_xp) for row in await conn.execute(query)}

    async def _history(self, conn: AsyncConnection, found: Sequence[Evidence]) -> list[Evidence]:
        """Earlier evidence of the pairs in `found`, the latest `window_games` games per pair."""
        if not found:
            return []
        pairs = {tuple(sorted((e.giver_id, e.receiver_id))) for e in found}
        condition = or_(
            *(
                or_(
                    and_(evidence.c.giver_id == a, evidence.c.receiver_id == b),
                    and_(evidence.c.giver_id == b, evidence.c.receiver_id == a),
                )
                for a, b in pairs
            )
        )
        rows = await conn.execute(
            select(evidence)
            .where(condition)
            .order_by(evidence.c.at.desc(), evidence.c.evidence_id.desc())
            .limit(self.farming.window_games * len(pairs) * 4)
        )
        kept: list[Evidence] = []
        games: dict[tuple[str, ...], list[str]] = {}
        for row in rows:
            pair = tuple(sorted((row.giver_id, row.receiver_id)))
            seen = games.setdefault(pair, [])
            if row.table_id not in seen:
                if len(seen) >= self.farming.window_games:
                    continue
                seen.append(row.table_id)
            kept.append(Evidence(row.table_id, row.giver_id, row.receiver_id, row.kind, row.value))
        kept.reverse()
        return kept

    async def _progress(
        self, conn: AsyncConnection, ids: list[str], at: float
    ) -> dict[tuple[str, str, str], int]:
        if not ids:
            return {}
        rows = await conn.execute(
            select(mission_progress).where(
                mission_progress.c.player_id.in_(ids),
                mission_progress.c.period_key.in_([day_key(at), iso_week_key(at)]),
            )
        )
        return {(r.player_id, r.period_key, r.mission_id): int(r.progress) for r in rows}

    async def _write_credits(
        self, conn: AsyncConnection, finished: GameFinished, plan: list[SeatCredit], now: float
    ) -> None:
        if not plan:
            return
        await conn.execute(
            game_credits.insert(),
            [
                {
                    "table_id": finished.table_id,
                    "player_id": c.player_id,
                    "seat": c.seat,
                    "place": c.place,
                    "reason": c.reason,
                    "placement_xp": c.award.placement,
                    "groups_xp": c.award.groups,
                    "survival_xp": c.award.survival,
                    "mission_xp": c.mission_xp,
                    "missions_completed": json.dumps(
                        [s.mission_id for s in c.missions if s.completed_now]
                    ),
                    "level_before": c.level_before,
                    "level_after": c.level_after,
                    "credited_at": now,
                }
                for c in plan
            ],
        )
        for c in plan:
            await conn.execute(
                update(players)
                .where(players.c.player_id == c.player_id)
                .values(
                    total_xp=c.total_after,
                    level=c.level_after,
                    games_credited=players.c.games_credited + 1,
                )
            )
        # The game is over: it is no longer anyone's current game (for their followers).
        await conn.execute(
            update(players)
            .where(
                players.c.player_id.in_([c.player_id for c in plan]),
                players.c.current_table_id == finished.table_id,
            )
            .values(current_table_id=None, current_since=None)
        )
        paid = [c for c in plan if c.xp > 0]
        if paid:
            week = iso_week_key(finished.finished_at)
            stmt = upsert(
                conn,
                weekly_xp,
                ["week", "player_id"],
                xp=lambda excluded: weekly_xp.c.xp + excluded.xp,
            )
            await conn.execute(
                stmt, [{"week": week, "player_id": c.player_id, "xp": c.xp} for c in paid]
            )
        steps = [(c.player_id, s) for c in plan for s in c.missions]
        if steps:
            stmt = upsert(
                conn,
                mission_progress,
                ["player_id", "period_key", "mission_id"],
                progress=lambda excluded: excluded.progress,
                completed_at=lambda excluded: excluded.completed_at,
            )
            await conn.execute(
                stmt,
                [
                    {
                        "player_id": pid,
                        "period_key": s.period_key,
                        "mission_id": s.mission_id,
                        "progress": s.progress,
                        "completed_at": now if s.progress >= s.goal else None,
                    }
                    for pid, s in steps
                ],
            )
        drops = [(c.player_id, d) for c in plan for d in c.cards]
        if drops:
            await conn.execute(
                cards.insert(),
                [
                    {
                        "player_id": pid,
                        "square": d.card.square,
                        "rarity": d.card.rarity.value,
                        "source": d.source,
                        "level": d.level,
                        "table_id": finished.table_id,
                        "seed": d.seed,
                        "drawn_at": now,
                    }
                    for pid, d in drops
                ],
            )
