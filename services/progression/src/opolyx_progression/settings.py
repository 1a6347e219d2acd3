"""Progression configuration: the shared ``OPOLYX_*`` settings plus ``OPOLYX_PROGRESSION__*``
(e.g. ``OPOLYX_PROGRESSION__DATABASE_URL=postgresql+asyncpg://...``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import ServiceSettings
from pydantic import BaseModel, Field

__all__ = ["FarmingSection", "ProgressionSection", "ProgressionSettings"]


class FarmingSection(BaseModel):
    min_games: int = Field(default=3, ge=2)
    """Games with value (or resignations) moving the same way between two players that make
    a pattern; the game completing it pays no XP and is flagged."""
    min_value: int = Field(default=1000, ge=0)
    """Smallest total value moved one way (trades, bankruptcies) that counts as a pattern."""
    window_games: int = Field(default=20, ge=2, le=200)
    """How many of a pair's latest shared games the check looks at."""


class ProgressionSection(BaseModel):
    data_dir: Path = Path("data")
    """Folder of the default SQLite database (`make run` passes its data folder)."""
    database_url: str | None = None
    """SQLAlchemy async URL; unset: `sqlite+aiosqlite:///<data_dir>/progression.sqlite3`.
    Production: `postgresql+asyncpg://user:password@host/db`."""
    games_durable: str = "progression"
    """Durable consumer name on the GAMES stream (shared by every progression instance)."""
    games_ack_wait_seconds: float = Field(default=60.0, gt=0)
    """How long GAMES waits for an ack before redelivering (to another instance, after a
    crash); crediting one game takes milliseconds, reading a long game's events a little more."""
    fetch_batch: int = Field(default=64, ge=1, le=1000)
    """GAMES messages fetched at once."""
    events_timeout_seconds: float = Field(default=5.0, gt=0)
    """How long reading one game's events from TABLE_EVENTS may take before a retry."""
    leaderboard_cache_seconds: float = Field(default=1.0, ge=0)
    """How long the top 100 of a week's board is shared between askers (0: read every time);
    each asker's own row and position are always read fresh."""
    presence_ttl_seconds: float = Field(default=75.0, gt=0)
    """A player not reported online by a gateway for this long counts as offline."""
    current_game_ttl_seconds: float = Field(default=6 * 3600.0, gt=0)
    """A game still unfinished after this long is no longer shown as a player's current game
    (its finish was lost, or the table was never created)."""
    farming: FarmingSection = Field(default_factory=FarmingSection)
    operator: OperatorSettings = Field(default_factory=OperatorSettings)
    fault_stop_at: Literal["committed_before_ack"] | None = None
    """Tests only: the process stops itself (SIGSTOP) right after a game's credit is committed
    and before GAMES is acknowledged, so a crash test can kill it exactly there."""

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir.resolve() / 'progression.sqlite3'}"


class ProgressionSettings(ServiceSettings):
    service_name: str = "progression"
    progression: ProgressionSection = Field(default_factory=ProgressionSection)
