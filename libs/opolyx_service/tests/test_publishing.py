"""`publishing.publish` against a real nats-server with the roles' authorization: what a
subscriber gets is what `Client.publish` would have sent (subject, reply, headers, data, in
order with messages `Client.publish` sent), and every case it does not queue itself goes to
`Client.publish` with its errors (a value with a line break, a bad key, too large, closed)."""

from __future__ import annotations

import asyncio

import nats.errors
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import LOBBY_CMD
from opolyx_service import flush_in_order
from opolyx_service.publishing import publish, queue_publish
from opolyx_testing.nats_server import NatsServer


async def _listening(
    nats_server: NatsServer, expected: int
) -> tuple[Client, Client, list[Msg], asyncio.Event]:
    """The lobby role subscribed to `LOBBY_CMD` (what it got, and an event set once it got
    `expected` messages) and the gateway role to publish there."""
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    got: list[Msg] = []
    done = asyncio.Event()

    async def keep(msg: Msg) -> None:
        got.append(msg)
        if len(got) == expected:
            done.set()

    await lobby.subscribe(LOBBY_CMD, cb=keep)
    await flush_in_order(lobby)
    return lobby, gateway, got, done


async def test_subscribers_get_what_client_publish_would_send(nats_server: NatsServer) -> None:
    lobby, gateway, got, done = await _listening(nats_server, 6)
    inbox = "_INBOX.gateway.test.1"
    headers = {"Nats-Msg-Id": "t-1:17", "Nats-Expected-Last-Subject-Sequence": "42"}
    sent_before = gateway.stats["out_msgs"]
    try:
        await publish(gateway, LOBBY_CMD, b"plain")
        await gateway.publish(LOBBY_CMD, b"by nats-py")  # order kept with the slow path
        await publish(gateway, LOBBY_CMD, b"with reply", reply=inbox)
        await publish(gateway, LOBBY_CMD, b"with headers", reply=inbox, headers=headers)
        await publish(gateway, LOBBY_CMD, b"", headers={"Traceparent": "00-ab-cd-01"})
        assert queue_publish(gateway, LOBBY_CMD, b"x" * 100_000)  # queued, no waiting
        await asyncio.wait_for(done.wait(), 10)
        assert [m.data for m in got] == [
            b"plain",
            b"by nats-py",
            b"with reply",
            b"with headers",
            b"",
            b"x" * 100_000,
        ]
        assert [m.reply for m in got] == ["", "", inbox, inbox, "", ""]
        assert got[0].headers is None
        assert got[3].headers == headers
        assert got[4].headers == {"Traceparent": "00-ab-cd-01"}
        assert gateway.stats["out_msgs"] - sent_before == 6
        assert nats_server.permission_violations() == []
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_what_nats_py_must_clean_or_refuse_goes_to_it(nats_server: NatsServer) -> None:
    lobby, gateway, got, done = await _listening(nats_server, 1)
    try:
        # nats-py turns line breaks in a value into spaces (no header injection).
        await publish(gateway, LOBBY_CMD, b"a", headers={"X-Note": "one\r\nX-Forged: yes"})
        await asyncio.wait_for(done.wait(), 10)
        assert got[0].headers == {"X-Note": "one  X-Forged: yes"}
        with pytest.raises(nats.errors.BadHeaderError):
            await publish(gateway, LOBBY_CMD, b"a", headers={"bad key": "v"})
        with pytest.raises(nats.errors.MaxPayloadError):
            await publish(gateway, LOBBY_CMD, b"x" * (gateway.max_payload + 1))
    finally:
        await gateway.drain()
        await lobby.drain()
    assert not queue_publish(gateway, LOBBY_CMD, b"after the close")  # nothing queued
    with pytest.raises(nats.errors.ConnectionClosedError):
        await publish(gateway, LOBBY_CMD, b"after the close")
