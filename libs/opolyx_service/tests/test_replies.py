"""Responders answer only to `_INBOX.` reply subjects, against the real nats-server with the
roles' authorization: a request whose reply subject is an event subject (`opolyx.game.finished`)
gets nothing published there, neither by a skeleton broker's handler nor by a plain nats-py
responder using `safe_reply_subject`, while a normal request is answered."""

from __future__ import annotations

import asyncio

from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.errors import REPLY_NOT_INBOX
from opolyx_contracts.subjects import GAME_FINISHED, LOBBY_CMD
from opolyx_service import ServiceSettings, flush_in_order
from opolyx_service.broker import create_broker, start_broker
from opolyx_service.replies import safe_reply_subject
from opolyx_testing.http import metric_value
from opolyx_testing.nats_server import NatsServer
from prometheus_client import CollectorRegistry, generate_latest


async def watch(nc: Client, subject: str) -> list[Msg]:
    """Everything published to `subject` from now on (as the admin, who may read it)."""
    seen: list[Msg] = []

    async def collect(msg: Msg) -> None:
        seen.append(msg)

    await nc.subscribe(subject, cb=collect)
    await flush_in_order(nc)
    return seen


async def forged_then_normal(nc: Client) -> bytes:
    """A request replying to GAME_FINISHED, then a normal one (its answer returned). The
    normal answer arriving proves the forged one was handled (or dropped) before it: one
    connection, one subscription, messages in order."""
    await nc.publish(LOBBY_CMD, b'{"n": 1}', reply=GAME_FINISHED)
    answer = await nc.request(LOBBY_CMD, b'{"n": 2}', timeout=5)
    await flush_in_order(nc)
    return answer.data


async def test_a_skeleton_handler_does_not_reply_outside_the_inbox(nats_server: NatsServer) -> None:
    registry = CollectorRegistry()
    settings = ServiceSettings(service_name="lobby", nats=nats_server.settings_for("lobby"))
    broker = create_broker(settings, registry)
    handled: list[int] = []

    @broker.subscriber(LOBBY_CMD, queue="lobby")
    async def on_command(body: dict[str, int]) -> dict[str, int]:
        handled.append(body["n"])
        return {"n": body["n"] + 40}

    admin = await nats_server.connect()
    try:
        published = await watch(admin, GAME_FINISHED)
        await start_broker(broker)
        # The gateway's role sends lobby commands; the admin can too. As the gateway here:
        gateway = await nats_server.connect("gateway")
        try:
            assert await forged_then_normal(gateway) == b'{"n":42}'
        finally:
            await gateway.drain()
        await flush_in_order(admin)
        await asyncio.sleep(0.1)  # a stray reply would have to cross the server once more
        assert published == []
        assert handled == [2]  # the forged request was dropped, not handled
        text = generate_latest(registry).decode()
        assert metric_value(text, "opolyx_handler_errors_total", f'code="{REPLY_NOT_INBOX}"') == 1
    finally:
        await broker.stop()
        await admin.drain()


async def test_a_plain_responder_with_safe_reply_subject_does_not_reply_outside_the_inbox(
    nats_server: NatsServer,
) -> None:
    lobby = await nats_server.connect("lobby")
    admin = await nats_server.connect()
    answered: list[str] = []

    async def on_request(msg: Msg) -> None:
        reply = safe_reply_subject(msg)
        if reply is not None:
            answered.append(reply)
            await lobby.publish(reply, b"answer")

    try:
        published = await watch(admin, GAME_FINISHED)
        await lobby.subscribe(LOBBY_CMD, queue="lobby", cb=on_request)
        await flush_in_order(lobby)
        gateway = await nats_server.connect("gateway")
        try:
            assert await forged_then_normal(gateway) == b"answer"
        finally:
            await gateway.drain()
        await flush_in_order(admin)
        await asyncio.sleep(0.1)
        assert published == []
        assert len(answered) == 1 and answered[0].startswith("_INBOX.gateway.")
    finally:
        await lobby.drain()
        await admin.drain()


class _Reply:
    def __init__(self, reply: str) -> None:
        self.subject = LOBBY_CMD
        self.reply = reply


def test_safe_reply_subject_accepts_inboxes_only() -> None:
    assert safe_reply_subject(_Reply("_INBOX.gateway.abc.1")) == "_INBOX.gateway.abc.1"
    for refused in ("", "_INBOX.", "_INBOX", "_INBOXX.a", GAME_FINISHED, "$JS.API.STREAM.LIST"):
        assert safe_reply_subject(_Reply(refused)) is None
