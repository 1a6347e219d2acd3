"""A chat post whose request timed out at the gateway is one message however it is resent,
through the real chat service on a real nats-server (every party as its NATS role).

The gateway forgets a ``service/unavailable`` outcome (the request may not have reached
chat, and then the resend must run), so the resend reaches chat again: chat itself knows
the request (`ChatPost.request_id`, which the gateway derives from the player and the
client's message) and answers the first post, stored once. Chat is made slower than the
gateway's request timeout by holding its first JetStream publish until the test lets it
go; the test reads the gateway's ``unavailable`` to know the gateway gave up (a page whose
socket dropped meanwhile never sees it, and resends the post under its first id after its
reconnect, as here)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from gateway_builders import KEYS, RunningGateway, WsClient, serve_gateway
from nats.aio.client import Client
from opolyx_chat.app import ChatApp
from opolyx_contracts.chat import ChatMessage
from opolyx_contracts.envelope import encode, error_reply
from opolyx_contracts.errors import INTERNAL, UNAVAILABLE
from opolyx_contracts.subjects import CHAT_STREAM, ROOMS_BUCKET, chat_messages
from opolyx_gateway.settings import GatewayOptions, GatewaySettings
from opolyx_service.connection import ensure_kv
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.streams import read_stored
from test_social_chat import start_chat

REQUEST_TIMEOUT = 1.0
"""The gateway's request timeout here: chat is held longer than this when a test says so."""

Publish = Callable[[ChatMessage], Awaitable[None]]


class Chats:
    """Chat instances next to a gateway with a short request timeout, and what is stored."""

    def __init__(self, nats_server: NatsServer, gateway: RunningGateway, admin: Client) -> None:
        self.nats_server = nats_server
        self.gateway = gateway
        self.admin = admin
        self.running: list[tuple[ChatApp, Client]] = []

    async def start(self) -> ChatApp:
        app, nc = await start_chat(self.nats_server)
        self.running.append((app, nc))
        return app

    async def stop(self, app: ChatApp) -> None:
        """Stop taking requests; the ones taken finish first (a rolling restart)."""
        for entry in [e for e in self.running if e[0] is app]:
            self.running.remove(entry)
            await app.stop()
            await entry[1].drain()

    async def stored(self, text: str) -> list[ChatMessage]:
        """The lobby channel's stored messages with this text (stream `CHAT` itself)."""
        found = await read_stored(self.admin, CHAT_STREAM, chat_messages("lobby"), ChatMessage)
        return [m for m in found if m.text == text]


@pytest.fixture
async def chats(nats_server: NatsServer) -> AsyncIterator[Chats]:
    admin = await nats_server.connect()
    await ensure_kv(admin.jetstream(), ROOMS_BUCKET)  # the lobby's bucket, made as it does
    nats = nats_server.settings_for("gateway").model_copy(
        update={"request_timeout": REQUEST_TIMEOUT}
    )
    settings = GatewaySettings(nats=nats, gateway=GatewayOptions(signing_keys=KEYS))
    try:
        async with serve_gateway(settings, nats_server.url) as gateway:
            running = Chats(nats_server, gateway, admin)
            try:
                yield running
            finally:
                for app, _ in list(running.running):
                    await running.stop(app)
    finally:
        await admin.drain()
    assert nats_server.permission_violations() == []


def hold_first_publish(app: ChatApp) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold `app`'s first JetStream publish until the first event is set; the second is set
    once that publish is stored. Later publishes go through at once."""
    assert app.chat is not None
    store = app.chat.store
    publish: Publish = store.publish
    release, stored = asyncio.Event(), asyncio.Event()
    held: list[ChatMessage] = []

    async def held_publish(message: ChatMessage) -> None:
        if held:
            await publish(message)
            return
        held.append(message)
        await release.wait()
        await publish(message)
        stored.set()

    store.publish = held_publish  # type: ignore[method-assign]
    return release, stored


async def post_timing_out(chats: Chats, message: dict[str, Any]) -> str:
    """Sign in and post; the gateway gives up on chat (``unavailable``). The player's token."""
    token, _ = await chats.gateway.sign_in("Alice")
    first = await chats.gateway.client(token)
    await first.send_raw(json.dumps(message))
    started = time.monotonic()
    timed_out = await first.reply(message["id"], timeout=REQUEST_TIMEOUT + 5)
    assert timed_out["ok"] is False and timed_out["error"]["code"] == UNAVAILABLE, timed_out
    assert time.monotonic() - started >= REQUEST_TIMEOUT * 0.9, "a timeout, not 'not running'"
    await first.close()  # the page's socket drops; it reconnects and resends
    return token


async def resend(chats: Chats, token: str, message: dict[str, Any]) -> dict[str, Any]:
    again: WsClient = await chats.gateway.client(token)
    await again.send_raw(json.dumps(message))
    answer = await again.reply(message["id"], timeout=REQUEST_TIMEOUT + 5)
    await again.close()
    return answer


@pytest.mark.parametrize(
    "case",
    ["the same instance", "another instance", "the same instance, first still publishing"],
)
async def test_a_post_whose_request_timed_out_is_stored_once_when_resent(
    chats: Chats, case: str
) -> None:
    text = f"said once ({uuid.uuid4().hex[:8]})"
    post = {"id": "post-1", "type": "chat.post", "channel": "lobby", "text": text}
    first = await chats.start()
    release, stored = hold_first_publish(first)
    token = await post_timing_out(chats, post)

    if case != "the same instance, first still publishing":
        release.set()  # chat stores the first post, later than the gateway waited
        await asyncio.wait_for(stored.wait(), 10)
        [kept] = await chats.stored(text)
    if case == "another instance":
        await chats.start()
        await chats.stop(first)  # the resend reaches the other instance

    answer = await resend(chats, token, post)
    assert answer["ok"], answer
    if case == "the same instance, first still publishing":
        release.set()  # the first publish goes out after the resend was answered
        await asyncio.wait_for(stored.wait(), 10)
        [kept] = await chats.stored(text)
    # still one post whichever instance answered the resend, and the first post's reply
    assert await chats.stored(text) == [kept]
    assert ChatMessage.model_validate(answer["data"]["message"]) == kept
    # and once more: the same post again, still one
    assert await resend(chats, token, post) == answer
    assert await chats.stored(text) == [kept]


async def test_a_post_chat_lost_before_running_it_is_stored_by_the_resend(chats: Chats) -> None:
    """The request reached chat but never ran (the instance lost it, then answered too late
    with an error): nothing was stored, so the resend posts it, once."""
    text = f"not lost ({uuid.uuid4().hex[:8]})"
    post = {"id": "post-2", "type": "chat.post", "channel": "lobby", "text": text}
    app = await chats.start()
    assert app.chat is not None
    answer_normally = app.chat.answer
    lost: list[str] = []

    async def lose_the_first_post(subject: str, body: bytes) -> bytes:
        if not lost and subject.endswith(".post"):
            lost.append(subject)
            await asyncio.sleep(REQUEST_TIMEOUT + 0.2)
            return encode(error_reply(INTERNAL, "lost"))
        return await answer_normally(subject, body)

    app.chat.answer = lose_the_first_post  # type: ignore[method-assign]
    token = await post_timing_out(chats, post)
    assert await chats.stored(text) == []

    answer = await resend(chats, token, post)
    assert answer["ok"], answer
    [kept] = await chats.stored(text)
    assert ChatMessage.model_validate(answer["data"]["message"]) == kept
    assert await resend(chats, token, post) == answer
    assert await chats.stored(text) == [kept]
