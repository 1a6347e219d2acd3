"""Lobby configuration from the environment: the shared ``OPOLYX_*`` settings plus
``OPOLYX_LOBBY__*`` (e.g. ``OPOLYX_LOBBY__BOT_FILL_AFTER_SECONDS=20``)."""

from __future__ import annotations

from typing import Literal

from opolyx_service.settings import ServiceSettings
from pydantic import BaseModel, Field

__all__ = ["LobbySection", "LobbySettings", "StartStep"]

StartStep = Literal["marked_starting", "table_created", "room_started", "players_seated"]
"""The named steps of a start, in order (see `opolyx_lobby.starting`)."""


class LobbySection(BaseModel):
    bot_fill_after_seconds: float = Field(default=20.0, ge=0)
    """How long an open public room waits for humans before bots take its free seats."""
    abandoned_room_seconds: float = Field(default=300.0, gt=0)
    """An open public room whose free seats bots took closes when nobody started it this
    long after the bots came (its humans are gone; nobody else can start it)."""
    fill_check_seconds: float = Field(default=1.0, gt=0)
    """How often each instance looks for rooms that waited long enough."""
    progression_timeout_seconds: float = Field(default=1.0, gt=0)
    """How long starting a game waits for the progression service's card boosts."""
    table_create_timeout_seconds: float = Field(default=5.0, gt=0)
    """How long starting a game waits for the table service to create the table."""
    claim_grace_seconds: float = Field(default=10.0, ge=0)
    """A player's slot pointing at a room that does not seat them is stale after this long."""
    start_resume_after_seconds: float = Field(default=6.0, ge=0)
    """A start still "starting" after this long is carried on by whichever instance sees it
    (its own instance may have died); keep it above the table create timeout."""
    fault_stop_at: StartStep | None = None
    """Tests only: the process stops itself (SIGSTOP) on reaching this step of a start, so
    a crash test can kill it exactly there. Never set it in production."""
    games_durable: str = "lobby"
    """Durable consumer name on the GAMES stream (shared by every lobby instance)."""


class LobbySettings(ServiceSettings):
    service_name: str = "lobby"
    lobby: LobbySection = Field(default_factory=LobbySection)
