"""Every client message that changes something runs once per message id: the same id (and
the same message) gets the same reply and reaches the lobby once, whether it is resent
after a reconnect or twice at once; reads are not held back, and a refusal that says
nothing ran lets the retry run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from gateway_builders import FakeLobby, RunningGateway
from nats.aio.msg import Msg
from opolyx_contracts import error_reply
from opolyx_contracts.errors import NOT_OWNER
from opolyx_contracts.gateway import client_message_adapter
from opolyx_contracts.subjects import table_seat
from opolyx_contracts.table import SeatStatus
from opolyx_gateway.idempotency import changes_something
from opolyx_service import flush_in_order


def lobby_msg(msg_id: str, action: str, **fields: Any) -> str:
    return json.dumps({"id": msg_id, "type": "lobby", "action": action, **fields})


async def test_a_resent_lobby_change_runs_once_and_gets_the_same_reply(
    gateway: RunningGateway, lobby: FakeLobby
) -> None:
    token, _ = await gateway.sign_in()
    first = await gateway.client(token)
    create = lobby_msg("m-1", "create", mode="classic", seats=4)
    await first.send_raw(create)
    answer = await first.reply("m-1")
    assert answer["ok"], answer
    await first.socket.close()
    # the client reconnects and resends what it had not seen answered
    second = await gateway.client(token)
    await second.send_raw(create)
    assert await second.reply("m-1") == answer
    assert [r["type"] for r in lobby.received] == ["create"]
    # twice at once: still once
    leave = lobby_msg("m-2", "leave", room="r1")
    await second.send_raw(leave)
    await second.send_raw(leave)
    replies = [await second.reply("m-2"), await second.reply("m-2", timeout=1)]
    assert replies[0] == replies[1] and replies[0]["ok"]
    assert [r["type"] for r in lobby.received] == ["create", "leave"]
    # another id is another action
    await second.send_raw(lobby_msg("m-3", "create", mode="classic", seats=4))
    assert (await second.reply("m-3"))["ok"]
    assert [r["type"] for r in lobby.received] == ["create", "leave", "create"]


async def test_a_refusal_is_remembered_and_reads_are_not(
    gateway: RunningGateway, lobby: FakeLobby
) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    join = lobby_msg("m-9", "join", room="full")
    await client.send_raw(join)
    refused = await client.reply("m-9")
    assert refused["ok"] is False and refused["error"]["code"] == "lobby/full"
    await client.send_raw(join)
    assert await client.reply("m-9") == refused
    listing = lobby_msg("m-10", "list")
    for _ in range(2):
        await client.send_raw(listing)
        assert (await client.reply("m-10"))["ok"]
    assert [r["type"] for r in lobby.received] == ["join", "list", "list"]


async def test_another_player_with_the_same_id_is_another_message(
    gateway: RunningGateway, lobby: FakeLobby
) -> None:
    alice, _ = await gateway.sign_in("Alice")
    bob, _ = await gateway.sign_in("Bob")
    create = lobby_msg("1", "create", mode="classic", seats=2)
    for token in (alice, bob):
        client = await gateway.client(token)
        await client.send_raw(create)
        assert (await client.reply("1"))["ok"]
    assert len({r["player_id"] for r in lobby.received}) == len(lobby.received) == 2


async def test_an_unavailable_lobby_is_asked_again_on_retry(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    create = lobby_msg("m-5", "create", mode="classic", seats=4)
    await client.send_raw(create)
    failed = await client.reply("m-5")
    assert failed["ok"] is False and failed["error"]["code"] == "service/unavailable"
    fake = await FakeLobby(gateway.nc).start()
    await asyncio.sleep(0.1)
    await client.send_raw(create)
    assert (await client.reply("m-5"))["ok"]
    assert len(fake.received) == 1


async def test_an_autopilot_switch_refused_while_the_table_moves_runs_on_retry(
    gateway: RunningGateway,
) -> None:
    """A table between instances answers `table/not_owner`: the switch did not run, so the
    client's resend (same id, same message) asks the table again instead of getting the
    remembered refusal."""
    received: list[bytes] = []

    async def table(msg: Msg) -> None:
        received.append(msg.data)
        if len(received) == 1:
            reply = error_reply(NOT_OWNER, "the table is moving").model_dump_json()
        else:
            reply = SeatStatus(seat=0, away=False, autopilot=True, chosen=True).model_dump_json()
        await msg.respond(reply.encode())

    await gateway.nc.subscribe(table_seat("t-moving"), cb=table)
    await flush_in_order(gateway.nc)
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    switch = json.dumps({"id": "a-1", "type": "table.autopilot", "table": "t-moving", "on": True})
    await client.send_raw(switch)
    refused = await client.reply("a-1")
    assert refused["ok"] is False and refused["error"]["code"] == NOT_OWNER
    await client.send_raw(switch)
    answer = await client.reply("a-1")
    assert answer["ok"] is True, answer
    assert len(received) == 2


def test_which_messages_change_something() -> None:
    def parse(**fields: Any) -> Any:
        return client_message_adapter.validate_python({"id": 1, **fields})

    changing = [
        parse(type="lobby", action="start", room="r1"),
        parse(type="chat.post", channel="lobby", text="hi"),
        parse(type="chat.mute", target="g-1", muted=True),
        parse(type="table.autopilot", table="t1", on=True),
        parse(type="chat.settings", room="r1", bot_stickers=False),
    ]
    reading = [
        parse(type="lobby", action="list"),
        parse(type="lobby", action="mine"),
        parse(type="ping"),
        parse(type="chat.settings", room="r1"),
        parse(type="table.watch", table="t1"),
    ]
    assert all(changes_something(m) for m in changing)
    assert not any(changes_something(m) for m in reading)
