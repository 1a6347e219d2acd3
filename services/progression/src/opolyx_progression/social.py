"""Follows, presence, current games and the boosts a player brings to a game.

Where a followed player is (online, in which game) is kept here rather than asked of the
lobby per list: listing 500 followed players must not cost 500 lobby requests, lobby
commands carry a player's identity that only the gateway may assert, and the answer must
survive a restart. So the service records it from what it already receives:
- online: the gateways' presence reports (a player not reported within the TTL is offline);
- current game: set when the lobby asks for the players' boosts at a game's start (it names
  the table), cleared by GAMES when the player's seat goes out or the game finishes, and
  ignored after `current_game_ttl_seconds` (a start that never happened, a lost finish).
"""

from __future__ import annotations

from collections.abc import Sequence

from opolyx_contracts.errors import ContractError
from opolyx_contracts.progression import (
    FOLLOW_LIMIT,
    FOLLOW_LIMIT_REACHED,
    FOLLOW_SELF,
    UNKNOWN_PLAYER,
    FollowedPlayer,
    FollowingReply,
    FollowReply,
)
from opolyx_rules.progression import Card, Rarity, boosts_by_square, level_for_xp
from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from opolyx_progression.schema import cards, follows, players
from opolyx_progression.sql import insert_ignore, rank_name

__all__ = [
    "boosts",
    "follow",
    "following",
    "leave_game",
    "report_presence",
    "set_current_game",
    "unfollow",
]


async def _ensure_players(conn: AsyncConnection, ids: Sequence[str], now: float) -> None:
    if ids:
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
                for pid in dict.fromkeys(ids)
            ],
        )


async def _follow_reply(conn: AsyncConnection, player_id: str, target_id: str) -> FollowReply:
    follows_now = await conn.scalar(
        select(follows.c.followee_id).where(
            follows.c.follower_id == player_id, follows.c.followee_id == target_id
        )
    )
    followers = await conn.scalar(select(func.count()).where(follows.c.followee_id == target_id))
    count = await conn.scalar(select(func.count()).where(follows.c.follower_id == player_id))
    return FollowReply(
        target_id=target_id,
        following=follows_now is not None,
        followers=int(followers or 0),
        following_count=int(count or 0),
    )


async def follow(conn: AsyncConnection, player_id: str, target_id: str, now: float) -> FollowReply:
    """One-way: `player_id` follows `target_id` (idempotent)."""
    if player_id == target_id:
        raise ContractError(FOLLOW_SELF, "a player cannot follow themselves")
    known = await conn.scalar(select(players.c.player_id).where(players.c.player_id == target_id))
    if known is None:
        raise ContractError(UNKNOWN_PLAYER, f"no player {target_id!r} is known to progression")
    await _ensure_players(conn, [player_id], now)
    count = await conn.scalar(select(func.count()).where(follows.c.follower_id == player_id))
    if int(count or 0) >= FOLLOW_LIMIT:
        already = await conn.scalar(
            select(follows.c.followee_id).where(
                follows.c.follower_id == player_id, follows.c.followee_id == target_id
            )
        )
        if already is None:
            raise ContractError(
                FOLLOW_LIMIT_REACHED,
                f"you follow {FOLLOW_LIMIT} players already; unfollow someone first",
            )
    await conn.execute(
        insert_ignore(conn, follows, ["follower_id", "followee_id"]).values(
            follower_id=player_id, followee_id=target_id, followed_at=now
        )
    )
    return await _follow_reply(conn, player_id, target_id)


async def unfollow(conn: AsyncConnection, player_id: str, target_id: str) -> FollowReply:
    """Stop following (idempotent; unknown players are simply not followed)."""
    await conn.execute(
        delete(follows).where(
            follows.c.follower_id == player_id, follows.c.followee_id == target_id
        )
    )
    return await _follow_reply(conn, player_id, target_id)


async def following(
    conn: AsyncConnection,
    player_id: str,
    now: float,
    *,
    presence_ttl: float,
    current_game_ttl: float,
) -> FollowingReply:
    rows = await conn.execute(
        select(
            follows.c.followee_id,
            follows.c.followed_at,
            players.c.display_name,
            players.c.total_xp,
            players.c.last_seen_at,
            players.c.current_table_id,
            players.c.current_since,
        )
        .join(players, players.c.player_id == follows.c.followee_id)
        .where(follows.c.follower_id == player_id)
        .order_by(follows.c.followed_at.desc())
        .limit(FOLLOW_LIMIT)
    )
    listed: list[FollowedPlayer] = []
    for r in rows:
        level = level_for_xp(r.total_xp)
        in_game = r.current_since is not None and now - r.current_since < current_game_ttl
        listed.append(
            FollowedPlayer(
                player_id=r.followee_id,
                display_name=r.display_name,
                level=level,
                rank=rank_name(level),
                online=r.last_seen_at is not None and now - r.last_seen_at < presence_ttl,
                table_id=r.current_table_id if in_game else None,
                followed_at=r.followed_at,
            )
        )
    followers = await conn.scalar(select(func.count()).where(follows.c.followee_id == player_id))
    return FollowingReply(players=listed, followers=int(followers or 0), following=len(listed))


async def report_presence(
    conn: AsyncConnection,
    online: Sequence[str],
    offline: Sequence[str],
    names: dict[str, str],
    now: float,
) -> None:
    await _ensure_players(conn, online, now)
    if online:
        await conn.execute(
            update(players).where(players.c.player_id.in_(online)).values(last_seen_at=now)
        )
    for pid, name in names.items():
        if pid in online:
            await conn.execute(
                update(players).where(players.c.player_id == pid).values(display_name=name)
            )
    gone = [pid for pid in offline if pid not in set(online)]
    if gone:
        await conn.execute(
            update(players).where(players.c.player_id.in_(gone)).values(last_seen_at=None)
        )


async def set_current_game(
    conn: AsyncConnection, ids: Sequence[str], table_id: str, now: float
) -> None:
    await _ensure_players(conn, ids, now)
    await conn.execute(
        update(players)
        .where(players.c.player_id.in_(ids))
        .values(current_table_id=table_id, current_since=now)
    )


async def leave_game(conn: AsyncConnection, player_id: str, table_id: str) -> None:
    """The player's seat went out (or the game finished): no longer their current game."""
    await conn.execute(
        update(players)
        .where(players.c.player_id == player_id, players.c.current_table_id == table_id)
        .values(current_table_id=None, current_since=None)
    )


async def boosts(conn: AsyncConnection, ids: Sequence[str]) -> dict[str, dict[int, int]]:
    """Each player's best card boost per square (R20); players without cards are left out."""
    if not ids:
        return {}
    rows = await conn.execute(
        select(cards.c.player_id, cards.c.square, cards.c.rarity).where(cards.c.player_id.in_(ids))
    )
    owned: dict[str, list[Card]] = {}
    for r in rows:
        owned.setdefault(r.player_id, []).append(Card(r.square, Rarity(r.rarity)))
    return {pid: boosts_by_square(held) for pid, held in owned.items()}
