"""Who may open a socket: a flooder closed with 1008 cannot come straight back (neither
from its address nor as its player), one address holds a bounded number of sockets, and
``X-Forwarded-For`` names the client only when the peer is a trusted proxy."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import websockets
from gateway_builders import RunningGateway, WsClient, gateway_settings, serve_gateway
from opolyx_gateway.admission import _parse_networks, client_address
from opolyx_testing.nats_server import NatsServer


async def connect(gw: RunningGateway, forwarded_for: str | None = None) -> WsClient:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else None
    return WsClient(await websockets.connect(gw.ws_url, additional_headers=headers))


async def close_code(client: WsClient, timeout: float = 5.0) -> int | None:
    with pytest.raises(websockets.ConnectionClosed) as info:
        while True:
            await client.receive(timeout=timeout)
    return info.value.rcvd.code if info.value.rcvd is not None else None


async def flood_until_closed(client: WsClient) -> int | None:
    with pytest.raises(websockets.ConnectionClosed) as info:
        for _ in range(500):
            await client.send("ping")
            await asyncio.sleep(0)
        while True:
            await client.receive(timeout=5)
    return info.value.rcvd.code if info.value.rcvd is not None else None


def flood_settings(nats_url: str, **options: Any) -> Any:
    return gateway_settings(
        nats_url,
        rate_per_second=1.0,
        rate_burst=1,
        rate_violations_before_close=10,
        **options,
    )


async def test_a_flooder_is_refused_new_sockets_for_the_cool_down(
    nats_server: NatsServer,
) -> None:
    settings = flood_settings(
        nats_server.url_for("gateway"), flood_cooldown_seconds=600, trusted_proxies=["127.0.0.1"]
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in("Flood")
        other_token, _ = await gw.sign_in("Calm")
        flooder = await connect(gw, "203.0.113.7")
        assert (await flooder.request("hello", token=token))["ok"]
        assert await flood_until_closed(flooder) == 1008
        # the same address, at once: closed before a hello
        again = await connect(gw, "203.0.113.7")
        assert await close_code(again) == 1008
        # the same player from another address: its hello is refused and the socket closed
        moved = await connect(gw, "198.51.100.9")
        refused = await moved.request("hello", token=token)
        assert refused["ok"] is False and refused["error"]["code"] == "request/rate_limited"
        assert await close_code(moved) == 1008
        # someone else from another address is not concerned
        calm = await connect(gw, "198.51.100.9")
        assert (await calm.request("hello", token=other_token))["ok"]


async def test_after_the_cool_down_the_address_is_let_in_again(nats_server: NatsServer) -> None:
    settings = flood_settings(nats_server.url_for("gateway"), flood_cooldown_seconds=0.5)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in("Flood")
        flooder = await gw.client(token)
        assert await flood_until_closed(flooder) == 1008
        await asyncio.sleep(0.6)
        back = await gw.client(token)  # its hello answered ok
        assert not back.socket.close_code


async def test_one_address_holds_a_bounded_number_of_sockets(nats_server: NatsServer) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), max_sockets_per_address=2)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        first, second = await gw.client(token), await gw.client(token)
        # untrusted peer: a forged header does not make it another client
        third = await connect(gw, "192.0.2.1")
        assert await close_code(third) == 1008
        await first.socket.close()
        await asyncio.sleep(0.2)  # the gateway has seen the close
        fourth = await gw.client(token)
        assert (await fourth.request("ping"))["ok"] and (await second.request("ping"))["ok"]


def test_forwarded_for_is_read_only_behind_trusted_proxies() -> None:
    trusted = _parse_networks(["10.0.0.0/8", "127.0.0.1"])
    assert client_address("127.0.0.1", "203.0.113.7", trusted) == "203.0.113.7"
    # a client-written hop left of the real one is ignored; the proxies' own are skipped
    assert client_address("10.1.1.1", "1.2.3.4, 203.0.113.7, 10.2.2.2", trusted) == "203.0.113.7"
    assert client_address("192.0.2.5", "203.0.113.7", trusted) == "192.0.2.5"
    assert client_address("127.0.0.1", None, trusted) == "127.0.0.1"
    assert client_address("127.0.0.1", "203.0.113.7", ()) == "127.0.0.1"
    assert client_address(None, "203.0.113.7", trusted) == "unknown"
