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
from dataclasses import dataclass, field

from opolyx_contracts.table import GameFinished
from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from opolyx_progression.cards import SeedSource, random_seed
from opolyx_progression.crediting import SeatCredit, game_reason, pays, plan_game
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
)
from opolyx_progression.sql import insert_ignore, upsert
from opolyx_progression.stats import GameStats
from opolyx_progression.weekly import add_weekly_xp

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

    async def credited_among(self, table_ids: Sequence[str]) -> set[str]:
        """Which of these games were credited already."""
        if not table_ids:
            return set()
        async with self.engine.connect() as conn:
            found = await conn.scalars(
                select(credited_games.c.table_id).where(
                    credited_games.c.table_id.in_(list(table_ids))
                )
            )
            return set(found)

    async def credit(self, finished: GameFinished, stats: GameStats) -> CreditOutcome | None:
        """Credit `finished` once; None when it was credited before (a redelivery)."""
        return (await self.credit_many([(finished, stats)]))[0]

    async def credit_many(
        self, games: Sequence[tuple[GameFinished, GameStats]]
    ) -> list[CreditOutcome | None]:
        """Credit several games in one transaction (in order; a game credited before, or twice
        in `games`, gives None). One commit and one statement per kind of row for the whole
        batch: the GAMES consumer credits what one fetch brought this way."""
        try:
            async with self.engine.begin() as conn:
                return await self._credit_batch(conn, games)
        except IntegrityError:
            if len(games) == 1:
                return [None]  # another instance credited it between our check and insert
        # Another instance credited one of these meanwhile: one transaction per game.
        return [(await self.credit_many([game]))[0] for game in games]

    async def _credit_batch(
        self, conn: AsyncConnection, games: Sequence[tuple[GameFinished, GameStats]]
    ) -> list[CreditOutcome | None]:
        now = self.clock()
        done = set(
            await conn.scalars(
                select(credited_games.c.table_id).where(
                    credited_games.c.table_id.in_([f.table_id for f, _ in games])
                )
            )
        )
        fresh: list[tuple[GameFinished, GameStats]] = []
        for finished, stats in games:
            if finished.table_id not in done:
                done.add(finished.table_id)
                fresh.append((finished, stats))
        if not fresh:
            return [None] * len(games)
        ids = sorted({s.player_id for f, _ in fresh for s in f.seats if not s.bot})
        totals = await self._lock_players(conn, ids, now)
        progress = await self._progress(conn, ids, [f.finished_at for f, _ in fresh])
        batch = _Batch()
        outcomes: dict[str, CreditOutcome] = {}
        for finished, stats in fresh:
            found = game_evidence(finished, stats) if pays(finished) else []
            flags = find_farming(found, await self._history(conn, found), self.farming)
            if found:
                # Written at once: a later game of this batch sees it as history.
                await conn.execute(
                    evidence.insert(), [_evidence_row(e, finished.finished_at) for e in found]
                )
            plan = plan_game(
                finished, stats, totals, progress, flagged=bool(flags), new_seed=self.new_seed
            )
            for credit in plan:
                totals[credit.player_id] = credit.total_after
                for step in credit.missions:
                    progress[(credit.player_id, step.period_key, step.mission_id)] = step.progress
            reason = game_reason(finished, flagged=bool(flags))
            batch.add(finished, stats, plan, flags, reason, now)
            outcomes[finished.table_id] = CreditOutcome(
                finished.table_id, reason, tuple(plan), tuple(flags)
            )
        await batch.write(conn)
        return [outcomes.pop(f.table_id, None) for f, _ in games]

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
        self, conn: AsyncConnection, ids: list[str], times: list[float]
    ) -> dict[tuple[str, str, str], int]:
        if not ids:
            return {}
        periods = {key for at in times for key in (day_key(at), iso_week_key(at))}
        rows = await conn.execute(
            select(mission_progress).where(
                mission_progress.c.player_id.in_(ids),
                mission_progress.c.period_key.in_(sorted(periods)),
            )
        )
        return {(r.player_id, r.period_key, r.mission_id): int(r.progress) for r in rows}


def _evidence_row(e: Evidence, at: float) -> dict[str, object]:
    return {
        "table_id": e.table_id,
        "giver_id": e.giver_id,
        "receiver_id": e.receiver_id,
        "kind": e.kind,
        "value": e.value,
        "at": at,
    }


@dataclass
class _Batch:
    """The rows a batch of credited games writes, gathered so each kind is one statement."""

    games: list[dict[str, object]] = field(default_factory=list)
    credits: list[dict[str, object]] = field(default_factory=list)
    players: dict[str, dict[str, object]] = field(default_factory=dict)
    left: list[dict[str, object]] = field(default_factory=list)
    weekly: dict[tuple[str, str], int] = field(default_factory=dict)
    missions: dict[tuple[str, str, str], dict[str, object]] = field(default_factory=dict)
    cards: list[dict[str, object]] = field(default_factory=list)
    flags: list[dict[str, object]] = field(default_factory=list)

    def add(
        self,
        finished: GameFinished,
        stats: GameStats,
        plan: list[SeatCredit],
        flags: list[FarmingFlag],
        reason: str,
        now: float,
    ) -> None:
        tid = finished.table_id
        self.games.append(
            {
                "table_id": tid,
                "mode": finished.mode,
                "rounds": finished.rounds,
                "reason": reason,
                "finished_at": finished.finished_at,
                "credited_at": now,
                "events_seq": stats.last_seq,
            }
        )
        week = iso_week_key(finished.finished_at)
        for c in plan:
            self.credits.append(
                {
                    "table_id": tid,
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
            )
            row = self.players.setdefault(c.player_id, {"pid": c.player_id, "games": 0})
            row.update(total=c.total_after, lvl=c.level_after, games=int(str(row["games"])) + 1)
            self.left.append({"pid": c.player_id, "tid": tid})
            if c.xp > 0:
                self.weekly[(week, c.player_id)] = self.weekly.get((week, c.player_id), 0) + c.xp
            for s in c.missions:
                self.missions[(c.player_id, s.period_key, s.mission_id)] = {
                    "player_id": c.player_id,
                    "period_key": s.period_key,
                    "mission_id": s.mission_id,
                    "progress": s.progress,
                    "completed_at": now if s.progress >= s.goal else None,
                }
            self.cards.extend(
                {
                    "player_id": c.player_id,
                    "square": d.card.square,
                    "rarity": d.card.rarity.value,
                    "source": d.source,
                    "level": d.level,
                    "table_id": tid,
                    "seed": d.seed,
                    "drawn_at": now,
                }
                for d in c.cards
            )
        self.flags.extend(
            {
                "table_id": tid,
                "kind": f.kind,
                "giver_id": f.giver_id,
                "receiver_id": f.receiver_id,
                "games": json.dumps(list(f.games)),
                "value": f.value,
                "detail": f.detail,
                "flagged_at": now,
            }
            for f in flags
        )

    async def write(self, conn: AsyncConnection) -> None:
        # A plain insert: a game credited meanwhile by another instance is an IntegrityError
        # that rolls the whole batch back (the caller then credits one game at a time).
        await conn.execute(credited_games.insert(), self.games)
        if self.credits:
            await conn.execute(game_credits.insert(), self.credits)
        if self.players:
            await conn.execute(
                update(players)
                .where(players.c.player_id == bindparam("pid"))
                .values(
                    total_xp=bindparam("total"),
                    level=bindparam("lvl"),
                    games_credited=players.c.games_credited + bindparam("games"),
                ),
                list(self.players.values()),
            )
            # The game is over: it is no longer anyone's current game (for their followers).
            await conn.execute(
                update(players)
                .where(
                    players.c.player_id == bindparam("pid"),
                    players.c.current_table_id == bindparam("tid"),
                )
                .values(current_table_id=None, current_since=None),
                self.left,
            )
        await add_weekly_xp(conn, self.weekly)
        if self.missions:
            await conn.execute(
                upsert(
                    conn,
                    mission_progress,
                    ["player_id", "period_key", "mission_id"],
                    progress=lambda excluded: excluded.progress,
                    completed_at=lambda excluded: excluded.completed_at,
                ),
                list(self.missions.values()),
            )
        if self.cards:
            await conn.execute(cards.insert(), self.cards)
        if self.flags:
            await conn.execute(farming_flags.insert(), self.flags)
