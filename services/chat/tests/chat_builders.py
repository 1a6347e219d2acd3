"""Shared builders of the chat tests: the lobby's room records as chat reads them, and
writing one the way the lobby does. A module of its own with a unique name (not `conftest`),
so that test files import it whatever other test folders are collected with them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from nats.aio.client import Client
from opolyx_chat.app import ChatApp
from opolyx_contracts.subjects import ROOMS_BUCKET
from opolyx_lobby.rooms import Member, Room

OPERATOR_TOKEN = "operator-secret"

ChatFactory = Callable[..., Awaitable[ChatApp]]

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
