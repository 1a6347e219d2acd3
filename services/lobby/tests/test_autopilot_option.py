"""The room's autopilot option: chosen at creation, shown with the room, and passed to the
table that runs the game (a dropped player's seat is played by a bot, or plain R16)."""

from __future__ import annotations

from typing import Any

import pytest
from nats.aio.client import Client
from test_lobby_nats import LobbyFactory, create, fake_table_service, lobby_cmd


@pytest.mark.parametrize("autopilot", [True, False])
async def test_the_room_creator_chooses_the_autopilot_and_the_table_gets_it(
    lobby_factory: LobbyFactory, nc: Client, autopilot: bool
) -> None:
    await lobby_factory()
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    room = (await create(nc, "alice", seats=2, autopilot=autopilot))["room"]
    assert room["autopilot"] is autopilot
    room_id = room["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=room_id, bot_id="bot-ada")
    started = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert started["ok"], started
    (request,) = seen
    assert request["autopilot"] is autopilot


async def test_a_room_has_the_autopilot_unless_its_creator_says_otherwise(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    room = (await create(nc, "bob", seats=2))["room"]
    assert room["autopilot"] is True
