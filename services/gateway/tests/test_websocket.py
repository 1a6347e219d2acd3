"""The websocket protocol against a real nats-server: auth, validation, rate limit,
forwarding with the token's identity, seats, spectators, and resuming after a reconnect."""

from __future__ import annotations

import asyncio

import pytest
import websockets
from opolyx_contracts import subjects

from .conftest import FakeLobby, FakeTable, RunningGateway, gateway_settings, serve_gateway


async def test_forged_token_gets_an_error_then_the_socket_closes(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(hello=False)
    reply = await client.request("hello", token=token[:-2] + "xx")
    assert reply["ok"] is False and reply["error"]["code"] == "auth/invalid_token"
    with pytest.raises(websockets.ConnectionClosed) as info:
        await client.receive()
    assert info.value.rcvd is not None and info.value.rcvd.code == 4401


async def test_commands_before_hello_are_refused(gateway: RunningGateway) -> None:
    client = await gateway.client(hello=False)
    reply = await client.request("lobby", action="list")
    assert reply["error"]["code"] == "auth/required"
    with pytest.raises(websockets.ConnectionClosed):
        await client.receive()


async def test_a_silent_socket_is_closed_after_the_auth_timeout(nats_url: str) -> None:
    async with serve_gateway(gateway_settings(nats_url, auth_timeout_seconds=0.3)) as gw:
        client = await gw.client(hello=False)
        reply = await client.receive(timeout=3)
        assert reply["error"]["code"] == "auth/required"
        with pytest.raises(websockets.ConnectionClosed):
            await client.receive(timeout=3)


@pytest.mark.parametrize(
    ("raw", "code", "words"),
    [
        ("not json", "request/malformed_json", "not valid JSON"),
        ("[1, 2]", "request/malformed_json", "JSON object"),
        ('{"type": "ping"}', "request/invalid", "id"),
        ('{"id": 7, "type": "fly"}', "request/invalid", "unknown message type 'fly'"),
        ('{"id": 8, "type": "table.watch", "table": "a.b"}', "request/invalid", "table"),
        (
            '{"id": 9, "type": "table.watch", "table": "t1", "since": -4}',
            "request/invalid",
            "since",
        ),
        ('{"id": 10, "type": "lobby", "action": "explode"}', "request/invalid", "action"),
        ('{"id": 11, "type": "lobby", "action": "create", "seats": 9}', "request/invalid", "seats"),
        (b"\xff\xfe binary", "request/malformed_json", "JSON"),
    ],
)
async def test_malformed_messages_get_an_error_and_the_socket_stays_open(
    gateway: RunningGateway, raw: str | bytes, code: str, words: str
) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await client.send_raw(raw)
    reply = await client.receive()
    assert reply["type"] == "reply" and reply["ok"] is False
    assert reply["error"]["code"] == code
    assert words in reply["error"]["message"]
    assert (await client.request("ping"))["ok"] is True


async def test_oversized_message_is_refused_and_the_socket_stays_open(nats_url: str) -> None:
    async with serve_gateway(gateway_settings(nats_url, max_message_bytes=1000)) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        reply = await client.request("chat.post", room="r1", text="x" * 2000)
        assert reply["error"]["code"] == "request/invalid"
        assert "larger than 1000 bytes" in reply["error"]["message"]
        assert (await client.request("ping"))["ok"] is True


async def test_a_flooding_client_is_rate_limited_then_served_again(nats_url: str) -> None:
    settings = gateway_settings(nats_url, rate_per_second=10.0, rate_burst=5)
    async with serve_gateway(settings) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        ids = [await client.send("ping") for _ in range(30)]
        replies = [await client.reply(i) for i in ids]
        limited = [r for r in replies if not r["ok"]]
        assert 20 <= len(limited) <= 26, len(limited)
        assert all(r["error"]["code"] == "request/rate_limited" for r in limited)
        await asyncio.sleep(0.5)
        assert (await client.request("ping"))["ok"] is True


async def test_a_client_that_keeps_flooding_is_disconnected(nats_url: str) -> None:
    settings = gateway_settings(
        nats_url, rate_per_second=1.0, rate_burst=2, rate_violations_before_close=20
    )
    async with serve_gateway(settings) as gw:
        token, _ = await gw.sign_in()
        client = await gw.client(token)
        for _ in range(40):
            await client.send("ping")
        with pytest.raises(websockets.ConnectionClosed) as info:
            for _ in range(60):
                await client.receive(timeout=3)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008


async def test_lobby_requests_carry_the_tokens_identity(
    gateway: RunningGateway, lobby: FakeLobby
) -> None:
    token, player_id = await gateway.sign_in("Frida")
    client = await gateway.client(token)
    reply = await client.request("lobby", action="create", mode="classic", seats=4, private=True)
    assert reply["ok"] and reply["data"]["asked"] == "create"
    sent = lobby.received[-1]
    assert sent["player_id"] == player_id and sent["name"] == "Frida"
    assert sent["mode"] == "classic" and sent["seats"] == 4 and sent["public"] is False
    # a message cannot name somebody else
    smuggled = await client.request("lobby", action="join", room="r1", player_id="g-victim")
    assert smuggled["error"]["code"] == "request/invalid"
    assert all(r["player_id"] == player_id for r in lobby.received)
    refused = await client.request("lobby", action="join", room="full")
    assert refused["error"] == {"code": "lobby/full", "message": "room is full"}


async def test_lobby_events_are_pushed_to_signed_in_clients(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await gateway.nc.publish(subjects.LOBBY_EVENTS, b'{"v": 1, "type": "room_created"}')
    push = await client.push("lobby.event")
    assert push["event"]["type"] == "room_created"


async def test_player_watches_acts_and_sees_the_event_with_its_sequence(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t1", ["bot-0", me, "bot-2"]).start()
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t1")
    assert watch["data"]["seat"] == 1 and watch["data"]["spectator"] is False
    state = await client.push("table.state")
    assert (
        state["seq"] == 1 and state["seat"] == 1 and state["legal"] == [{"type": "roll", "seat": 1}]
    )
    assert [s["player_id"] for s in state["seats"]] == ["bot-0", me, "bot-2"]

    await table.act(seat=0, events=2)
    pushed = await client.push("table.events")
    assert pushed["seq"] == 3
    assert [e["seq"] for e in pushed["events"]] == [2, 3]
    assert pushed["events"][0]["event"] == {"type": "roll", "seat": 0, "n": 0}
    assert (await client.push("table.state"))["seq"] == 3

    reply = await client.request("table.cmd", table="t1", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == 4
    assert table.received[-1].player_id == me and table.received[-1].command["seat"] == 1
    pushed = await client.push("table.events", seq=4)
    assert pushed["events"][0]["event"]["type"] == "roll_done"


async def test_acting_for_someone_elses_seat_is_refused_before_reaching_the_table(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t2", ["g-other", me]).start()
    client = await gateway.client(token)
    reply = await client.request("table.cmd", table="t2", command={"type": "roll", "seat": 0})
    assert reply["error"]["code"] == "seat/not_yours"
    assert "seat 0 is not yours" in reply["error"]["message"]
    assert table.received == []
    assert table.seq == 1
    assert (await client.request("ping"))["ok"] is True


async def test_spectator_sees_events_but_cannot_act(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in("Viewer")
    table = await FakeTable(gateway.nc, "t3", ["g-a", "g-b"]).start()
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t3")
    assert watch["data"]["spectator"] is True and watch["data"]["seat"] is None
    state = await client.push("table.state")
    assert state["seat"] is None and state["legal"] is None
    await table.act(seat=1)
    assert (await client.push("table.events"))["seq"] == 2
    refused = await client.request("table.cmd", table="t3", command={"type": "roll"})
    assert refused["error"]["code"] == "seat/not_yours"
    assert table.received == []


async def test_reconnect_replays_missed_events_then_the_state(gateway: RunningGateway) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t4", [me, "bot-1"]).start()
    first = await gateway.client(token)
    await first.request("table.watch", table="t4")
    await first.push("table.state")
    await first.request("table.cmd", table="t4", command={"type": "roll"})
    last_seen = (await first.push("table.events"))["seq"]
    assert last_seen == 2
    await first.close()

    for _ in range(3):  # the game goes on while the player is away
        await table.act(seat=1, events=2)
    second = await gateway.client(token)
    watch = await second.request("table.watch", table="t4", since=last_seen)
    assert watch["data"]["replayed"] == 6 and watch["data"]["seq"] == 8
    missed = [await second.push("table.events") for _ in range(3)]
    assert [e["seq"] for batch in missed for e in batch["events"]] == [3, 4, 5, 6, 7, 8]
    state = await second.push("table.state")
    assert state["seq"] == 8 and state["seat"] == 0
    # and it carries on live, without duplicates
    await table.act(seat=1)
    assert (await second.push("table.events"))["seq"] == 9
    assert not [p for p in second.pushes if p["type"] == "table.events"]


async def test_resume_from_the_middle_of_a_batch_sends_only_the_unseen_events(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t7", [me, "bot-1"]).start()
    await table.act(seat=1, events=4)  # seq 2..5 in one message
    client = await gateway.client(token)
    await client.request("table.watch", table="t7", since=3)
    pushed = await client.push("table.events")
    assert [e["seq"] for e in pushed["events"]] == [4, 5]


async def test_reconnect_far_behind_gets_a_snapshot_instead(nats_url: str) -> None:
    async with serve_gateway(gateway_settings(nats_url, replay_limit=2)) as gw:
        token, me = await gw.sign_in()
        table = await FakeTable(gw.nc, "t5", [me, "bot-1"]).start()
        for _ in range(5):
            await table.act(seat=1)
        client = await gw.client(token)
        watch = await client.request("table.watch", table="t5", since=1)
        assert watch["data"]["replayed"] == 0
        state = await client.push("table.state")
        assert state["seq"] == 6
        assert not [p for p in client.pushes if p["type"] == "table.events"]


async def test_watching_an_unknown_table_is_a_clear_error(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await FakeTable(gateway.nc, "t6", ["g-a", "g-b"]).start()  # creates the stream
    reply = await client.request("table.watch", table="nope")
    assert reply["ok"] is False and reply["error"]["code"] == "service/unavailable"
    assert (await client.request("ping"))["ok"] is True


async def test_a_view_that_lags_behind_the_events_is_asked_for_again(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t8", [me, "bot-1"]).start()
    client = await gateway.client(token)
    await client.request("table.watch", table="t8")
    assert (await client.push("table.state"))["seq"] == 1
    table.stale_views = 3
    await table.act(seat=1)
    assert (await client.push("table.events"))["seq"] == 2
    assert (await client.push("table.state"))["seq"] == 2


def test_legal_commands_are_computed_from_the_public_view() -> None:
    from opolyx_contracts.table import SeatSpec, TableView
    from opolyx_gateway.hub import local_legal
    from opolyx_rules import command_to_json, legal_commands, new_game, public_view

    state = new_game("classic", 3, 7)
    view = TableView(
        table_id="t",
        seq=1,
        version=1,
        state=public_view(state),
        seed_commitment="x",
        seats=[SeatSpec(player_id=f"p{i}") for i in range(3)],
    )
    computed = local_legal(view, {0, 1, 2})
    assert computed is not None
    for seat in range(3):
        assert computed[seat] == [command_to_json(c) for c in legal_commands(state, seat)]
    assert local_legal(view.model_copy(update={"state": {"nonsense": 1}}), {0}) is None


async def test_chat_messages_of_a_watched_room_are_pushed(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    assert (await client.request("chat.watch", room="r1"))["ok"]
    await gateway.nc.publish(subjects.chat_messages("r2"), b'{"text": "elsewhere"}')
    await gateway.nc.publish(subjects.chat_messages("r1"), b'{"text": "hello"}')
    push = await client.push("chat.message")
    assert push["room"] == "r1" and push["message"] == {"text": "hello"}
    assert (await client.request("chat.unwatch", room="r1"))["ok"]
    await gateway.nc.publish(subjects.chat_messages("r1"), b'{"text": "gone"}')
    assert (await client.request("ping"))["ok"]
    assert not [p for p in client.pushes if p["type"] == "chat.message"]


async def test_chat_post_without_a_chat_service_is_a_clear_error(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    reply = await client.request("chat.post", room="r1", text="hi")
    assert reply["error"]["code"] == "service/unavailable"
    assert "chat service" in reply["error"]["message"]


async def test_an_expired_token_is_refused_on_the_socket(gateway: RunningGateway) -> None:
    from opolyx_gateway.auth import TokenSigner

    from .conftest import KEYS

    signer = TokenSigner(KEYS, "k1", ttl_seconds=60)
    old_token, _ = signer.issue("g-old", "Oldtimer", now=1_000_000)
    client = await gateway.client(hello=False)
    reply = await client.request("hello", token=old_token)
    assert reply["error"]["code"] == "auth/expired_token"
    with pytest.raises(websockets.ConnectionClosed):
        await client.receive()


async def test_metrics_count_sessions_and_messages(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    await client.request("ping")
    text = (await gateway.http.get("/metrics")).text
    assert "opolyx_gateway_sessions 1" in text
    assert 'opolyx_gateway_messages_total{type="ping"} 1' in text
