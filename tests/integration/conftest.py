"""The lobby and chat services in this process, each as its own NATS role, for the tests
that play whole games through them (the table and the bots run as processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_lobby.app import LobbyApp
from opolyx_lobby.settings import LobbySection, LobbySettings
from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer


@pytest.fixture
async def lobby_app(nats_server: NatsServer) -> AsyncIterator[LobbyApp]:
    """A lobby that fills a waiting room with bots after 0.2 s."""
    app = LobbyApp(
        LobbySettings(
            nats=nats_server.settings_for("lobby"),
            http=HttpSettings(port=-1),
            lobby=LobbySection(bot_fill_after_seconds=0.2, fill_check_seconds=0.1),
        )
    )
    await app.start()
    yield app
    await app.stop()


@pytest.fixture
async def chat_app(nats_server: NatsServer) -> AsyncIterator[ChatApp]:
    # Every moment gets a sticker here: no rate limit or duplicate-text rule may eat one
    # (what the tests count is chat's own once-per-moment rule).
    section = ChatSection(
        rate_count=1000, duplicate_window_seconds=0, operator=OperatorSettings(port=-1)
    )
    app = ChatApp(
        ChatSettings(
            nats=nats_server.settings_for("chat"), http=HttpSettings(port=-1), chat=section
        )
    )
    nc = await nats_server.connect("chat")
    await app.start(nc)
    yield app
    await app.stop()
    await nc.drain()
