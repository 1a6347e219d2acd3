"""A command sent while its table is between instances (nobody subscribed to the table's
subjects: a takeover under way, NATS reconnecting) is asked again within the request
timeout with the same command id, instead of failing at once with `service/unavailable`."""

from __future__ import annotations

import asyncio
import json

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
