"""Weekly XP histogram: leaderboard positions without counting every player of the week.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "weekly_xp_counts",
        sa.Column("week", sa.String(8), primary_key=True),
        sa.Column("xp", sa.BigInteger, primary_key=True),
        sa.Column("players", sa.Integer, nullable=False),
    )
    # Existing weeks: count what weekly_xp already holds.
    op.execute(
        "INSERT INTO weekly_xp_counts (week, xp, players)"
        " SELECT week, xp, COUNT(*) FROM weekly_xp GROUP BY week, xp"
    )


def downgrade() -> None:
    op.drop_table("weekly_xp_counts")
