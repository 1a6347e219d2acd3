"""Gateway test harness: the gateway on a real uvicorn on a loopback port, a websocket
client, and small stand-ins for the lobby and a table that speak the real contracts on the
real NATS. The tests import it by name (conftest.py puts this directory on ``sys.path``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import nats
import uvicorn
import websockets
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from opolyx_contracts import subjects
from opolyx_contracts.envelope import error_reply
from opolyx_contracts.errors import BUSY, COMMAND_STALE
from opolyx_contracts.game import DiceRolled, GameEvent, Roll, TurnStarted
from opolyx_contracts.gateway import BATCH_QUERY
from opolyx_contracts.lobby import LobbyReply
from opolyx_contracts.refusals import TURN_WRONG_PHASE
from opolyx_contracts.table import (
    CommandAccepted,
    EventRecord,
    PendingDecision,
    PublicView,
    SeatSpec,
    TableCommand,
    TableEvents,
    TableUpdate,
    TableView,
    ViewRequest,
    event_message_id,
)
from opolyx_gateway import create_app
from opolyx_gateway.__main__ import uvicorn_config
from opolyx_gateway.settings import GatewayOptions, GatewaySettings
from opolyx_rules import new_game, public_view
from opolyx_service import flush_in_order
from opolyx_service.connection import ensure_stream
from opolyx_service.settings import HttpSettings, NatsSettings
from opolyx_testing.gateway_client import frame_messages

KEYS = {"k1": "first-key-0123456789abcdef"}


class FakeTable:
    """One table on the real NATS, speaking the table service's contract: it stores each
    batch in TABLE_EVENTS, then publishes its `TableUpdate`, and answers views and commands.

    It checks seat ownership and the expected version as the table service does, and records
    every command that reached it and every view asked for, so a test can prove what the
    gateway asked.
    """

    def __init__(self, nc: NatsClient, table_id: str, players: list[str]) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.table_id = table_id
        self.players = players
        self.seq = 0
        self.received: list[TableCommand] = []
        self.views_asked = 0
        self.busy = 0
        """Refuse this many commands with service/busy first (an instance at its limit)."""
        self.out_of_turn = 0
        """Refuse this many commands as the rules refuse a decision not open now."""
        self.drop_updates = 0
        """Store this many batches without publishing their update (core NATS lost it)."""
        self.views_without_pending = False
        """Answer views as tables did before `TableView.pending` (a rolling upgrade)."""
        self.reply_first = False
        """Answer a command before publishing its update, as the table service does."""
        self.reply_delay = 0.0
        """Seconds a command's reply comes after its update (a slow answer)."""
        self.acts_before_command = 0
        """Somebody else acts this many times just before the next command is applied."""
        self.view_delay = 0.0
        """Seconds a view takes to reach the asker (read at the start: it may be outdated)."""
        state = new_game("classic", len(players), 7)
        self.state = PublicView.model_validate(public_view(state))

    async def start(self) -> FakeTable:
        await ensure_stream(self.js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
        await self.nc.subscribe(subjects.table_command(self.table_id), cb=self._on_command)
        await self.nc.subscribe(subjects.table_view(self.table_id), cb=self._on_view)
        await flush_in_order(self.nc)
        await self.publish(TurnStarted(seat=0, round=1, deadline=75.0))
        return self

    def pending(self) -> list[PendingDecision]:
        return [
            PendingDecision(seat=i, kind="roll", deadline_at=time.time() + 75, legal=[Roll(seat=i)])
            for i, player in enumerate(self.players)
            if not player.startswith("bot")
        ]

    async def publish(self, *events: GameEvent, reply: Msg | None = None) -> int:
        """Store the events of one command as one message, then tell the watchers; a
        command's `reply` goes before or after that (`reply_first`)."""
        first = self.seq + 1
        records = [
            EventRecord(seq=first + i, version=first + i, event=e) for i, e in enumerate(events)
        ]
        self.seq += len(records)
        body = TableEvents(
            table_id=self.table_id,
            source="rules",
            first_seq=first,
            last_seq=self.seq,
            version=self.seq,
            events=records,
            at=time.time(),
        )
        await self.js.publish(
            subjects.table_events(self.table_id),
            body.model_dump_json().encode(),
            headers={"Nats-Msg-Id": event_message_id(self.table_id, first)},
        )
        if reply is not None and self.reply_first:
            await self._accept(reply)
        if self.drop_updates > 0:
            self.drop_updates -= 1
        else:
            await self._publish_update(first, records)
        if reply is not None and not self.reply_first:
            await asyncio.sleep(self.reply_delay)
            await self._accept(reply)
        return self.seq

    async def _publish_update(self, first: int, records: list[EventRecord]) -> None:
        update = TableUpdate(
            table_id=self.table_id,
            first_seq=first,
            last_seq=self.seq,
            version=self.seq,
            events=records,
            view=self.state,
            pending=self.pending(),
            deadline_at=time.time() + 75,
            at=time.time(),
        )
        await self.nc.publish(
            subjects.table_update(self.table_id), update.model_dump_json().encode()
        )

    async def _accept(self, msg: Msg) -> None:
        await msg.respond(
            CommandAccepted(seq=self.seq, version=self.seq, events=1).model_dump_json().encode()
        )

    async def act(self, seat: int, events: int = 1) -> int:
        """Somebody else (a bot, another player) acts at this table."""
        return await self.publish(
            *(TurnStarted(seat=seat, round=n + 1, deadline=75.0) for n in range(events))
        )

    async def _on_command(self, msg: Msg) -> None:
        command = TableCommand.model_validate_json(msg.data)
        self.received.append(command)
        if self.busy > 0:
            self.busy -= 1
            await msg.respond(error_reply(BUSY, "busy").model_dump_json().encode())
            return
        seat = command.command.seat if isinstance(command.command, Roll) else None
        if seat is None:
            seat = (
                self.players.index(command.player_id) if command.player_id in self.players else -1
            )
        if not 0 <= seat < len(self.players) or self.players[seat] != command.player_id:
            await msg.respond(
                error_reply("seat/not_yours", f"seat {seat} is not yours")
                .model_dump_json()
                .encode()
            )
            return
        if self.out_of_turn > 0:
            self.out_of_turn -= 1
            text = "that decision is not open now"
            await msg.respond(error_reply(TURN_WRONG_PHASE, text).model_dump_json().encode())
            return
        expected = command.expected_version
        if expected is not None and expected != self.seq:
            text = f"the table is at version {self.seq}, not {expected}"
            await msg.respond(error_reply(COMMAND_STALE, text).model_dump_json().encode())
            return
        while self.acts_before_command > 0:
            self.acts_before_command -= 1
            await self.act(1 - seat)
        await self.publish(
            DiceRolled(
                seat=seat, white=(1, 2), third=None, doubles=0, roll_again=False, x_jump=False
            ),
            reply=msg,
        )

    def view(self, seat: int | None) -> TableView:
        return TableView(
            table_id=self.table_id,
            seq=self.seq,
            version=self.seq,
            state=self.state,
            seats=[SeatSpec(player_id=p, bot=p.startswith("bot"), name=p) for p in self.players],
            legal=[Roll(seat=seat)] if seat is not None else None,
            pending=[] if self.views_without_pending else self.pending(),
            seed_commitment="0" * 64,
            deadline_at=time.time() + 75,
        )

    async def _on_view(self, msg: Msg) -> None:
        self.views_asked += 1
        request = ViewRequest.model_validate_json(msg.data)
        view = self.view(request.seat)
        await asyncio.sleep(self.view_delay)
        await msg.respond(view.model_dump_json().encode())


@dataclass
class FakeLobby:
    """Answers ``opolyx.lobby.cmd`` with what it was asked, and remembers every request."""

    nc: NatsClient
    received: list[dict[str, Any]] = field(default_factory=list)

    async def start(self) -> FakeLobby:
        await self.nc.subscribe(subjects.LOBBY_CMD, cb=self._on_request)
        await flush_in_order(self.nc)
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
            reply = LobbyReply(rooms=[], invite_code=f"asked-{body['type']}").model_dump()
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

    async def client(
        self, token: str | None = None, *, hello: bool = True, batched: bool = False
    ) -> WsClient:
        """A websocket, signed in with `token` unless `hello` is false; `batched` asks for
        batched frames (``?batch=1``), as the web client does."""
        url = f"{self.ws_url}?{BATCH_QUERY}" if batched else self.ws_url
        client = WsClient(await websockets.connect(url))
        if hello:
            assert token is not None
            reply = await client.request("hello", token=token)
            assert reply["ok"], reply
        return client


class WsClient:
    """A websocket client that keeps pushes apart from replies, and every frame as read."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self.socket = socket
        self.pushes: list[dict[str, Any]] = []
        self.replies: dict[Any, dict[str, Any]] = {}
        self.frames: list[list[dict[str, Any]]] = []
        """Each frame read, as its messages (one, or a batched frame's several)."""
        self._unread: deque[dict[str, Any]] = deque()
        self.next_id = 0

    async def send(self, kind: str, **fields: Any) -> int:
        self.next_id += 1
        await self.socket.send(json.dumps({"id": self.next_id, "type": kind, **fields}))
        return self.next_id

    async def send_raw(self, text: str | bytes) -> None:
        await self.socket.send(text)

    async def receive(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next message (of a batched frame, one at a time)."""
        if not self._unread:
            frame = frame_messages(await asyncio.wait_for(self.socket.recv(), timeout))
            self.frames.append(frame)
            self._unread.extend(frame)
        message = self._unread.popleft()
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
async def serve_gateway(
    settings: GatewaySettings, test_nats_url: str | None = None
) -> AsyncIterator[RunningGateway]:
    """The gateway on uvicorn configured exactly as `opolyx-gateway` runs it (its wrappers,
    no compression, the frame limit, no proxy headers), on a free loopback port; the test's
    own connection (`RunningGateway.nc`, fake tables and lobby) uses `test_nats_url`."""
    settings = settings.model_copy(update={"http": HttpSettings(host="127.0.0.1", port=0)})
    config = uvicorn_config(settings, create_app(settings))
    async with serve_on(config, test_nats_url or settings.nats.url) as running:
        yield running


@contextlib.asynccontextmanager
async def serve_on(config: uvicorn.Config, test_nats_url: str) -> AsyncIterator[RunningGateway]:
    """A gateway app on uvicorn with `config` (its port 0: a free one), once it is ready; the
    test's own NATS connection uses `test_nats_url`."""
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    nc = await nats.connect(test_nats_url)
    try:
        async with httpx.AsyncClient(base_url=base) as http:
            # NATS is reached in the background: wait until the gateway says it is ready
            deadline = time.monotonic() + 10
            while (await http.get("/readyz")).status_code != 200:
                assert time.monotonic() < deadline, "the gateway did not become ready"
                await asyncio.sleep(0.02)
            yield RunningGateway(base, f"ws://127.0.0.1:{port}/ws", http, nc)
    finally:
        await nc.drain()
        server.should_exit = True
        await asyncio.wait_for(task, 10)
