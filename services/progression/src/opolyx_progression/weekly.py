"""Weekly XP and its histogram, always written together (the leaderboard reads both)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from opolyx_progression.schema import weekly_xp, weekly_xp_counts
from opolyx_progression.sql import upsert

__all__ = ["add_weekly_xp"]


async def add_weekly_xp(conn: AsyncConnection, gains: Mapping[tuple[str, str], int]) -> None:
    """Add XP to players' weeks: `(week, player id) -> XP gained` (positive)."""
    if not gains:
        return
    keys = list(gains)
    current = {
        (row.week, row.player_id): int(row.xp)
        for row in await conn.execute(
            select(weekly_xp.c.week, weekly_xp.c.player_id, weekly_xp.c.xp).where(
                tuple_(weekly_xp.c.week, weekly_xp.c.player_id).in_(keys)
            )
        )
    }
    buckets: dict[tuple[str, int], int] = {}
    for (week, pid), gained in gains.items():
        old = current.get((week, pid))
        if old is not None:
            buckets[(week, old)] = buckets.get((week, old), 0) - 1
        new = (old or 0) + gained
        buckets[(week, new)] = buckets.get((week, new), 0) + 1
    await conn.execute(
        upsert(conn, weekly_xp, ["week", "player_id"], xp=lambda excluded: excluded.xp),
        [
            {"week": w, "player_id": pid, "xp": (current.get((w, pid)) or 0) + g}
            for (w, pid), g in gains.items()
        ],
    )
    changed = [{"week": w, "xp": xp, "players": n} for (w, xp), n in buckets.items() if n != 0]
    if changed:
        await conn.execute(
            upsert(
                conn,
                weekly_xp_counts,
                ["week", "xp"],
                players=lambda excluded: weekly_xp_counts.c.players + excluded.players,
            ),
            changed,
        )
