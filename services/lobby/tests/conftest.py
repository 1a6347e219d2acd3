"""Fixtures of the lobby tests; lets them import each other's helpers (pytest runs with
``--import-mode=importlib``, which does not put this directory on ``sys.path``)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from opolyx_lobby.app import LobbyApp
from opolyx_lobby.settings import LobbySection, LobbySettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
async def lobby_factory(
    nats_server: NatsServer,
) -> AsyncIterator[Callable[..., Awaitable[LobbyApp]]]:
    """Start lobby instances (each with its own NATS connection, as NATS role "lobby") on the
    test's server."""
    started: list[LobbyApp] = []

    async def make(**section: Any) -> LobbyApp:
        section.setdefault("bot_fill_after_seconds", 3600)
        settings = LobbySettings(
            nats=nats_server.settings_for("lobby"),
            http=HttpSettings(port=-1),
            lobby=LobbySection(**section),
        )
        app = LobbyApp(settings)
        await app.start()
        started.append(app)
        return app

    yield make
    for app in started:
        await app.stop()
