"""Chat through the gateway against the real chat service on a real nats-server (every party
as its NATS role): history on join then live with no gap and no duplicate, spectators, the
chat service's coded refusals passed through unchanged, mutes per recipient, stickers,
markup kept as text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from gateway_builders import RunningGateway, WsClient
from nats.aio.client import Client
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_contracts.chat import (
    CHAT_BAD_REQUEST,
    CHAT_BLOCKED_WORD,
    CHAT_NOT_CREATOR,
    CHAT_NOT_MEMBER,
    CHAT_RATE_LIMITED,
)
from opolyx_contracts.errors import BAD_REQUEST, UNAVAILABLE
from opolyx_contracts.subjects import ROOMS_BUCKET
from opolyx_lobby.rooms import Member, Room
from opolyx_service.connection import ensure_kv
from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer

TABLE_ID = "t-chat-1"
TABLE = f"t_{TABLE_ID}"
ROOM_ID = "r-chat-1"
ROOM = f"r_{ROOM_ID}"


async def start_chat(nats_server: NatsServer, **section: Any) -> tuple[ChatApp, Client]:
    settings = ChatSettings(
        nats=nats_server.settings_for("chat"),
        http=HttpSettings(port=-1),
        chat=ChatSection(operator=OperatorSettings(port=-1), **section),
    )
    app = ChatApp(settings)
    nc = await nats_server.connect("chat")
    await app.start(nc)
    return app, nc


@pytest.fixture
async def chat(nats_server: NatsServer) -> AsyncIterator[ChatApp]:
    admin = await nats_server.connect()
    await ensure_kv(admin.jetstream(), ROOMS_BUCKET)  # the lobby's bucket, made as it does
    await admin.drain()
    app, nc = await start_chat(nats_server, blocked_words=["badword"], rate_count=40)
    yield app
    await app.stop()
    await nc.drain()
    assert nats_server.permission_violations() == []


class Player:
    def __init__(self, player_id: str, token: str, client: WsClient) -> None:
        self.id = player_id
        self.token = token
        self.ws = client

    async def watch(self, channel: str) -> dict[str, Any]:
        return await self.ws.request("chat.watch", channel=channel)

    async def say(self, channel: str, text: str) -> dict[str, Any]:
        return await self.ws.request("chat.post", channel=channel, text=text)

    def texts_pushed(self, channel: str) -> list[str]:
        return [
            p["message"]["text"]
            for p in self.ws.pushes
            if p["type"] == "chat.message" and p["channel"] == channel
        ]


async def seat_players(
    gateway: RunningGateway, chat: ChatApp, *names: str, spectators: tuple[str, ...] = ()
) -> list[Player]:
    """Sign players in; the first `names` sit at the room's table, `spectators` do not."""
    players = []
    for name in (*names, *spectators):
        token, player_id = await gateway.sign_in(name)
        players.append(Player(player_id, token, await gateway.client(token)))
    room = Room(
        room_id=ROOM_ID,
        mode="classic",
        seat_count=4,
        public=True,
        invite_code=None,
        creator=players[0].id,
        members=tuple(
            Member(player_id=p.id, name=n)
            for p, n in zip(players[: len(names)], names, strict=True)
        ),
        status="started",
        created_at=1.0,
        waiting_since=1.0,
        table_id=TABLE_ID,
    )
    kv = await gateway.nc.jetstream().key_value(ROOMS_BUCKET)
    revision = await kv.put(ROOM_ID, room.model_dump_json().encode())
    assert chat.directory is not None
    for _ in range(500):  # wait until chat follows the lobby's record
        if chat.directory.revision_of(ROOM_ID) >= revision:
            break
        await asyncio.sleep(0.01)
    return players


def error_code(reply: dict[str, Any]) -> str:
    assert reply["ok"] is False, reply
    code: str = reply["error"]["code"]
    return code


async def test_joining_gives_the_history_then_every_live_message_once(
    gateway: RunningGateway, chat: ChatApp
) -> None:
    alice, bob = await seat_players(gateway, chat, "Alice", "Bob")
    assert (await alice.watch(TABLE))["ok"]
    for n in range(3):
        assert (await alice.say(TABLE, f"before {n}"))["ok"]

    # Alice keeps talking while Bob joins: whatever lands during his join must reach him
    # exactly once, either in the history or as a push after it, in order.
    async def talk() -> None:
        for n in range(20):
            assert (await alice.say(TABLE, f"during {n}"))["ok"]

    talking = asyncio.create_task(talk())
    await asyncio.sleep(0)
    joined = await bob.watch(TABLE)
    await talking
    assert (await alice.say(TABLE, "after"))["ok"]
    while "after" not in bob.texts_pushed(TABLE):
        await bob.ws.receive()

    assert joined["ok"] and joined["data"]["may_post"] is True
    seen = [m["text"] for m in joined["data"]["messages"]] + bob.texts_pushed(TABLE)
    expected = [f"before {n}" for n in range(3)] + [f"during {n}" for n in range(20)] + ["after"]
    assert seen == expected  # none missed, none twice, in the order they were posted


async def test_a_live_message_reaches_the_other_player_and_the_spectator_not_elsewhere(
    gateway: RunningGateway, chat: ChatApp
) -> None:
    alice, bob, sam = await seat_players(gateway, chat, "Alice", "Bob", spectators=("Sam",))
    assert (await bob.watch(TABLE))["ok"]
    watched = await sam.watch(TABLE)
    assert watched["ok"] and watched["data"]["may_post"] is False  # spectators read only
    assert (await alice.watch(ROOM))["ok"]

    posted = await alice.say(TABLE, "<b>hello</b> & bye")
    assert posted["ok"]
    for reader in (bob, sam):
        push = await reader.ws.push("chat.message", channel=TABLE)
        assert push["message"]["text"] == "<b>hello</b> & bye"  # verbatim, never markup
        assert push["message"]["sender_id"] == alice.id
        assert push["message"]["message_id"] == posted["data"]["message"]["message_id"]
    assert alice.texts_pushed(ROOM) == []  # the room channel is another channel


async def test_the_chat_services_refusals_come_back_with_their_codes(
    gateway: RunningGateway, chat: ChatApp
) -> None:
    alice, sam = await seat_players(gateway, chat, "Alice", spectators=("Sam",))
    assert error_code(await alice.say(TABLE, "what a badword move")) == CHAT_BLOCKED_WORD
    assert error_code(await sam.say(TABLE, "advice from the gallery")) == CHAT_NOT_MEMBER
    # a channel one is not in: no history, and nothing live afterwards
    assert error_code(await sam.watch(ROOM)) == CHAT_NOT_MEMBER
    assert (await alice.say(ROOM, "members only"))["ok"]
    assert (await alice.watch(ROOM))["ok"]
    assert (await alice.say(ROOM, "still members only"))["ok"]
    await alice.ws.push("chat.message", channel=ROOM)
    assert sam.texts_pushed(ROOM) == []
    # an unknown sticker is the chat service's refusal; text and sticker together the gateway's
    unknown = await alice.ws.request("chat.post", channel=TABLE, sticker="unicorn")
    assert error_code(unknown) == CHAT_BAD_REQUEST
    both = await alice.ws.request("chat.post", channel=TABLE, text="hi", sticker="gg")
    assert error_code(both) == BAD_REQUEST
    assert error_code(await alice.watch("x_not_a_channel")) == BAD_REQUEST


async def test_a_rate_limited_post_gets_the_chat_services_code(
    gateway: RunningGateway, nats_server: NatsServer
) -> None:
    admin = await nats_server.connect()
    await ensure_kv(admin.jetstream(), ROOMS_BUCKET)
    await admin.drain()
    app, nc = await start_chat(nats_server, rate_count=2, rate_window_seconds=60)
    try:
        (alice,) = await seat_players(gateway, app, "Alice")
        assert (await alice.say(TABLE, "one"))["ok"]
        assert (await alice.say(TABLE, "two"))["ok"]
        refused = await alice.say(TABLE, "three")
        assert error_code(refused) == CHAT_RATE_LIMITED
        assert "again" in refused["error"]["message"]
    finally:
        await app.stop()
        await nc.drain()


async def test_a_muted_sender_is_not_delivered_to_who_muted_them(
    gateway: RunningGateway, chat: ChatApp
) -> None:
    alice, bob, cid = await seat_players(gateway, chat, "Alice", "Bob", "Cid")
    for player in (bob, cid):
        assert (await player.watch(TABLE))["ok"]
    muted = await bob.ws.request("chat.mute", target=alice.id)
    assert muted["ok"] and muted["data"]["muted"] == [alice.id]

    assert (await alice.say(TABLE, "you will not hear this, Bob"))["ok"]
    assert (await bob.say(TABLE, "anyone?"))["ok"]
    # Bob sees his own message, which was posted after Alice's, and not hers
    await bob.ws.push("chat.message", channel=TABLE)
    assert bob.texts_pushed(TABLE) == []
    first = await cid.ws.push("chat.message", channel=TABLE)
    assert first["message"]["text"] == "you will not hear this, Bob"

    # remembered: a fresh join's history leaves her out too
    rejoined = await bob.watch(TABLE)
    assert [m["text"] for m in rejoined["data"]["messages"]] == ["anyone?"]
    # remembered for Bob's next session too (the client offers "unmute" from this list)
    later = await gateway.client(bob.token)
    listed = await later.request("chat.mutes")
    assert listed["ok"] and listed["data"]["muted"] == [alice.id]
    await later.close()
    unmuted = await bob.ws.request("chat.mute", target=alice.id, muted=False)
    assert unmuted["data"]["muted"] == []
    assert (await alice.say(TABLE, "now you do"))["ok"]
    assert (await bob.ws.push("chat.message", channel=TABLE))["message"]["text"] == "now you do"


async def test_stickers_and_reports_pass_through(gateway: RunningGateway, chat: ChatApp) -> None:
    alice, bob = await seat_players(gateway, chat, "Alice", "Bob")
    assert (await bob.watch(TABLE))["ok"]
    sent = await alice.ws.request("chat.post", channel=TABLE, sticker="gg")
    assert sent["ok"] and sent["data"]["message"]["sticker"] == "gg"
    push = await bob.ws.push("chat.message", channel=TABLE)
    assert push["message"]["sticker"] == "gg" and push["message"]["text"] is None
    report = await bob.ws.request(
        "chat.report", channel=TABLE, message_id=push["message"]["message_id"], reason="spam"
    )
    assert report["ok"] and report["data"]["report_id"]
    assert error_code(
        await bob.ws.request("chat.report", channel=TABLE, message_id="nope", reason="")
    ).startswith("chat/")


async def test_the_rooms_creator_sets_spectator_chat_and_bot_stickers_members_read_them(
    gateway: RunningGateway, chat: ChatApp
) -> None:
    alice, bob = await seat_players(gateway, chat, "Alice", "Bob")  # Alice made the room
    changed = await alice.ws.request(
        "chat.settings", room=ROOM_ID, spectator_chat=True, bot_stickers=False
    )
    assert changed["ok"], changed
    assert changed["data"] == {"room": ROOM_ID, "spectator_chat": True, "bot_stickers": False}
    read = await bob.ws.request("chat.settings", room=ROOM_ID)
    assert read["data"] == changed["data"]
    refused = await bob.ws.request("chat.settings", room=ROOM_ID, bot_stickers=True)
    assert error_code(refused) == CHAT_NOT_CREATOR
    assert (await alice.ws.request("chat.settings", room=ROOM_ID))["data"] == changed["data"]


async def test_unwatching_stops_the_pushes(gateway: RunningGateway, chat: ChatApp) -> None:
    alice, bob = await seat_players(gateway, chat, "Alice", "Bob")
    assert (await bob.watch(TABLE))["ok"]
    assert (await bob.ws.request("chat.unwatch", channel=TABLE))["ok"]
    assert (await alice.say(TABLE, "gone already"))["ok"]
    assert (await bob.watch(ROOM))["ok"]
    assert (await alice.say(ROOM, "in the room"))["ok"]
    push = await bob.ws.push("chat.message", channel=ROOM)
    assert push["message"]["text"] == "in the room"
    assert bob.texts_pushed(TABLE) == []


async def test_without_a_chat_service_joining_is_a_clear_error(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in("Alice")
    client = await gateway.client(token)
    reply = await client.request("chat.watch", channel=TABLE)
    assert error_code(reply) == UNAVAILABLE
    reply = await client.request("chat.post", channel=TABLE, text="hi")
    assert error_code(reply) == UNAVAILABLE
    assert "chat service" in reply["error"]["message"]
