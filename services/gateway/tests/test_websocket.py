"""The websocket protocol against a real nats-server: auth, validation, rate limit,
forwarding with the token's identity, seats, spectators, and resuming after a reconnect."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from gateway_builders import FakeLobby, FakeTable, RunningGateway, gateway_settings, serve_gateway
from opolyx_contracts import subjects
from opolyx_contracts.game import Roll
from opolyx_contracts.gateway import TableUpdatePush
from opolyx_contracts.lobby import LobbyEvent, RoomDetail, RoomMember, lobby_member_events
from opolyx_testing.http import metric_value


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
        reply = await client.request("chat.post", channel="r_r1", text="x" * 2000)
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
    assert reply["ok"] and reply["data"]["invite_code"] == "asked-create"
    sent = lobby.received[-1]
    assert sent["player_id"] == player_id and sent["name"] == "Frida"
    assert sent["mode"] == "classic" and sent["seats"] == 4 and sent["public"] is False
    # a message cannot name somebody else
    smuggled = await client.request("lobby", action="join", room="r1", player_id="g-victim")
    assert smuggled["error"]["code"] == "request/invalid"
    assert all(r["player_id"] == player_id for r in lobby.received)
    refused = await client.request("lobby", action="join", room="full")
    assert refused["error"] == {"code": "lobby/full", "message": "room is full"}


def room(room_id: str, members: list[str], *, public: bool = True) -> RoomDetail:
    return RoomDetail(
        room_id=room_id,
        mode="classic",
        seat_count=4,
        public=public,
        status="open",
        creator=members[0],
        members=[RoomMember(player_id=m, name=m) for m in members],
        filled=len(members),
        humans=len(members),
        created_at=1.0,
        waiting_since=1.0,
    )


async def test_public_room_events_are_folded_into_one_list_push(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    events = [
        LobbyEvent(type="room_created", room_id="r1", room=room("r1", ["g-a"])),
        LobbyEvent(type="room_changed", room_id="r1", room=room("r1", ["g-a", "g-b"])),
        LobbyEvent(type="room_created", room_id="r2", room=room("r2", ["g-c"])),
        LobbyEvent(type="room_closed", room_id="r2", room=None),
    ]
    for event in events:
        await gateway.nc.publish(subjects.LOBBY_EVENTS, event.model_dump_json().encode())
    push = await client.push("lobby.rooms")
    assert [r["room_id"] for r in push["upserted"]] == ["r1"]
    assert [m["player_id"] for m in push["upserted"][0]["members"]] == ["g-a", "g-b"]
    assert push["removed"] == ["r2"]
    assert not [p for p in client.pushes if p["type"] == "lobby.rooms"]


async def test_a_private_room_event_reaches_only_its_members(gateway: RunningGateway) -> None:
    token_in, me = await gateway.sign_in("Member")
    token_out, _ = await gateway.sign_in("Outsider")
    member, outsider = await gateway.client(token_in), await gateway.client(token_out)
    event = LobbyEvent(type="room_changed", room_id="r3", room=room("r3", [me], public=False))
    await gateway.nc.publish(lobby_member_events(me), event.model_dump_json().encode())
    push = await member.push("lobby.event")
    assert push["event"]["room"]["room_id"] == "r3" and push["event"]["room"]["public"] is False
    assert (await outsider.request("ping"))["ok"]
    assert not outsider.pushes


def legal_of(push: dict[str, Any], seat: int | None) -> list[dict[str, Any]]:
    return next((p["legal"] for p in push["pending"] if p["seat"] == seat), [])


@pytest.mark.parametrize("older_table", [False, True], ids=["view-with-pending", "older-table"])
async def test_a_first_watcher_costs_one_view_request(
    gateway: RunningGateway, older_table: bool
) -> None:
    """The view carries every open decision, so a table nobody watched yet is served with
    one request; a table from before `TableView.pending` is still asked per seat."""
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t-first", [me, "bot-1"]).start()
    table.views_without_pending = older_table
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t-first")
    assert watch["ok"] and watch["data"]["seat"] == 0
    state = await client.push("table.state")
    assert legal_of(state, 0) == [{"type": "roll", "seat": 0}]
    assert table.views_asked == (2 if older_table else 1)


async def test_player_watches_acts_and_sees_the_update_with_its_sequence(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t1", ["bot-0", me, "bot-2"]).start()
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t1")
    assert watch["data"]["seat"] == 1 and watch["data"]["spectator"] is False
    state = await client.push("table.state")
    assert state["seq"] == 1 and legal_of(state, 1) == [{"type": "roll", "seat": 1}]
    assert [s["player_id"] for s in state["seats"]] == ["bot-0", me, "bot-2"]

    await table.act(seat=0, events=2)
    pushed = await client.push("table.update")
    assert (pushed["table_id"], pushed["first_seq"], pushed["last_seq"]) == ("t1", 2, 3)
    assert [e["seq"] for e in pushed["events"]] == [2, 3]
    assert pushed["events"][0]["event"]["type"] == "turn_started"
    assert pushed["view"]["mode"] == "classic" and legal_of(pushed, 1)
    TableUpdatePush.model_validate(pushed)  # the contract's shape

    views_before = table.views_asked
    reply = await client.request("table.cmd", table="t1", command={"type": "roll"})
    assert reply["ok"] and reply["data"] == {"seq": 4, "version": 4, "events": 1}
    sent = table.received[-1]
    assert sent.player_id == me and sent.command == Roll()  # the table fills in the seat
    pushed = await client.push("table.update", last_seq=4)
    assert pushed["events"][0]["event"]["type"] == "dice_rolled"
    # one request per command: the update carries the view, nobody asked for it
    assert table.views_asked == views_before


async def test_commands_are_parsed_strictly_before_reaching_the_table(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t9", [me, "bot-1"]).start()
    client = await gateway.client(token)
    for command, words in (
        ({"type": "roll", "dice": 12}, "dice"),
        ({"type": "fly"}, "command"),
        ({"type": "bid", "seat": "0"}, "seat"),
        ({"type": "timeout"}, "timeouts are fired by the table"),
    ):
        reply = await client.request("table.cmd", table="t9", command=command)
        assert reply["error"]["code"] == "request/invalid", command
        assert words in reply["error"]["message"]
    assert table.received == []


async def test_a_busy_table_is_retried_with_the_same_command_id(gateway: RunningGateway) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t10", [me, "bot-1"]).start()
    table.busy = 3
    client = await gateway.client(token)
    reply = await client.request("table.cmd", table="t10", command={"type": "roll"})
    assert reply["ok"], reply
    assert len(table.received) == 4
    assert len({c.command_id for c in table.received}) == 1


async def test_acting_for_someone_elses_seat_is_refused_by_the_table(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t2", ["g-other", me]).start()
    client = await gateway.client(token)
    reply = await client.request("table.cmd", table="t2", command={"type": "roll", "seat": 0})
    assert reply["error"]["code"] == "seat/not_yours"
    assert table.received[-1].player_id == me  # the token's player, whatever the message says
    assert table.seq == 1
    assert (await client.request("ping"))["ok"] is True


async def test_spectator_sees_updates_but_cannot_act(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in("Viewer")
    table = await FakeTable(gateway.nc, "t3", ["g-a", "g-b"]).start()
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t3")
    assert watch["data"]["spectator"] is True and watch["data"]["seat"] is None
    state = await client.push("table.state")
    assert state["seq"] == 1
    await table.act(seat=1)
    assert (await client.push("table.update"))["last_seq"] == 2
    refused = await client.request("table.cmd", table="t3", command={"type": "roll"})
    assert refused["error"]["code"] == "seat/not_yours"
    assert table.seq == 2


async def test_every_watcher_gets_the_same_update(gateway: RunningGateway) -> None:
    token_a, a_id = await gateway.sign_in("Ann")
    token_b, b_id = await gateway.sign_in("Ben")
    table = await FakeTable(gateway.nc, "t11", [a_id, b_id]).start()
    a, b = await gateway.client(token_a), await gateway.client(token_b)
    spectator = await gateway.client((await gateway.sign_in("Sam"))[0])
    for client in (a, b, spectator):
        await client.request("table.watch", table="t11")
        await client.push("table.state")
    await table.act(seat=0)
    raw = [json.loads(json.dumps(await c.push("table.update"))) for c in (a, b, spectator)]
    assert raw[0] == raw[1] == raw[2]
    assert {p["seat"] for p in raw[0]["pending"]} == {0, 1}


async def test_a_lost_update_is_caught_up_from_the_stream(gateway: RunningGateway) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t12", [me, "bot-1"]).start()
    client = await gateway.client(token)
    await client.request("table.watch", table="t12")
    await client.push("table.state")
    table.drop_updates = 2
    await table.act(seat=1, events=2)  # seq 2-3: stored, update lost
    await table.act(seat=1)  # seq 4: stored, update lost
    await table.act(seat=1)  # seq 5: the gap shows
    missed = await client.push("table.events")
    assert [e["seq"] for e in missed["events"]] == [2, 3]
    missed = await client.push("table.events")
    assert [e["seq"] for e in missed["events"]] == [4]
    update = await client.push("table.update")
    assert update["first_seq"] == 5


async def test_updates_read_while_a_gap_is_replayed_follow_it_in_order(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t14", [me, "bot-1"]).start()
    client = await gateway.client(token)
    await client.request("table.watch", table="t14")
    await client.push("table.state")
    table.drop_updates = 1
    for _ in range(4):  # seq 2 lost; 3 shows the gap; 4 and 5 may come while it is read
        await table.act(seat=1)
    messages: list[dict[str, Any]] = []
    while len(messages) < 4:
        message = await client.receive()
        if message["type"] in ("table.events", "table.update"):
            messages.append(message)
    assert [m["type"] for m in messages] == ["table.events", *["table.update"] * 3]
    assert [e["seq"] for e in messages[0]["events"]] == [2]
    assert [m["first_seq"] for m in messages[1:]] == [3, 4, 5]


async def test_an_update_read_while_the_first_watcher_joins_reaches_it_after_the_state(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t15", [me, "bot-1"]).start()
    table.view_delay = 0.3  # the view is read at seq 1 and answered after the next update
    client = await gateway.client(token)
    watching = asyncio.create_task(client.request("table.watch", table="t15"))
    while table.views_asked == 0:
        await asyncio.sleep(0.01)
    await table.act(seat=1)  # seq 2, while the join waits for the view
    assert (await watching)["ok"]
    assert (await client.push("table.state"))["seq"] == 1
    assert (await client.push("table.update"))["last_seq"] == 2


async def test_a_lost_last_update_is_noticed_from_the_command_reply(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t13", [me, "bot-1"]).start()
    client = await gateway.client(token)
    await client.request("table.watch", table="t13")
    await client.push("table.state")
    table.drop_updates = 1
    reply = await client.request("table.cmd", table="t13", command={"type": "roll"})
    assert reply["data"]["seq"] == 2
    missed = await client.push("table.events")
    assert [e["seq"] for e in missed["events"]] == [2]
    state = await client.push("table.state")
    assert state["seq"] == 2 and legal_of(state, 0)


async def test_reconnect_replays_missed_events_then_the_state(gateway: RunningGateway) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t4", [me, "bot-1"]).start()
    first = await gateway.client(token)
    await first.request("table.watch", table="t4")
    await first.push("table.state")
    await first.request("table.cmd", table="t4", command={"type": "roll"})
    last_seen = (await first.push("table.update"))["last_seq"]
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
    assert state["seq"] == 8 and legal_of(state, 0)
    # and it carries on live, without duplicates
    await table.act(seat=1)
    assert (await second.push("table.update"))["last_seq"] == 9
    assert not [p for p in second.pushes if p["type"].startswith("table.")]


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


async def test_an_expired_token_is_refused_on_the_socket(gateway: RunningGateway) -> None:
    from gateway_builders import KEYS
    from opolyx_gateway.auth import TokenSigner

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
    assert metric_value(text, "opolyx_gateway_sessions") == 1
    assert metric_value(text, "opolyx_handled_total", 'outcome="ok",subject="ws.ping"') == 1
    assert "opolyx_service_info{instance=" in text


async def test_readiness_says_ready_once_nats_is_connected(gateway: RunningGateway) -> None:
    response = await gateway.http.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"ready": True, "draining": False, "checks": {"nats": True}}
    assert (await gateway.http.get("/livez")).status_code == 200
    assert "openapi" in (await gateway.http.get("/schema/openapi.json")).json()
