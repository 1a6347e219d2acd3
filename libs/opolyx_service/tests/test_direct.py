"""`subscribe_direct` against a real nats-server with the roles' authorization: every message
reaches the handler in the order sent, as it is read (nothing waits in the subscription's
queue, none of it counts as pending), a handler that raises loses only its own message, a
queue group shares the messages out, and unsubscribing stops delivery."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nats.aio.msg import Msg
from opolyx_contracts.subjects import LOBBY_CMD
from opolyx_service import flush_in_order, subscribe_direct
from opolyx_testing.nats_server import NatsServer


async def _until(check: Callable[[], bool], seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not reached in time")


async def test_messages_reach_the_handler_in_order_without_waiting(
    nats_server: NatsServer,
) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    seen: list[bytes] = []
    pending_at_delivery: list[int] = []

    def handler(msg: Msg) -> None:
        # Called from the read loop: the subscription holds nothing, counts nothing.
        pending_at_delivery.append(sub.pending_msgs + sub.pending_bytes)
        seen.append(msg.data)

    sub = await subscribe_direct(lobby, LOBBY_CMD, handler)
    await flush_in_order(lobby)
    try:
        for n in range(500):
            await gateway.publish(LOBBY_CMD, str(n).encode())
        await flush_in_order(gateway)
        await _until(lambda: len(seen) == 500)
        assert seen == [str(n).encode() for n in range(500)]
        assert set(pending_at_delivery) == {0}
        assert sub.delivered == 500
        assert nats_server.permission_violations() == []
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_a_failing_handler_loses_only_its_own_message(nats_server: NatsServer) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    seen: list[bytes] = []

    def handler(msg: Msg) -> None:
        if msg.data == b"bad":
            raise ValueError("cannot use it")
        seen.append(msg.data)

    await subscribe_direct(lobby, LOBBY_CMD, handler)
    await flush_in_order(lobby)
    try:
        for body in (b"1", b"bad", b"2"):
            await gateway.publish(LOBBY_CMD, body)
        await flush_in_order(gateway)
        await _until(lambda: len(seen) == 2)
        assert seen == [b"1", b"2"]
        assert lobby.is_connected
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_a_queue_group_shares_the_messages(nats_server: NatsServer) -> None:
    first = await nats_server.connect("lobby")
    second = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    got: dict[str, list[bytes]] = {"first": [], "second": []}
    await subscribe_direct(first, LOBBY_CMD, lambda m: got["first"].append(m.data), queue="q")
    await subscribe_direct(second, LOBBY_CMD, lambda m: got["second"].append(m.data), queue="q")
    await flush_in_order(first)
    await flush_in_order(second)
    try:
        for n in range(200):
            await gateway.publish(LOBBY_CMD, str(n).encode())
        await flush_in_order(gateway)
        await _until(lambda: len(got["first"]) + len(got["second"]) == 200)
        # Each message once, in one member or the other.
        assert sorted(got["first"] + got["second"]) == sorted(str(n).encode() for n in range(200))
    finally:
        await gateway.drain()
        await first.drain()
        await second.drain()


async def test_unsubscribing_stops_delivery(nats_server: NatsServer) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    seen: list[bytes] = []
    sub = await subscribe_direct(lobby, LOBBY_CMD, lambda m: seen.append(m.data))
    await flush_in_order(lobby)
    try:
        await gateway.publish(LOBBY_CMD, b"before")
        await flush_in_order(gateway)
        await _until(lambda: seen == [b"before"])
        await sub.unsubscribe()
        await flush_in_order(lobby)
        await gateway.publish(LOBBY_CMD, b"after")
        await flush_in_order(gateway)
        # A round trip through the server after the publish: anything sent would be here.
        await flush_in_order(lobby)
        await asyncio.sleep(0.1)
        assert seen == [b"before"]
    finally:
        await gateway.drain()
        await lobby.drain()
