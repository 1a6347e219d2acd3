"""A player's past games and those of the players they follow (issue 16: replays are
found from the profile). Every credited game is listed, practice games included (they are
credited with no XP); the newest first."""

from __future__ import annotations

from typing import Any

from opolyx_contracts.replay import PastGame, PastGamesReply
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from opolyx_progression.schema import (
    credited_games,
    credits_with_games,
    follows,
    game_credits,
    players,
)

__all__ = ["past_games"]


def _games_query(limit: int) -> Any:
    return (
        select(
            credited_games.c.table_id,
            credited_games.c.mode,
            credited_games.c.rounds,
            credited_games.c.finished_at,
            game_credits.c.place,
            game_credits.c.player_id,
            players.c.display_name,
        )
        .select_from(credits_with_games)
        .join(players, players.c.player_id == game_credits.c.player_id)
        .order_by(credited_games.c.finished_at.desc(), credited_games.c.table_id)
        .limit(limit)
    )


def _rows(rows: Any) -> list[PastGame]:
    return [
        PastGame(
            table_id=r.table_id,
            mode=r.mode,
            finished_at=r.finished_at,
            rounds=r.rounds,
            place=r.place,
            player_id=r.player_id,
            name=r.display_name,
        )
        for r in rows
    ]


async def past_games(conn: AsyncConnection, player_id: str, limit: int) -> PastGamesReply:
    own = await conn.execute(_games_query(limit).where(game_credits.c.player_id == player_id))
    followed_ids = select(follows.c.followee_id).where(follows.c.follower_id == player_id)
    followed = await conn.execute(
        _games_query(limit).where(game_credits.c.player_id.in_(followed_ids))
    )
    return PastGamesReply(player_id=player_id, games=_rows(own), followed=_rows(followed))
