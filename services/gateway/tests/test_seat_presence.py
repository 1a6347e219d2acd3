"""The gateway's seat-presence reports to the table, on a real nats-server (the gateway
role's rights; the test answers as the table): a seated player's first socket on a table
says "connected", the last one gone says "gone", in order, and "connected" is repeated
while they stay."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import table_seat
from opolyx_contracts.table import SeatStatus
from opolyx_gateway import seat_presence
from opolyx_gateway.seat_presence import SeatPresenceReports
from opolyx_service import flush_in_order
from opolyx_testing.nats_server import NatsServer

TABLE = "t-presence"


async def fake_table(nc: Client, received: list[dict[str, Any]]) -> None:
    async def answer(msg: Msg) -> None:
        body = json.loads(msg.data)
        received.append(body)
        status = SeatStatus(
            seat=0, away=body.get("connected") is False, autopilot=False, chosen=False
        )
        await msg.respond(status.model_dump_json().encode())

    await nc.subscribe(table_seat(TABLE), cb=answer)
    await flush_in_order(nc)


async def until(predicate: Any, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)


async def test_first_socket_in_last_socket_out_in_order_and_repeated_while_here(
    nats_server: NatsServer, nc: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seat_presence, "REFRESH_SECONDS", 0.2)
    received: list[dict[str, Any]] = []
    await fake_table(nc, received)
    gateway_nc = await nats_server.connect("gateway")
    reports = SeatPresenceReports(gateway_nc, "gw-test")
    tab, other_tab = object(), object()
    try:
        reports.joined(tab, TABLE, "ines")
        reports.joined(other_tab, TABLE, "ines")  # a second tab: nothing new to say
        await until(lambda: len(received) >= 1)
        assert received[0]["connected"] is True and received[0]["gateway"] == "gw-test"
        await until(lambda: len(received) >= 2)  # the repeat while she stays
        assert all(r["connected"] is True for r in received)
        reports.left(tab, TABLE)
        await asyncio.sleep(0.05)
        assert all(r["connected"] is True for r in received), "one tab is still open"
        reports.left(other_tab, TABLE)
        await until(lambda: received[-1]["connected"] is False)
        count = len(received)
        await asyncio.sleep(0.5)
        assert len(received) == count, "no repeats once she has gone"
        result = await reports.switch(TABLE, "ines", True)
        assert received[-1]["autopilot"] is True and result.seat == 0
    finally:
        await reports.stop()
        await gateway_nc.drain()
