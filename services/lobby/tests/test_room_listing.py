"""The lobby's lists through a real nats-server: running public games for spectators, and
rooms that bots filled and nobody started closing instead of staying listed forever."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import GAME_FINISHED, LOBBY_EVENTS
from opolyx_service import flush_in_order
from test_lobby_nats import (
    LobbyFactory,
    create,
    fake_table_service,
    finished_event,
    lobby_cmd,
    wait_until_free,
)


async def test_running_public_games_are_listed_until_they_finish(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    await fake_table_service(nc, [])
    public = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=public, bot_id="bot-ada")
    private = (await create(nc, "bob", seats=2, public=False))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="bob", room_id=private, bot_id="bot-ada")
    waiting = (await create(nc, "carl", seats=4))["room"]["room_id"]
    assert (await lobby_cmd(nc, type="games", player_id="dora"))["games"] == []
    table_id = (await lobby_cmd(nc, type="start", player_id="alice", room_id=public))["table_id"]
    assert (await lobby_cmd(nc, type="start", player_id="bob", room_id=private))["ok"]

    games = (await lobby_cmd(nc, type="games", player_id="dora"))["games"]
    # only the public running game: neither the private game nor the open room
    assert [(g["room_id"], g["table_id"], g["status"]) for g in games] == [
        (public, table_id, "started")
    ]
    assert [m["name"] for m in games[0]["members"]] == ["Alice", "Ada"]
    assert "invite_code" not in games[0]
    assert waiting in {
        r["room_id"] for r in (await lobby_cmd(nc, type="list", player_id="d"))["rooms"]
    }

    await nc.jetstream().publish(
        GAME_FINISHED, finished_event(table_id, public, [("alice", False), ("bot-ada", True)])
    )
    await wait_until_free(nc, "alice")
    assert (await lobby_cmd(nc, type="games", player_id="dora"))["games"] == []


async def test_a_room_bots_filled_and_nobody_started_closes_and_frees_its_creator(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    """Bug: a bot-filled room whose creator left (closed the tab) stayed listed forever."""
    await lobby_factory(
        bot_fill_after_seconds=0.2, fill_check_seconds=0.05, abandoned_room_seconds=0.6
    )
    events: list[dict[str, Any]] = []

    async def on_event(msg: Msg) -> None:
        events.append(json.loads(msg.data))

    await nc.subscribe(LOBBY_EVENTS, cb=on_event)
    await flush_in_order(nc)
    room_id = (await create(nc, "alice", seats=3))["room"]["room_id"]
    private = (await create(nc, "bob", seats=3, public=False))["room"]["room_id"]
    filled_at = None
    closed_at = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and closed_at is None:
        listed = {
            r["room_id"]: r for r in (await lobby_cmd(nc, type="list", player_id="x"))["rooms"]
        }
        room = listed.get(room_id)
        if room is not None and room["filled"] == 3 and filled_at is None:
            filled_at = time.monotonic()
        if room is None and filled_at is not None:
            closed_at = time.monotonic()
        await asyncio.sleep(0.05)
    assert filled_at is not None, "bots never filled the room"
    assert closed_at is not None, "the abandoned room stayed listed"
    await asyncio.sleep(0.1)
    assert ("room_closed", room_id) in [(e["type"], e["room_id"]) for e in events]
    # its creator is free to play again; the private room (never filled by bots) stays
    await wait_until_free(nc, "alice")
    assert (await create(nc, "alice", seats=2))["ok"]
    assert (await lobby_cmd(nc, type="get", player_id="bob", room_id=private))["ok"]


async def test_a_full_room_whose_creator_is_active_is_not_closed_early(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory(
        bot_fill_after_seconds=0.1, fill_check_seconds=0.05, abandoned_room_seconds=30
    )
    await fake_table_service(nc, [])
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
        if room["filled"] == 2:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    started = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert started["ok"], started
