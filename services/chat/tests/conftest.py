"""Fixtures of the chat tests: the service on a real nats-server as NATS role "chat", the
gateway and bots as their roles, and the lobby's `rooms` bucket written in the lobby's own
record format (`opolyx_lobby.rooms.Room`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_contracts.subjects import ROOMS_BUCKET
from opolyx_lobby.rooms import Member, Room
from opolyx_service.connection import ensure_kv
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

OPERATOR_TOKEN = "operator-secret"


@pytest.fixture
async def admin(nats_server: NatsServer) -> AsyncIterator[Client]:
    nc = await nats_server.connect()
    await ensure_kv(nc.jetstream(), ROOMS_BUCKET)  # the lobby's bucket, made as the lobby does
    yield nc
    await nc.drain()


@pytest.fixture
async def gateway(nats_server: NatsServer) -> AsyncIterator[Client]:
    nc = await nats_server.connect("gateway")
    yield nc
    await nc.drain()


@pytest.fixture
async def bots(nats_server: NatsServer) -> AsyncIterator[Client]:
    nc = await nats_server.connect("bots")
    yield nc
    await nc.drain()


ChatFactory = Callable[..., Awaitable[ChatApp]]


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


HUMANS = (Member(player_id="alice", name="Alice"), Member(player_id="bob", name="Bob"))
BOT = Member(player_id="bot-kemi", name="Kemi", bot=True, style="shark")


def room_record(
    room_id: str = "r-1",
    *,
    public: bool = True,
    table_id: str | None = "t-1-a",
    members: tuple[Member, ...] = (*HUMANS, BOT),
) -> Room:
    return Room(
        room_id=room_id,
        mode="classic",
        seat_count=4,
        public=public,
        invite_code=None if public else "CODE",
        creator=members[0].player_id,
        members=members,
        status="started" if table_id else "open",
        created_at=1.0,
        waiting_since=1.0,
        table_id=table_id,
    )


async def put_room(admin: Client, app: ChatApp, room: Room) -> None:
    """Write a room as the lobby does and wait until this chat instance has seen it."""
    kv = await admin.jetstream().key_value(ROOMS_BUCKET)
    revision = await kv.put(room.room_id, room.model_dump_json().encode())
    assert app.directory is not None
    for _ in range(500):
        if app.directory.revision_of(room.room_id) >= revision:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"chat never saw room {room.room_id}")
