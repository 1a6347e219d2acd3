"""Fixtures of the chat tests: the service on a real nats-server as NATS role "chat", the
gateway and bots as their roles, and the lobby's `rooms` bucket written in the lobby's own
record format (`opolyx_lobby.rooms.Room`)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_contracts.subjects import ROOMS_BUCKET
from opolyx_service.connection import ensure_kv
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ConnectAs

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from chat_builders import OPERATOR_TOKEN, ChatFactory  # noqa: E402


@pytest.fixture
async def admin(connect_as: ConnectAs) -> Client:
    nc = await connect_as()
    await ensure_kv(nc.jetstream(), ROOMS_BUCKET)  # the lobby's bucket, made as the lobby does
    return nc


@pytest.fixture
async def gateway(connect_as: ConnectAs) -> Client:
    return await connect_as("gateway")


@pytest.fixture
async def bots(connect_as: ConnectAs) -> Client:
    return await connect_as("bots")


@pytest.fixture
async def chat_factory(nats_server: NatsServer, admin: Client) -> AsyncIterator[ChatFactory]:
    """Start chat instances, each on its own connection as role "chat"; at the end, the
    server must have refused nothing any role did."""
    started: list[tuple[ChatApp, Client]] = []

    async def make(**section: Any) -> ChatApp:
        section.setdefault("operator", {"token": OPERATOR_TOKEN, "port": 0})
        settings = ChatSettings(
            nats=nats_server.settings_for("chat"),
            http=HttpSettings(port=-1),
            chat=ChatSection(**section),
        )
        app = ChatApp(settings)
        nc = await nats_server.connect("chat")
        await app.start(nc)
        started.append((app, nc))
        return app

    yield make
    for app, nc in started:
        await app.stop()
        await nc.drain()
    assert nats_server.permission_violations() == []


@pytest.fixture
async def chat(chat_factory: ChatFactory) -> ChatApp:
    return await chat_factory(blocked_words=["badword"], rate_count=5)
