"""What players and operators read: profiles, cards, missions, leaderboards, credits, flags.

Every function takes a connection and returns the contract's reply model; nothing here
writes except `touch_player` (a profile request records the gateway's display name).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from opolyx_contracts.errors import ContractError
from opolyx_contracts.progression import (
    LEADERBOARD_LIMIT,
    UNKNOWN_PLAYER,
    CardsReply,
    CardView,
    FarmingFlagView,
    FlagsReply,
    GameCredit,
    GameCreditReply,
    LeaderboardEntry,
    LeaderboardReply,
    MissionsReply,
    MissionView,
    Profile,
    PublicProfile,
    XpBreakdown,
)
from opolyx_rules.progression import Card, Rarity, boosts_by_square, level_for_xp, xp_for_level
from sqlalchemy import Row, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from opolyx_progression.missions import assigned
from opolyx_progression.periods import iso_week_key
from opolyx_progression.schema import (
    cards,
    credited_games,
    credits_with_games,
    farming_flags,
    follows,
    game_credits,
    mission_progress,
    players,
    weekly_xp,
    weekly_xp_counts,
)
from opolyx_progression.sql import insert_ignore, rank_name

__all__ = [
    "MAX_CARDS_LISTED",
    "TopCache",
    "card_views",
    "flags",
    "game_credit",
    "leaderboard",
    "missions",
    "player_cards",
    "profile",
    "public_profile",
    "touch_player",
]

MAX_CARDS_LISTED = 2000
RECENT_GAMES = 5


async def touch_player(
    conn: AsyncConnection, player_id: str, display_name: str | None, now: float
) -> None:
    """Make sure the player exists; keep the display name the gateway vouches for."""
    await conn.execute(
        insert_ignore(conn, players, ["player_id"]).values(
            player_id=player_id,
            display_name=display_name,
            total_xp=0,
            level=1,
            games_credited=0,
            created_at=now,
        )
    )
    if display_name is not None:
        await conn.execute(
            players.update()
            .where(
                players.c.player_id == player_id,
                players.c.display_name.is_distinct_from(display_name),
            )
            .values(display_name=display_name)
        )


async def _player(conn: AsyncConnection, player_id: str) -> Row[Any]:
    row = (await conn.execute(select(players).where(players.c.player_id == player_id))).first()
    if row is None:
        raise ContractError(UNKNOWN_PLAYER, f"no player {player_id!r} is known to progression")
    return row


async def _counts(conn: AsyncConnection, player_id: str) -> tuple[int, int, int]:
    """(cards, followers, following) of a player."""
    owned = await conn.scalar(select(func.count()).where(cards.c.player_id == player_id))
    followers = await conn.scalar(select(func.count()).where(follows.c.followee_id == player_id))
    following = await conn.scalar(select(func.count()).where(follows.c.follower_id == player_id))
    return int(owned or 0), int(followers or 0), int(following or 0)


async def _weekly(conn: AsyncConnection, player_id: str, week: str) -> int:
    xp = await conn.scalar(
        select(weekly_xp.c.xp).where(weekly_xp.c.week == week, weekly_xp.c.player_id == player_id)
    )
    return int(xp or 0)


def card_views(rows: Sequence[Row[Any]]) -> list[CardView]:
    return [
        CardView(
            card_id=r.card_id,
            square=r.square,
            rarity=r.rarity,
            boost_pct=Rarity(r.rarity).boost_pct,
            source=r.source,
            level=r.level,
            table_id=r.table_id,
            seed=r.seed,
            drawn_at=r.drawn_at,
        )
        for r in rows
    ]


def _credit_view(row: Row[Any], dropped: list[CardView]) -> GameCredit:
    completed = json.loads(row.missions_completed)
    xp = row.placement_xp + row.groups_xp + row.survival_xp
    return GameCredit(
        table_id=row.table_id,
        mode=row.mode,
        rounds=row.rounds,
        place=row.place,
        paid=row.reason == "paid",
        reason=row.reason,
        xp=xp,
        xp_breakdown=XpBreakdown(
            placement=row.placement_xp, groups=row.groups_xp, survival=row.survival_xp
        ),
        mission_xp=row.mission_xp,
        missions_completed=completed,
        level_before=row.level_before,
        level_after=row.level_after,
        cards=dropped,
        credited_at=row.credited_at,
    )


def _credits_query() -> Any:
    return select(game_credits, credited_games.c.mode, credited_games.c.rounds).select_from(
        credits_with_games
    )


async def _credit_views(
    conn: AsyncConnection, player_id: str, rows: Sequence[Row[Any]]
) -> list[GameCredit]:
    tables = [r.table_id for r in rows]
    dropped: dict[str, list[Row[Any]]] = {}
    if tables:
        found = await conn.execute(
            select(cards)
            .where(cards.c.player_id == player_id, cards.c.table_id.in_(tables))
            .order_by(cards.c.card_id)
        )
        for card in found:
            dropped.setdefault(card.table_id, []).append(card)
    return [_credit_view(r, card_views(dropped.get(r.table_id, []))) for r in rows]


async def profile(conn: AsyncConnection, player_id: str, now: float) -> Profile:
    row = await _player(conn, player_id)
    owned, followers, following = await _counts(conn, player_id)
    recent = (
        await conn.execute(
            _credits_query()
            .where(game_credits.c.player_id == player_id)
            .order_by(game_credits.c.credited_at.desc())
            .limit(RECENT_GAMES)
        )
    ).all()
    level = level_for_xp(row.total_xp)
    return Profile(
        player_id=player_id,
        display_name=row.display_name,
        total_xp=row.total_xp,
        level=level,
        rank=rank_name(level),
        level_xp=xp_for_level(level),
        next_level_xp=xp_for_level(level + 1),
        weekly_xp=await _weekly(conn, player_id, iso_week_key(now)),
        games_credited=row.games_credited,
        cards=owned,
        followers=followers,
        following=following,
        recent_games=await _credit_views(conn, player_id, recent),
    )


async def public_profile(
    conn: AsyncConnection, viewer_id: str, target_id: str, now: float
) -> PublicProfile:
    row = await _player(conn, target_id)
    owned, followers, following = await _counts(conn, target_id)
    followed = await conn.scalar(
        select(follows.c.followee_id).where(
            follows.c.follower_id == viewer_id, follows.c.followee_id == target_id
        )
    )
    level = level_for_xp(row.total_xp)
    return PublicProfile(
        player_id=target_id,
        display_name=row.display_name,
        total_xp=row.total_xp,
        level=level,
        rank=rank_name(level),
        weekly_xp=await _weekly(conn, target_id, iso_week_key(now)),
        games_credited=row.games_credited,
        cards=owned,
        followers=followers,
        following=following,
        followed_by_you=followed is not None,
    )


async def player_cards(conn: AsyncConnection, player_id: str) -> CardsReply:
    rows = (
        await conn.execute(
            select(cards)
            .where(cards.c.player_id == player_id)
            .order_by(cards.c.card_id.desc())
            .limit(MAX_CARDS_LISTED)
        )
    ).all()
    best = boosts_by_square(Card(r.square, Rarity(r.rarity)) for r in rows)
    return CardsReply(cards=card_views(rows), best_by_square=best)


async def missions(conn: AsyncConnection, player_id: str, now: float) -> MissionsReply:
    assignments = assigned(player_id, now)
    rows = await conn.execute(
        select(mission_progress).where(
            mission_progress.c.player_id == player_id,
            mission_progress.c.period_key.in_({a.period_key for a in assignments}),
        )
    )
    progress = {(r.period_key, r.mission_id): int(r.progress) for r in rows}
    return MissionsReply(
        missions=[
            MissionView(
                mission_id=a.mission.mission_id,
                period=a.mission.period,
                period_key=a.period_key,
                goal=a.mission.goal,
                progress=(done := progress.get((a.period_key, a.mission.mission_id), 0)),
                completed=done >= a.mission.goal,
                reward_xp=a.mission.reward_xp,
                ends_at=a.ends_at,
            )
            for a in assignments
        ]
    )


@dataclass(frozen=True)
class _Row:
    player_id: str
    xp: int
    display_name: str | None
    total_xp: int
    above: int | None = None
    total: int | None = None


def _entries(rows: Sequence[Row[Any] | _Row], first_position: int = 1) -> list[LeaderboardEntry]:
    """Rows ordered by XP (descending): equal XP shares a position (1, 2, 2, 4)."""
    out: list[LeaderboardEntry] = []
    position, previous = first_position, None
    for index, row in enumerate(rows):
        if previous is not None and row.xp < previous:
            position = first_position + index
        previous = row.xp
        level = level_for_xp(row.total_xp)
        out.append(
            LeaderboardEntry(
                position=position,
                player_id=row.player_id,
                display_name=row.display_name,
                level=level,
                rank=rank_name(level),
                xp=row.xp,
            )
        )
    return out


def _board_query(week: str) -> Any:
    return (
        select(
            weekly_xp.c.player_id,
            weekly_xp.c.xp,
            players.c.display_name,
            players.c.total_xp,
        )
        .join(players, players.c.player_id == weekly_xp.c.player_id)
        .where(weekly_xp.c.week == week)
        .order_by(weekly_xp.c.xp.desc(), weekly_xp.c.player_id)
    )


class TopCache:
    """The top of each week's board, kept for `ttl` seconds: every asker shares one read of
    the top 100 (the board is at most `ttl` seconds behind; the asker's own row and position
    are always read fresh). `ttl=0` reads every time.

    `invalidate()` (called once this process committed a credit) drops what is kept: a
    player who just finished a game and opens the board must see the game on it, and so
    must everyone the same game paid (a shared top from just before the commit left them
    off). A read that began before the invalidation does not keep its result (it may
    predate the commit). Games credited by another instance still show within `ttl`."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._tops: dict[str, tuple[float, list[LeaderboardEntry]]] = {}
        self._generation = 0

    def invalidate(self) -> None:
        self._generation += 1
        self._tops.clear()

    async def top(self, conn: AsyncConnection, week: str, now: float) -> list[LeaderboardEntry]:
        cached = self._tops.get(week)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        generation = self._generation
        entries = _entries((await conn.execute(_board_query(week).limit(LEADERBOARD_LIMIT))).all())
        if self.ttl > 0 and generation == self._generation:
            if len(self._tops) > 8:  # only a few weeks are ever asked for
                self._tops.clear()
            self._tops[week] = (now, entries)
        return entries


_NO_CACHE = TopCache(0.0)


async def leaderboard(
    conn: AsyncConnection,
    player_id: str,
    scope: Literal["weekly", "following"],
    week: str | None,
    now: float,
    limit: int = LEADERBOARD_LIMIT,
    cache: TopCache = _NO_CACHE,
) -> LeaderboardReply:
    week = week or iso_week_key(now)
    if scope == "following":
        circle = select(follows.c.followee_id).where(follows.c.follower_id == player_id)
        rows = (
            await conn.execute(
                _board_query(week).where(
                    (weekly_xp.c.player_id == player_id) | weekly_xp.c.player_id.in_(circle)
                )
            )
        ).all()
        entries = _entries(rows)
        own = next((e for e in entries if e.player_id == player_id), None)
        return LeaderboardReply(
            scope=scope, week=week, entries=entries[:limit], own=own, players=len(entries)
        )
    entries = (await cache.top(conn, week, now))[:limit]
    # The asker's row, how many are above them and the week's total in one round trip
    # (positions come from the XP histogram, not from counting every player).
    mine_xp = (
        select(weekly_xp.c.xp)
        .where(weekly_xp.c.week == week, weekly_xp.c.player_id == player_id)
        .scalar_subquery()
    )
    counts = select(func.sum(weekly_xp_counts.c.players)).where(weekly_xp_counts.c.week == week)
    mine = (
        await conn.execute(
            select(
                mine_xp.label("xp"),
                select(players.c.display_name)
                .where(players.c.player_id == player_id)
                .scalar_subquery()
                .label("display_name"),
                select(players.c.total_xp)
                .where(players.c.player_id == player_id)
                .scalar_subquery()
                .label("total_xp"),
                counts.where(weekly_xp_counts.c.xp > mine_xp).scalar_subquery().label("above"),
                counts.scalar_subquery().label("total"),
            )
        )
    ).one()
    # Read fresh even when the asker is in the shared top (which may be `ttl` old): the
    # position is one more than the players with more XP, as `_entries` ranks ties.
    own = None
    if mine.xp is not None:
        row = {**mine._mapping, "player_id": player_id}
        own = _entries([_Row(**row)], first_position=int(mine.above or 0) + 1)[0]
    total = mine.total
    return LeaderboardReply(
        scope=scope, week=week, entries=entries, own=own, players=int(total or 0)
    )


async def game_credit(conn: AsyncConnection, player_id: str, table_id: str) -> GameCreditReply:
    row = (
        await conn.execute(
            _credits_query().where(
                game_credits.c.player_id == player_id, game_credits.c.table_id == table_id
            )
        )
    ).first()
    if row is None:
        return GameCreditReply(status="pending", credit=None)
    return GameCreditReply(
        status="credited", credit=(await _credit_views(conn, player_id, [row]))[0]
    )


async def flags(conn: AsyncConnection, limit: int) -> FlagsReply:
    rows = await conn.execute(
        select(farming_flags).order_by(farming_flags.c.flag_id.desc()).limit(limit)
    )
    return FlagsReply(
        flags=[
            FarmingFlagView(
                flag_id=r.flag_id,
                table_id=r.table_id,
                kind=cast(Literal["one_way_value", "resignation_pattern"], r.kind),
                giver_id=r.giver_id,
                receiver_id=r.receiver_id,
                games=json.loads(r.games)[-64:],
                value=r.value,
                detail=r.detail,
                flagged_at=r.flagged_at,
            )
            for r in rows
        ]
    )
