"""Gateway test harness: a real nats-server (opolyx_testing's ``nats_url``), the gateway on
a real uvicorn on a loopback port, and small stand-ins for the lobby and a table that speak
the real contracts on the real NATS."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import nats
import pytest
import uvicorn
import websockets
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from opolyx_contracts import subjects
from opolyx_contracts.envelope import error_reply
from opolyx_contracts.table import (
    CommandAccepted,
    EventRecord,
    SeatSpec,
    TableCommand,
    TableEvents,
    TableView,
    ViewRequest,
    event_message_id,
)
from opolyx_gateway import create_app
from opolyx_gateway.settings import GatewayOptions, GatewaySettings
from opolyx_service.connection import ensure_stream
from opolyx_service.settings import NatsSettings

KEYS = {"k1": "first-key-0123456789abcdef"}


class FakeTable:
    """One table on the real NATS: answers views and commands, stores events in JetStream.

    It checks seat ownership as the table service does, and records every command that
    reached it, so a test can prove the gateway refused something before forwarding it.
    """

    def __init__(self, nc: NatsClient, table_id: str, players: list[str]) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.table_id = table_id
        self.players = players
        self.seq = 0
        self.received: list[TableCommand] = []
        self.stale_views = 0
        """Answer this many view requests with the state before the last event (as a table
        does between storing events and saving the snapshot)."""

    async def start(self) -> FakeTable:
        await ensure_stream(self.js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
        await self.nc.subscribe(subjects.table_command(self.table_id), cb=self._on_command)
        await self.nc.subscribe(subjects.table_view(self.table_id), cb=self._on_view)
        await self.nc.flush()
        await asyncio.sleep(0)
        await self.nc.flush()
        await self.publish({"type": "table_created"}, source="table")
        return self

    async def publish(self, *events: dict[str, Any], source: str = "rules") -> int:
        """Store the events of one command as one message, as the table service does."""
        first = self.seq + 1
        records = [
            EventRecord(seq=first + i, version=first + i, event=e) for i, e in enumerate(events)
        ]
        self.seq += len(records)
        body = TableEvents(
            table_id=self.table_id,
            source=source,
            first_seq=first,
            last_seq=self.seq,  # type: ignore[arg-type]
            version=self.seq,
            events=records,
            at=time.time(),
        )
        await self.js.publish(
            subjects.table_events(self.table_id),
            body.model_dump_json().encode(),
            headers={"Nats-Msg-Id": event_message_id(self.table_id, first)},
        )
        return self.seq

    async def act(self, seat: int, kind: str = "roll", events: int = 1) -> int:
        """Somebody else (a bot, another player) acts at this table."""
        return await self.publish(*({"type": kind, "seat": seat, "n": n} for n in range(events)))

    async def _on_command(self, msg: Msg) -> None:
        command = TableCommand.model_validate_json(msg.data)
        self.received.append(command)
        seat = command.command.get("seat")
        if not isinstance(seat, int) or self.players[seat] != command.player_id:
            await msg.respond(
                error_reply("seat/not_yours", "not your seat").model_dump_json().encode()
            )
            return
        seq = await self.publish({**command.command, "type": command.command["type"] + "_done"})
        await msg.respond(
            CommandAccepted(seq=seq, version=seq, events=1).model_dump_json().encode()
        )

    def view(self, seat: int | None) -> TableView:
        seq = self.seq
        if self.stale_views > 0:
            self.stale_views -= 1
            seq -= 1
        return TableView(
            table_id=self.table_id,
            seq=seq,
            version=seq,
            state={
                "round": 1,
                "current_seat": 0,
                "pending": {"kind": "roll", "seat": 0},
                "seats": [{"seat": i, "cash": 15000} for i in range(len(self.players))],
            },
            seats=[SeatSpec(player_id=p, bot=p.startswith("bot"), name=p) for p in self.players],
            legal=[{"type": "roll", "seat": seat}] if seat is not None else None,
            seed_commitment="0" * 64,
            deadline_at=time.time() + 75,
        )

    async def _on_view(self, msg: Msg) -> None:
        request = ViewRequest.model_validate_json(msg.data)
        await msg.respond(self.view(request.seat).model_dump_json().encode())


@dataclass
class FakeLobby:
    """Answers ``opolyx.lobby.cmd`` with what it was asked, and remembers every request."""

    nc: NatsClient
    received: list[dict[str, Any]] = field(default_factory=list)

    async def start(self) -> FakeLobby:
        await self.nc.subscribe(subjects.LOBBY_CMD, cb=self._on_request)
        await self.nc.flush()
        await asyncio.sleep(0)
        await self.nc.flush()
        return self

    async def _on_request(self, msg: Msg) -> None:
        body = json.loads(msg.data)
        self.received.append(body)
        if body.get("type") == "join" and body.get("room_id") == "full":
            reply = {
                "v": 1,
                "ok": False,
                "error": {"code": "lobby/full", "message": "room is full"},
            }
        else:
            reply = {"v": 1, "ok": True, "rooms": [], "asked": body["type"]}
        await msg.respond(json.dumps(reply).encode())


@dataclass
class RunningGateway:
    base_url: str
    ws_url: str
    http: httpx.AsyncClient
    nc: NatsClient

    async def sign_in(self, name: str = "Alice") -> tuple[str, str]:
        response = await self.http.post("/api/session", json={"name": name})
        assert response.status_code == 201, response.text
        body = response.json()
        return body["token"], body["player_id"]

    async def client(self, token: str | None = None, *, hello: bool = True) -> WsClient:
        client = WsClient(await websockets.connect(self.ws_url))
        if hello:
            assert token is not None
            reply = await client.request("hello", token=token)
            assert reply["ok"], reply
        return client


class WsClient:
    """A websocket client that keeps pushes apart from replies."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self.socket = socket
        self.pushes: list[dict[str, Any]] = []
        self.replies: dict[Any, dict[str, Any]] = {}
        self.next_id = 0

    async def send(self, kind: str, **fields: Any) -> int:
        self.next_id += 1
        await self.socket.send(json.dumps({"id": self.next_id, "type": kind, **fields}))
        return self.next_id

    async def send_raw(self, text: str | bytes) -> None:
        await self.socket.send(text)

    async def receive(self, timeout: float = 5.0) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.socket.recv(), timeout))
        if message["type"] == "reply":
            self.replies[message["id"]] = message
        else:
            self.pushes.append(message)
        return message

    async def reply(self, msg_id: Any, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while msg_id not in self.replies:
            await self.receive(max(0.01, deadline - time.monotonic()))
        return self.replies.pop(msg_id)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        return await self.reply(await self.send(kind, **fields))

    async def push(self, kind: str, timeout: float = 5.0, **match: Any) -> dict[str, Any]:
        """The first push of this type (and matching fields) not taken yet."""
        deadline = time.monotonic() + timeout
        while True:
            for i, push in enumerate(self.pushes):
                if push["type"] == kind and all(push.get(k) == v for k, v in match.items()):
                    return self.pushes.pop(i)
            await self.receive(max(0.01, deadline - time.monotonic()))

    async def close(self) -> None:
        await self.socket.close()


def gateway_settings(nats_url: str, **options: Any) -> GatewaySettings:
    return GatewaySettings(
        nats=NatsSettings(url=nats_url),
        gateway=GatewayOptions(signing_keys=KEYS, **options),
    )


@contextlib.asynccontextmanager
async def serve_gateway(settings: GatewaySettings) -> AsyncIterator[RunningGateway]:
    """The gateway on a real uvicorn (websockets included) on a free loopback port."""
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=0,
        ws="websockets-sansio",
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    nc = await nats.connect(settings.nats.url)
    try:
        async with httpx.AsyncClient(base_url=base) as http:
            yield RunningGateway(base, f"ws://127.0.0.1:{port}/ws", http, nc)
    finally:
        await nc.drain()
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.fixture
async def gateway(nats_url: str) -> AsyncIterator[RunningGateway]:
    async with serve_gateway(gateway_settings(nats_url)) as running:
        yield running


@pytest.fixture
async def lobby(gateway: RunningGateway) -> FakeLobby:
    return await FakeLobby(gateway.nc).start()
