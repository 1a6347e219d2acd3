"""The websocket against a hostile client, on a real nats-server with authorization: a flood
that lets a trickle through, oversized and too deeply nested messages, ids no reply can
carry, tokens that expire on an open socket (and renewed ones that keep it), retries of a
command, and more spectators than a table takes."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
import websockets
from gateway_builders import (
    FakeTable,
    RunningGateway,
    gateway_settings,
    serve_gateway,
)
from opolyx_testing.nats_server import NatsServer


async def closed_code(client: Any, timeout: float = 5.0) -> int | None:
    """Read until the socket closes; the close code the gateway sent."""
    with pytest.raises(websockets.ConnectionClosed) as info:
        while True:
            await client.receive(timeout=timeout)
    return info.value.rcvd.code if info.value.rcvd is not None else None


# ------------------------------------------------------------------ flooding
async def test_a_flood_that_lets_a_trickle_through_is_still_disconnected(
    nats_server: NatsServer,
) -> None:
    # one message in 200 ms is accepted; ten are sent in that time: about nine refused
    # between two accepted ones, never 40 in a row, yet hundreds within the window
    settings = gateway_settings(
        nats_server.url_for("gateway"),
        rate_per_second=5.0,
        rate_burst=1,
        rate_violations_before_close=40,
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        accepted = refused = 0
        with pytest.raises(websockets.ConnectionClosed) as info:
            for _ in range(400):
                await client.send("ping")
                await asyncio.sleep(0.02)
                while True:  # take what has arrived so far
                    try:
                        reply = await client.receive(timeout=0.001)
                    except TimeoutError:
                        break
                    if reply["type"] == "reply":
                        accepted += reply["ok"]
                        refused += not reply["ok"]
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        assert accepted >= 1 and refused >= 39


async def test_an_occasional_burst_is_refused_but_never_disconnected(
    nats_server: NatsServer,
) -> None:
    settings = gateway_settings(
        nats_server.url_for("gateway"),
        rate_per_second=50.0,
        rate_burst=5,
        rate_violations_before_close=40,
        rate_violation_window_seconds=1.0,
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        for _ in range(3):  # bursts of 30: 25 refused each, 40 per second drain between
            ids = [await client.send("ping") for _ in range(30)]
            replies = [await client.reply(i) for i in ids]
            assert any(not r["ok"] for r in replies)
            await asyncio.sleep(1.2)
        assert (await client.request("ping"))["ok"] is True


# ------------------------------------------------------------------ sizes and shapes
async def test_oversized_messages_get_a_coded_reply_up_to_the_frame_limit(
    nats_server: NatsServer,
) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"))  # the defaults
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        for size in (20_000, 100_000, 900_000):
            await client.send_raw(json.dumps({"id": size, "type": "ping", "pad": "x" * size}))
            reply = await client.reply(size)
            assert reply["error"]["code"] == "request/invalid"
            assert "larger than 16384 bytes" in reply["error"]["message"]
        assert (await client.request("ping"))["ok"] is True
        # past the frame limit the server closes, with the standard code, before reading it
        await client.send_raw("x" * 2_000_000)
        assert await closed_code(client) == 1009


@pytest.mark.parametrize("depth", [150, 300, 990, 5000])
async def test_deeply_nested_json_gets_a_coded_reply(gateway: RunningGateway, depth: int) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await client.send_raw('{"id": 5, "type": "ping", "x": ' + "[" * depth + "]" * depth + "}")
    reply = await client.receive()
    assert reply["type"] == "reply" and reply["ok"] is False
    assert reply["error"]["code"] in ("request/invalid", "request/malformed_json")
    assert (await client.request("ping"))["ok"] is True


@pytest.mark.parametrize(
    "raw",
    [
        '{"id": true, "type": "ping"}',
        '{"id": "' + "x" * 200 + '", "type": "ping"}',
        '{"id": 1.5, "type": "ping"}',
        '{"id": {"a": 1}, "type": "lobby", "action": "list"}',
        '{"id": "' + "y" * 200 + '", "type": "fly"}',
    ],
)
async def test_ids_a_reply_cannot_carry_get_an_error_without_one(
    gateway: RunningGateway, raw: str
) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await client.send_raw(raw)
    reply = await client.receive()
    assert reply["type"] == "reply" and reply["ok"] is False and reply["id"] is None
    assert reply["error"]["code"] == "request/invalid"
    assert (await client.request("ping"))["ok"] is True


async def test_a_flood_of_deep_or_large_messages_gets_refusals_not_a_crash(
    nats_server: NatsServer,
) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), rate_per_second=0.1, rate_burst=2)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)  # the hello takes one of the two
        await client.send_raw('{"id": 1, "type": "ping"}')
        assert (await client.reply(1))["ok"]
        await client.send_raw('{"id": 2, "x": ' + "[" * 3000 + "]" * 3000 + "}")
        await client.send_raw('{"id": 3, "x": "' + "z" * 200_000 + '"}')
        assert (await client.reply(2))["error"]["code"] == "request/rate_limited"
        assert (await client.reply(3))["error"]["code"] == "request/rate_limited"


# ------------------------------------------------------------------ token expiry
async def test_an_open_socket_is_cut_off_when_its_token_expires(nats_server: NatsServer) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), token_ttl_seconds=2)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        assert (await client.request("ping"))["ok"]
        notice = await client.receive(timeout=5)  # nothing was asked: the expiry's own
        assert notice["type"] == "reply" and notice["id"] is None
        assert notice["error"]["code"] == "auth/expired_token"
        assert await closed_code(client) == 4401


async def test_a_client_that_renews_its_token_stays_connected(nats_server: NatsServer) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), token_ttl_seconds=4)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, player = await gw.sign_in("Renata")
        first = time.time()  # the token expires by first + 4
        client = await gw.client(token)

        async def renew(current: str) -> dict[str, Any]:
            response = await gw.http.post(
                "/api/session/renew", headers={"Authorization": f"Bearer {current}"}
            )
            assert response.status_code == 200, response.text
            session: dict[str, Any] = response.json()
            hello = await client.request("hello", token=session["token"])
            assert hello["ok"] and hello["data"]["expires_at"] == session["expires_at"]
            return session

        await asyncio.sleep(max(0.0, first + 1.1 - time.time()))
        session = await renew(token)  # expires by first + 5.1 at the earliest
        assert session["player_id"] == player and session["name"] == "Renata"
        assert session["token"] != token
        await asyncio.sleep(max(0.0, first + 3.0 - time.time()))
        session = await renew(session["token"])
        await asyncio.sleep(max(0.0, first + 4.5 - time.time()))  # the first one is dead
        assert (await client.request("ping"))["ok"] is True
        assert not [p for p in client.pushes if p.get("error")]
        # an expired or forged token buys nothing
        refused = await gw.http.post(
            "/api/session/renew", headers={"Authorization": f"Bearer {token}"}
        )
        assert refused.status_code == 401 and refused.json()["code"] == "auth/expired_token"
        forged = await gw.http.post(
            "/api/session/renew", headers={"Authorization": f"Bearer {session['token']}x"}
        )
        assert forged.status_code == 401


# ------------------------------------------------------------------ retries
async def test_a_retried_command_id_runs_once_and_gets_the_same_reply(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t-retry", [me, "bot-1"]).start()
    first = await gateway.client(token)
    command = {"id": "m-41", "type": "table.cmd", "table": "t-retry", "command": {"type": "roll"}}
    await first.send_raw(json.dumps(command))
    answer = await first.reply("m-41")
    assert answer["ok"], answer
    await first.close()
    # the client reconnects and resends what it had not seen answered
    second = await gateway.client(token)
    await second.send_raw(json.dumps(command))
    assert await second.reply("m-41") == answer
    assert len(table.received) == 1 and table.seq == answer["data"]["seq"]
    # two sends of one id at once: still once
    twice = {**command, "id": "m-42"}
    await second.send_raw(json.dumps(twice))
    await second.send_raw(json.dumps(twice))
    replies: list[dict[str, Any]] = []
    while len(replies) < 2:
        message = await second.receive()
        if message["type"] == "reply" and message["id"] == "m-42":
            replies.append(message)
    assert replies[0] == replies[1] and replies[0]["ok"]
    assert len(table.received) == 2


async def test_the_same_id_for_another_command_or_player_is_another_command(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in("Ann")
    other_token, other = await gateway.sign_in("Ben")
    table = await FakeTable(gateway.nc, "t-ids", [me, other]).start()
    mine, theirs = await gateway.client(token), await gateway.client(other_token)
    roll = {"type": "table.cmd", "table": "t-ids", "command": {"type": "roll"}}
    await mine.send_raw(json.dumps({"id": 1, **roll}))
    await theirs.send_raw(json.dumps({"id": 1, **roll}))
    assert (await mine.reply(1))["ok"] and (await theirs.reply(1))["ok"]
    await mine.send_raw(json.dumps({"id": 1, **roll, "expected_version": 3}))
    await mine.reply(1)
    assert len(table.received) == 3
    assert len({c.command_id for c in table.received}) == 3
    assert [c.player_id for c in table.received] == [me, other, me]


async def test_a_command_is_sent_under_an_id_derived_from_the_player_and_message(
    nats_server: NatsServer,
) -> None:
    """Two gateway instances (a reconnect may land on either) send a resent message under
    the same command id, so the table recognises it."""
    settings = gateway_settings(nats_server.url_for("gateway"))
    async with (
        serve_gateway(settings, nats_server.url) as one,
        serve_gateway(settings, nats_server.url) as two,
    ):
        token, me = await one.sign_in()
        table = await FakeTable(one.nc, "t-two", [me, "bot-1"]).start()
        message = {"id": "r-7", "type": "table.cmd", "table": "t-two", "command": {"type": "roll"}}
        for gw in (one, two):
            client = await gw.client(token)
            await client.send_raw(json.dumps(message))
            await client.reply("r-7")
            await client.close()
        assert len(table.received) == 2
        assert table.received[0].command_id == table.received[1].command_id


# ------------------------------------------------------------------ spectators
async def test_spectators_beyond_the_cap_are_refused_players_are_not(
    nats_server: NatsServer,
) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), max_spectators_per_table=2)
    async with serve_gateway(settings, nats_server.url) as gw:
        token, me = await gw.sign_in("Player")
        await FakeTable(gw.nc, "t-cap", [me, "bot-1"]).start()
        watchers = [await gw.client((await gw.sign_in(f"Fan {n}"))[0]) for n in range(3)]
        assert (await watchers[0].request("table.watch", table="t-cap"))["ok"]
        assert (await watchers[1].request("table.watch", table="t-cap"))["ok"]
        refused = await watchers[2].request("table.watch", table="t-cap")
        assert refused["error"]["code"] == "table/too_many_spectators"
        # a spectator watching again keeps its place; the player always gets in
        assert (await watchers[1].request("table.watch", table="t-cap"))["ok"]
        player = await gw.client(token)
        seated = await player.request("table.watch", table="t-cap")
        assert seated["ok"] and seated["data"]["seat"] == 0
        # a place freed is a place taken
        await watchers[0].request("table.unwatch", table="t-cap")
        assert (await watchers[2].request("table.watch", table="t-cap"))["ok"]
        assert (await watchers[2].request("ping"))["ok"]
