"""A message resent after a reconnect runs once, through the real lobby and chat services
(in process, each on its own NATS connection as its own role, on a real nats-server with
authorization on): a lobby ``create`` whose reply was lost makes one room, a chat post one
message, and a refusal that says nothing ran (the lobby stopped: ``service/unavailable``)
lets the same message run once the lobby is back. The fake-lobby tests
(`test_idempotent_messages.py`) cover the memory itself; these prove what the services hold.

The reply is lost the way a dropped connection loses it: the client sends and closes its
socket at once, so the gateway runs the message and writes its reply to a closed socket."""

from __future__ import annotations

import asyncio
import json
import re
import time
import typing
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from client_files import STATIC_JS
from gateway_builders import RunningGateway, WsClient, gateway_settings, serve_gateway
from opolyx_contracts.chat import CHAT_DUPLICATE
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import (
    ONCE_PER_ID_TYPES,
    RESEND_WINDOW_SECONDS,
    client_message_adapter,
)
from opolyx_gateway.constants import client_constants
from opolyx_gateway.idempotency import CHANGING_TYPES
from opolyx_gateway.settings import GatewayOptions
from opolyx_lobby.app import LobbyApp
from opolyx_lobby.settings import LobbySection, LobbySettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.lobby_client import LobbyClient
from opolyx_testing.nats_server import NatsServer
from pydantic import ValidationError
from test_social_chat import start_chat

NET_JS = STATIC_JS / "net.js"


class Services:
    """The real lobby (restartable) and chat next to the gateway."""

    def __init__(self, nats_server: NatsServer, gateway: RunningGateway) -> None:
        self.nats_server = nats_server
        self.gateway = gateway
        self.lobby: LobbyApp | None = None
        self.rooms = LobbyClient(gateway.nc)
        """The real lobby asked directly (not through the gateway and its memory)."""

    async def start_lobby(self) -> None:
        settings = LobbySettings(
            nats=self.nats_server.settings_for("lobby"),
            http=HttpSettings(port=-1),
            # no bots join while a test looks at the rooms
            lobby=LobbySection(bot_fill_after_seconds=3600),
        )
        self.lobby = LobbyApp(settings)
        await self.lobby.start()

    async def stop_lobby(self) -> None:
        if self.lobby is not None:
            await self.lobby.stop()
            self.lobby = None

    async def rooms_created_by(self, player_id: str) -> list[str]:
        listing = await self.rooms.ok(type="list", player_id=player_id)
        return [r["room_id"] for r in listing["rooms"] if r["creator"] == player_id]


@pytest.fixture
async def services(nats_server: NatsServer) -> AsyncIterator[Services]:
    settings = gateway_settings(nats_server.url_for("gateway"))
    async with serve_gateway(settings, nats_server.url) as gateway:
        running = Services(nats_server, gateway)
        await running.start_lobby()
        chat, chat_nc = await start_chat(nats_server)
        try:
            yield running
        finally:
            await chat.stop()
            await chat_nc.drain()
            await running.stop_lobby()
    assert nats_server.permission_violations() == []


async def signed_in(gateway: RunningGateway, name: str) -> tuple[str, str, WsClient]:
    token, player_id = await gateway.sign_in(name)
    return token, player_id, await gateway.client(token)


async def send_and_drop(client: WsClient, message: dict[str, Any]) -> None:
    """Send, then lose the connection before the reply comes."""
    await client.send_raw(json.dumps(message))
    await client.close()


async def eventually(check: Any, timeout: float = 10.0) -> Any:
    """`await check()` once it is truthy (the gateway is still running the message)."""
    deadline = time.monotonic() + timeout
    while not (value := await check()):
        assert time.monotonic() < deadline, "never came true"
        await asyncio.sleep(0.05)
    return value


async def test_a_create_resent_after_a_lost_reply_makes_one_room(services: Services) -> None:
    gateway = services.gateway
    token, player_id, first = await signed_in(gateway, "Alice")
    create = {"id": "create-1", "type": "lobby", "action": "create", "mode": "classic", "seats": 4}
    await send_and_drop(first, create)
    # the room exists: the first create ran, its reply went to the closed socket
    (room_id,) = await eventually(lambda: services.rooms_created_by(player_id))

    again = await gateway.client(token)
    await again.send_raw(json.dumps(create))
    answer = await again.reply("create-1")
    # the first create's reply (a second run would be refused: the player is in a room)
    assert answer["ok"], answer
    assert answer["data"]["room"]["room_id"] == room_id
    assert await services.rooms_created_by(player_id) == [room_id]
    mine = await again.request("lobby", action="mine")
    assert mine["data"]["room"]["room_id"] == room_id

    # the same message under a new id is a new create: the lobby refuses it (one room each)
    await again.send_raw(json.dumps({**create, "id": "create-2"}))
    refused = await again.reply("create-2")
    assert refused["ok"] is False and refused["error"]["code"].startswith("lobby/"), refused
    assert await services.rooms_created_by(player_id) == [room_id]


async def test_a_chat_post_resent_after_a_lost_reply_is_one_message(services: Services) -> None:
    gateway = services.gateway
    token, _, first = await signed_in(gateway, "Alice")
    _, _, reader = await signed_in(gateway, "Bob")
    text = f"one of these ({uuid.uuid4().hex[:8]})"
    post = {"id": "post-1", "type": "chat.post", "channel": "lobby", "text": text}

    async def history() -> list[dict[str, Any]]:
        watched = await reader.request("chat.watch", channel="lobby")
        await reader.request("chat.unwatch", channel="lobby")
        return [m for m in watched["data"]["messages"] if m["text"] == text]

    await send_and_drop(first, post)
    (stored,) = await eventually(history)

    again = await gateway.client(token)
    await again.send_raw(json.dumps(post))
    answer = await again.reply("post-1")
    assert answer["ok"], answer
    assert answer["data"]["message"]["message_id"] == stored["message_id"]
    assert [m["message_id"] for m in await history()] == [stored["message_id"]]

    # the same text under a new id reaches chat, which refuses it as just said: what the
    # retry would have been answered without the gateway's memory
    repeated = await again.request("chat.post", channel="lobby", text=text)
    assert repeated["ok"] is False and repeated["error"]["code"] == CHAT_DUPLICATE, repeated
    assert len(await history()) == 1


async def test_a_create_refused_as_unavailable_runs_when_the_lobby_is_back(
    services: Services,
) -> None:
    gateway = services.gateway
    token, player_id, client = await signed_in(gateway, "Alice")
    await services.stop_lobby()
    create = {"id": "create-9", "type": "lobby", "action": "create", "mode": "classic", "seats": 2}
    await client.send_raw(json.dumps(create))
    refused = await client.reply("create-9")
    assert refused["ok"] is False and refused["error"]["code"] == UNAVAILABLE, refused

    await services.start_lobby()
    assert await services.rooms_created_by(player_id) == []  # nothing ran while it was away
    # the page resends after its reconnect: the refusal was not remembered, the create runs
    await client.close()
    again = await gateway.client(token)
    await again.send_raw(json.dumps(create))
    answer = await again.reply("create-9")
    assert answer["ok"], answer
    room_id = answer["data"]["room"]["room_id"]
    assert await services.rooms_created_by(player_id) == [room_id]
    # and from now on it is remembered: once more, the same reply and still one room
    await again.send_raw(json.dumps(create))
    assert await again.reply("create-9") == answer
    assert await services.rooms_created_by(player_id) == [room_id]


def test_the_types_a_client_resends_are_those_the_gateway_runs_once() -> None:
    def type_of(model: type) -> str:
        field = model.model_fields["type"]  # type: ignore[attr-defined]
        return str(field.annotation.__args__[0])

    assert {type_of(m) for m in CHANGING_TYPES} | {"table.cmd"} == set(ONCE_PER_ID_TYPES)
    # reads and watches are not among them (the page asks again after a reconnect)
    for read in ("ping", "table.watch", "chat.watch", "chat.mutes", "table.trade_preview"):
        assert read not in ONCE_PER_ID_TYPES
    parsed = client_message_adapter.validate_python({"id": 1, "type": "chat.mutes"})
    assert type(parsed) not in CHANGING_TYPES
    # the web client takes the list from the served constants and spells none of it
    source = NET_JS.read_text(encoding="utf-8")
    assert "ONCE_PER_ID_TYPES" in source
    spelled = set(re.findall(r'"([^"\\\n]*)"', source)) & set(ONCE_PER_ID_TYPES)
    assert not spelled, f"net.js spells {sorted(spelled)}"


def test_a_gateway_remembers_replies_for_as_long_as_a_client_resends() -> None:
    constants = client_constants()
    assert constants["RESEND_WINDOW_SECONDS"] == RESEND_WINDOW_SECONDS
    assert set(typing.cast(dict[str, str], constants["ONCE_PER_ID_TYPES"]).values()) == set(
        ONCE_PER_ID_TYPES
    )
    assert GatewayOptions().recent_replies_seconds >= RESEND_WINDOW_SECONDS
    GatewayOptions(recent_replies_seconds=RESEND_WINDOW_SECONDS)
    with pytest.raises(ValidationError, match="recent_replies_seconds must be at least"):
        GatewayOptions(recent_replies_seconds=RESEND_WINDOW_SECONDS / 2)
