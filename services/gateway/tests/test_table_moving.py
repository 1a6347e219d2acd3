"""A command sent while its table is between instances (nobody subscribed to the table's
subjects: a takeover under way, NATS reconnecting) is asked again within the request
timeout with the same command id, instead of failing at once with `service/unavailable`."""

from __future__ import annotations

import asyncio
import json

import pytest
from gateway_builders import FakeTable, RunningGateway


async def test_a_command_to_a_table_between_instances_waits_for_its_new_owner(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    client = await gateway.client(token)
    command = {"id": "m-1", "type": "table.cmd", "table": "t-moving", "command": {"type": "roll"}}
    await client.send_raw(json.dumps(command))
    await asyncio.sleep(0.3)  # nobody serves the table yet: the gateway keeps asking
    table = await FakeTable(gateway.nc, "t-moving", [me, "bot-1"]).start()
    answer = await client.reply("m-1")
    assert answer["ok"], answer
    assert len(table.received) == 1 and answer["data"]["seq"] == table.seq


async def test_a_table_nobody_serves_is_unavailable_once_the_timeout_is_spent(
    gateway: RunningGateway,
) -> None:
    token, _ = await gateway.sign_in()
    client = await gateway.client(token)
    command = {"id": "m-2", "type": "table.cmd", "table": "t-gone", "command": {"type": "roll"}}
    await client.send_raw(json.dumps(command))
    answer = await client.reply("m-2", timeout=15)
    assert answer["ok"] is False and answer["error"]["code"] == "service/unavailable"


@pytest.mark.parametrize("with_version", [True, False], ids=["stale", "web client, no version"])
async def test_moves_whose_updates_died_with_their_instance_reach_a_player_whose_command_is_refused(
    gateway: RunningGateway, with_version: bool
) -> None:
    """The owning instance stored a bot's moves and was killed before their updates went
    out; its successor waits for the player, who still sees the state before those moves.
    The player's command, decided on that state, is refused: as stale when it carries that
    version, as out of turn by the rules when it carries none (the web client's). The gateway
    then looks at the table's view and pushes what the player was missing (seen in the chaos
    test: without it the player sent the same refused command until the turn timer ran out,
    75 s)."""
    token, me = await gateway.sign_in()
    client = await gateway.client(token)
    table = await FakeTable(gateway.nc, "t-lost", [me, "bot-1"]).start()
    assert (await client.request("table.watch", table="t-lost"))["ok"]
    assert (await client.push("table.state", table="t-lost"))["seq"] == 1
    table.drop_updates = 2
    if not with_version:
        table.out_of_turn = 1
    await table.act(1)
    await table.act(1)
    roll = {"type": "roll", "seat": 0}
    version = {"expected_version": 1} if with_version else {}
    refused = await client.request("table.cmd", table="t-lost", command=roll, **version)
    code = "command/stale_version" if with_version else "turn/wrong_phase"
    assert refused["error"]["code"] == code, refused
    state = await client.push("table.state", timeout=10, table="t-lost")
    assert (state["seq"], table.views_asked) == (3, 2)  # the watch's view, then the look's
    missed = [p for p in client.pushes if p["type"] == "table.events"]
    assert [e["seq"] for p in missed for e in p["events"]] == [2, 3]  # from the stream
    accepted = await client.request("table.cmd", table="t-lost", command=roll, expected_version=3)
    assert accepted["ok"], accepted
