"""The autopilot end to end: real nats-server with the roles, table, bots, lobby and gateway
processes. A player's socket drops; after the grace period the bots play the seat (marked
as the autopilot's in the stored events); the player reconnects, the seat is theirs again
at once and they act."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Mapping
from typing import Any

import httpx
import websockets
from nats.aio.client import Client
from opolyx_contracts.table import AutopilotChanged, TableEvents
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.process import ServiceProcess
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient

SIGNING_KEYS = '{"k1": "autopilot-test-signing-key-0123456789"}'
GRACE = 1.0


async def start(
    processes: ServiceProcesses,
    server: NatsServer,
    role: str,
    script: str,
    env: Mapping[str, str] | None = None,
) -> ServiceProcess:
    process = processes.start(
        [script_path(script)],
        {"OPOLYX_LOG__LEVEL": "WARNING", **server.env_for(role), **(env or {})},
        name=role,
    )
    await process.wait_ready(60)
    return process


class Socket:
    """A player's websocket: requests by id, pushes kept in order."""

    _ids = itertools.count(1)

    def __init__(self, connection: websockets.ClientConnection) -> None:
        self.connection = connection
        self.pushes: list[dict[str, Any]] = []
        self.replies: dict[int, dict[str, Any]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, token: str) -> Socket:
        socket = cls(await websockets.connect(url))
        hello = await socket.request("hello", token=token)
        assert hello["ok"], hello
        return socket

    async def _read(self) -> None:
        async for text in self.connection:
            message = json.loads(text)
            if message.get("type") == "reply":
                self.replies[message["id"]] = message
            else:
                self.pushes.append(message)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        msg_id = next(self._ids)
        await self.connection.send(json.dumps({"id": msg_id, "type": kind, **fields}))
        deadline = time.monotonic() + 10
        while msg_id not in self.replies:
            assert time.monotonic() < deadline, f"no reply to {kind}"
            await asyncio.sleep(0.01)
        return self.replies.pop(msg_id)

    async def close(self) -> None:
        await self.connection.close()
        self._reader.cancel()


async def until(predicate: Any, what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_a_dropped_player_is_played_by_the_autopilot_and_gets_the_seat_back(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    await start(
        service_processes,
        nats_server,
        "table",
        "opolyx-table",
        {"OPOLYX_TABLE__AUTOPILOT_GRACE": str(GRACE)},
    )
    await start(service_processes, nats_server, "bots", "opolyx-bots")
    await start(service_processes, nats_server, "lobby", "opolyx-lobby")
    gateway = await start(
        service_processes,
        nats_server,
        "gateway",
        "opolyx-gateway",
        {"OPOLYX_GATEWAY__SIGNING_KEYS": SIGNING_KEYS},
    )
    base = f"127.0.0.1:{gateway.http_port}"
    async with httpx.AsyncClient(base_url=f"http://{base}", timeout=10) as http:
        session = (await http.post("/api/session", json={"name": "Zelda"})).json()
    token = session["token"]

    first = await Socket.open(f"ws://{base}/ws", token)
    created = await first.request("lobby", action="create", mode="classic", seats=2)
    assert created["ok"], created
    room = created["data"]
    room_id = room["room"]["room_id"]
    assert room["room"]["autopilot"] is True, "the room's default"
    assert (await first.request("lobby", action="add_bot", room=room_id))["ok"]
    started = await first.request("lobby", action="start", room=room_id)
    assert started["ok"], started
    table_id = started["data"]["table_id"]
    watched = await first.request("table.watch", table=table_id)
    assert watched["ok"], watched
    seat = watched["data"]["seat"]
    assert seat is not None

    client = TableClient(nc)

    async def autopilot_seats() -> list[int]:
        view = await client.view(table_id)
        seats: list[int] = view["autopilot"]
        return seats

    async def stored() -> list[TableEvents]:
        return await client.read_events(table_id)

    # The socket drops: once the grace period is over the autopilot plays the seat.
    await first.close()
    await until(lambda: _equal(autopilot_seats(), [seat]), "the autopilot took the seat")

    async def autopilot_turns() -> list[TableEvents]:
        return [b for b in await stored() if any(r.autopilot for r in b.events)]

    played = await until(autopilot_turns, "the autopilot played the seat", timeout=30)
    assert all(b.command is not None and b.command.seat == seat for b in played)

    # Back: the seat is the player's at once, and they act for it.
    second = await Socket.open(f"ws://{base}/ws", token)
    again = await second.request("table.watch", table=table_id)
    assert again["ok"] and again["data"]["seat"] == seat
    await until(lambda: _equal(autopilot_seats(), []), "the seat came back")
    changes = [
        (r.event.on, r.event.reason)
        for b in await stored()
        for r in b.events
        if isinstance(r.event, AutopilotChanged)
    ]
    assert changes[:2] == [(True, "away"), (False, "back")], changes

    async def my_move() -> dict[str, Any] | None:
        legal = (await client.view(table_id, seat))["legal"] or []
        moves = [c for c in legal if c["type"] not in ("resign", "bankrupt", "offer")]
        return moves[0] if moves else None

    move = await until(my_move, "the player's turn comes", timeout=60)
    reply = await second.request("table.cmd", table=table_id, command=move)
    if not reply["ok"]:  # the bot moved in between: decide again on the new state
        move = await until(my_move, "the player's turn comes", timeout=60)
        reply = await second.request("table.cmd", table=table_id, command=move)
    assert reply["ok"], reply
    mine = [b for b in await stored() if getattr(b.command, "seat", None) == seat]
    assert not any(r.autopilot for r in mine[-1].events), "the player's own move"
    await second.close()


async def _equal(value: Any, expected: Any) -> bool:
    return bool(await value == expected)
