"""Trade previews and published net worth: the rules' verdict and figures, asked of a real
table instance over a real nats-server as the gateway's role."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import opolyx_rules
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import table_trade_preview, table_update
from opolyx_contracts.table import SeatSpec, TableUpdate, TradePreview
from opolyx_service import flush_in_order
from opolyx_table.instance import TableInstance
from opolyx_testing import NatsServer
from opolyx_testing.table_client import TableClient

StartTable = Callable[..., Awaitable[TableInstance]]


async def _preview(nc: Client, table_id: str, **fields: Any) -> dict[str, Any]:
    body = json.dumps({"v": 1, **fields}).encode()
    reply = await nc.request(table_trade_preview(table_id), body, timeout=3.0)
    decoded: dict[str, Any] = json.loads(reply.data)
    return decoded


async def test_a_preview_gives_the_rules_verdict_for_the_senders_seat(
    start_table: StartTable, client: TableClient, nats_server: NatsServer
) -> None:
    instance: TableInstance = await start_table()
    seats = [SeatSpec(player_id="ann"), SeatSpec(player_id="bob")]
    created = await client.create("classic", seats, seed=3, table_id="preview-table")
    gateway = await nats_server.connect("gateway")
    try:
        table = instance.tables[created.table_id]
        cash = table.state.seats[0].cash
        fair = await _preview(gateway, created.table_id, player_id="ann", to=1, give_cash=500)
        assert fair["ok"], fair
        preview = TradePreview.model_validate(fair)
        assert (preview.seat, preview.give_value, preview.take_value) == (0, 500, 0)
        assert preview.share_pct == 0
        # 500 against nothing is not fair: the smaller side is 0% of the larger
        assert not preview.allowed and preview.refusal is not None
        assert preview.refusal.code in {"trade/unfair", "trade/not_now"}
        bob = await _preview(
            gateway, created.table_id, player_id="bob", to=0, give_cash=100, take_cash=100
        )
        assert bob["seat"] == 1 and bob["give_value"] == 100 and bob["take_value"] == 100
        too_much = await _preview(
            gateway, created.table_id, player_id="ann", to=1, give_cash=cash + 1, take_cash=1
        )
        assert too_much["ok"] and not too_much["allowed"]
        # nothing changed at the table
        assert instance.tables[created.table_id].seq == created.seq
        # bad input gets coded errors, and the instance keeps answering
        stranger = await _preview(gateway, created.table_id, player_id="eve", to=1)
        assert stranger["error"]["code"] == "seat/not_yours"
        bad = await _preview(gateway, created.table_id, player_id="ann", to=9)
        assert bad["error"]["code"] == "request/invalid"
        squares = await _preview(
            gateway, created.table_id, player_id="ann", to=1, give_squares=[77]
        )
        assert squares["error"]["code"] == "request/invalid"
        reply = await gateway.request(
            table_trade_preview(created.table_id), b"{" + b" " * 4000 + b"}", timeout=3.0
        )
        assert json.loads(reply.data)["error"]["code"] == "request/invalid"
        missing = await _preview(gateway, "no-such-table", player_id="ann", to=1)
        assert missing["error"]["code"] == "table/not_found"
        again = await _preview(gateway, created.table_id, player_id="ann", to=1, give_cash=500)
        assert again == fair
    finally:
        await gateway.drain()
    assert not [v for v in nats_server.permission_violations() if "trade_preview" in v[2]]


async def test_updates_and_views_carry_every_seats_net_worth(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    instance: TableInstance = await start_table()
    updates: list[TableUpdate] = []

    async def collect(msg: Msg) -> None:
        updates.append(TableUpdate.model_validate_json(msg.data))

    table_id = "worth-table"
    sub = await client_nc.subscribe(table_update(table_id), cb=collect)
    await flush_in_order(client_nc)
    seats = [SeatSpec(player_id="ann"), SeatSpec(player_id="bob")]
    await client.create("classic", seats, seed=8, table_id=table_id)
    view = await client.view(table_id)
    seat = view["state"]["pending"]["seat"]
    rolled = await client.command(table_id, ["ann", "bob"][seat], {"type": "roll"}, "w-1")
    assert rolled["ok"], rolled
    for _ in range(50):
        if updates:
            break
        await asyncio.sleep(0.05)
    await sub.unsubscribe()
    state = instance.tables[table_id].state
    expected = list(opolyx_rules.net_worths(state))
    assert updates and updates[-1].net_worth == expected
    assert (await client.view(table_id))["net_worth"] == expected
    assert len(expected) == 2 and all(worth > 0 for worth in expected)
