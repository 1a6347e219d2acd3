"""The progression database's tables (SQLAlchemy Core); Alembic migrations create them.

A change here needs a new migration under `migrations/versions` (a test compares the
migrated database with this metadata).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

__all__ = [
    "cards",
    "credited_games",
    "credits_with_games",
    "evidence",
    "farming_flags",
    "follows",
    "game_credits",
    "metadata",
    "mission_progress",
    "players",
    "weekly_xp",
    "weekly_xp_counts",
]

metadata = MetaData()

_ID = 128

players = Table(
    "players",
    metadata,
    Column("player_id", String(_ID), primary_key=True),
    Column("display_name", String(64)),
    Column("total_xp", BigInteger, nullable=False, default=0),
    Column("level", Integer, nullable=False, default=1),
    Column("games_credited", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    # When a gateway last reported the player connected (None: reported gone).
    Column("last_seen_at", Float),
    Column("current_table_id", String(_ID)),
    Column("current_since", Float),
)

credited_games = Table(
    "credited_games",
    metadata,
    # The primary key is what makes crediting exactly-once: a redelivered game conflicts.
    Column("table_id", String(_ID), primary_key=True),
    Column("mode", String(32), nullable=False),
    Column("rounds", Integer, nullable=False),
    Column("reason", String(16), nullable=False),
    Column("finished_at", Float, nullable=False),
    Column("credited_at", Float, nullable=False),
    # The last table-event sequence the statistics were computed from.
    Column("events_seq", Integer, nullable=False),
)

game_credits = Table(
    "game_credits",
    metadata,
    Column("table_id", String(_ID), ForeignKey("credited_games.table_id"), primary_key=True),
    Column("player_id", String(_ID), ForeignKey("players.player_id"), primary_key=True),
    Column("seat", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column("reason", String(16), nullable=False),
    Column("placement_xp", Integer, nullable=False),
    Column("groups_xp", Integer, nullable=False),
    Column("survival_xp", Integer, nullable=False),
    Column("mission_xp", Integer, nullable=False),
    Column("missions_completed", Text, nullable=False),  # JSON list of mission ids
    Column("level_before", Integer, nullable=False),
    Column("level_after", Integer, nullable=False),
    Column("credited_at", Float, nullable=False),
    Index("ix_game_credits_player", "player_id", "credited_at"),
)

credits_with_games = game_credits.join(
    credited_games, credited_games.c.table_id == game_credits.c.table_id
)
"""Each player's credit beside its game's row (mode, rounds, when it finished): what the
profile's recent games, a game's credit and the past-games list read."""

weekly_xp = Table(
    "weekly_xp",
    metadata,
    Column("week", String(8), primary_key=True),
    Column("player_id", String(_ID), ForeignKey("players.player_id"), primary_key=True),
    Column("xp", BigInteger, nullable=False),
    # The leaderboard reads the top of a week and counts those above a player: both are
    # range scans of this index.
    Index("ix_weekly_xp_rank", "week", "xp"),
)

weekly_xp_counts = Table(
    "weekly_xp_counts",
    metadata,
    # How many players have exactly `xp` this week: a player's position is one plus the sum
    # above their XP, read from a few thousand distinct values instead of counting 100,000
    # players (kept in step with weekly_xp by `weekly.add_weekly_xp`).
    Column("week", String(8), primary_key=True),
    Column("xp", BigInteger, primary_key=True),
    Column("players", Integer, nullable=False),
)

cards = Table(
    "cards",
    metadata,
    Column("card_id", Integer, primary_key=True, autoincrement=True),
    Column("player_id", String(_ID), ForeignKey("players.player_id"), nullable=False),
    Column("square", Integer, nullable=False),
    Column("rarity", String(16), nullable=False),
    Column("source", String(8), nullable=False),
    Column("level", Integer),
    Column("table_id", String(_ID), nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("drawn_at", Float, nullable=False),
    Index("ix_cards_player", "player_id"),
)

mission_progress = Table(
    "mission_progress",
    metadata,
    Column("player_id", String(_ID), ForeignKey("players.player_id"), primary_key=True),
    Column("period_key", String(10), primary_key=True),
    Column("mission_id", String(64), primary_key=True),
    Column("progress", BigInteger, nullable=False),
    Column("completed_at", Float),
)

follows = Table(
    "follows",
    metadata,
    Column("follower_id", String(_ID), ForeignKey("players.player_id"), primary_key=True),
    Column("followee_id", String(_ID), ForeignKey("players.player_id"), primary_key=True),
    Column("followed_at", Float, nullable=False),
    Index("ix_follows_followee", "followee_id"),
)

evidence = Table(
    "evidence",
    metadata,
    Column("evidence_id", Integer, primary_key=True, autoincrement=True),
    Column("table_id", String(_ID), nullable=False),
    Column("giver_id", String(_ID), nullable=False),
    Column("receiver_id", String(_ID), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("value", BigInteger, nullable=False),
    Column("at", Float, nullable=False),
    Index("ix_evidence_pair", "giver_id", "receiver_id", "at"),
)

farming_flags = Table(
    "farming_flags",
    metadata,
    Column("flag_id", Integer, primary_key=True, autoincrement=True),
    Column("table_id", String(_ID), nullable=False),
    Column("kind", String(24), nullable=False),
    Column("giver_id", String(_ID), nullable=False),
    Column("receiver_id", String(_ID), nullable=False),
    Column("games", Text, nullable=False),  # JSON list of table ids, oldest first
    Column("value", BigInteger, nullable=False),
    Column("detail", Text, nullable=False),
    Column("flagged_at", Float, nullable=False),
    Index("ix_farming_flags_at", "flagged_at"),
)
