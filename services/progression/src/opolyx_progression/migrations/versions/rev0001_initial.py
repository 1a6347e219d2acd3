"""The first schema: players, credited games, cards, missions, weekly XP, follows, integrity.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_ID = 128


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("player_id", sa.String(_ID), primary_key=True),
        sa.Column("display_name", sa.String(64)),
        sa.Column("total_xp", sa.BigInteger, nullable=False),
        sa.Column("level", sa.Integer, nullable=False),
        sa.Column("games_credited", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("last_seen_at", sa.Float),
        sa.Column("current_table_id", sa.String(_ID)),
        sa.Column("current_since", sa.Float),
    )
    op.create_table(
        "credited_games",
        sa.Column("table_id", sa.String(_ID), primary_key=True),
        sa.Column("mode", sa.String(32), nullable=False),
        sa.Column("rounds", sa.Integer, nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("finished_at", sa.Float, nullable=False),
        sa.Column("credited_at", sa.Float, nullable=False),
        sa.Column("events_seq", sa.Integer, nullable=False),
    )
    op.create_table(
        "game_credits",
        sa.Column(
            "table_id", sa.String(_ID), sa.ForeignKey("credited_games.table_id"), primary_key=True
        ),
        sa.Column(
            "player_id", sa.String(_ID), sa.ForeignKey("players.player_id"), primary_key=True
        ),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("place", sa.Integer, nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("placement_xp", sa.Integer, nullable=False),
        sa.Column("groups_xp", sa.Integer, nullable=False),
        sa.Column("survival_xp", sa.Integer, nullable=False),
        sa.Column("mission_xp", sa.Integer, nullable=False),
        sa.Column("missions_completed", sa.Text, nullable=False),
        sa.Column("level_before", sa.Integer, nullable=False),
        sa.Column("level_after", sa.Integer, nullable=False),
        sa.Column("credited_at", sa.Float, nullable=False),
    )
    op.create_index("ix_game_credits_player", "game_credits", ["player_id", "credited_at"])
    op.create_table(
        "weekly_xp",
        sa.Column("week", sa.String(8), primary_key=True),
        sa.Column(
            "player_id", sa.String(_ID), sa.ForeignKey("players.player_id"), primary_key=True
        ),
        sa.Column("xp", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_weekly_xp_rank", "weekly_xp", ["week", "xp"])
    op.create_table(
        "cards",
        sa.Column("card_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("player_id", sa.String(_ID), sa.ForeignKey("players.player_id"), nullable=False),
        sa.Column("square", sa.Integer, nullable=False),
        sa.Column("rarity", sa.String(16), nullable=False),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("level", sa.Integer),
        sa.Column("table_id", sa.String(_ID), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("drawn_at", sa.Float, nullable=False),
    )
    op.create_index("ix_cards_player", "cards", ["player_id"])
    op.create_table(
        "mission_progress",
        sa.Column(
            "player_id", sa.String(_ID), sa.ForeignKey("players.player_id"), primary_key=True
        ),
        sa.Column("period_key", sa.String(10), primary_key=True),
        sa.Column("mission_id", sa.String(64), primary_key=True),
        sa.Column("progress", sa.BigInteger, nullable=False),
        sa.Column("completed_at", sa.Float),
    )
    op.create_table(
        "follows",
        sa.Column(
            "follower_id", sa.String(_ID), sa.ForeignKey("players.player_id"), primary_key=True
        ),
        sa.Column(
            "followee_id", sa.String(_ID), sa.ForeignKey("players.player_id"), primary_key=True
        ),
        sa.Column("followed_at", sa.Float, nullable=False),
    )
    op.create_index("ix_follows_followee", "follows", ["followee_id"])
    op.create_table(
        "evidence",
        sa.Column("evidence_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(_ID), nullable=False),
        sa.Column("giver_id", sa.String(_ID), nullable=False),
        sa.Column("receiver_id", sa.String(_ID), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("value", sa.BigInteger, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_evidence_pair", "evidence", ["giver_id", "receiver_id", "at"])
    op.create_table(
        "farming_flags",
        sa.Column("flag_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(_ID), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("giver_id", sa.String(_ID), nullable=False),
        sa.Column("receiver_id", sa.String(_ID), nullable=False),
        sa.Column("games", sa.Text, nullable=False),
        sa.Column("value", sa.BigInteger, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("flagged_at", sa.Float, nullable=False),
    )
    op.create_index("ix_farming_flags_at", "farming_flags", ["flagged_at"])


def downgrade() -> None:
    for table in (
        "farming_flags",
        "evidence",
        "follows",
        "mission_progress",
        "cards",
        "weekly_xp",
        "game_credits",
        "credited_games",
        "players",
    ):
        op.drop_table(table)
