"""`flush_in_order` against a real nats-server (the lobby role's rights), through a recording
TCP relay: when it returns, the server has read everything queued before it, so a SUB is
on the wire ahead of the flush's PING (nats-py's own `flush` writes the PING first while
the SUB still waits in its buffer: the relay shows that too, so a nats-py that fixes its
order, or changes the internals the helper uses, is noticed here)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import LOBBY_CMD
from opolyx_service import flush_in_order
from opolyx_service.nats_auth import connect_options
from opolyx_service.settings import NatsSettings
from opolyx_testing.nats_server import NatsServer

SUB_LINE = f"SUB {LOBBY_CMD} ".encode()


class Relay:
    """Forwards one client's bytes to the server and back, keeping what the client sent."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.sent = bytearray()
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: bool
    ) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if record:
                    self.sent += data
                writer.write(data)
                await writer.drain()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._writers += (writer, up_writer)
        for task in (
            asyncio.create_task(self._pipe(reader, up_writer, record=True)),
            asyncio.create_task(self._pipe(up_reader, writer, record=False)),
        ):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Relay]:
        server = await asyncio.start_server(self._on_client, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            for writer in self._writers:
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()
            await server.wait_closed()


async def connect_through(relay: Relay, nats_server: NatsServer) -> Client:
    direct = nats_server.url_for("lobby")
    settings = NatsSettings(url=direct.replace(f":{relay.upstream_port}", f":{relay.port}"))
    return await nats.connect(servers=settings.servers, **connect_options(settings))


async def ignore(msg: Msg) -> None:
    del msg


async def sent_before_the_flush_returned(
    nats_server: NatsServer, flush: Callable[[Client], Awaitable[None]]
) -> bytes:
    """What the client had sent when `flush` returned, after a `subscribe`."""
    port = int(nats_server.plain_url.rsplit(":", 1)[1])
    async with Relay(port).running() as relay:
        nc = await connect_through(relay, nats_server)
        try:
            await nc.subscribe(LOBBY_CMD, cb=ignore)
            await flush(nc)
            return bytes(relay.sent)
        finally:
            await nc.close()


async def test_the_sub_is_on_the_wire_before_the_flush_returns(nats_server: NatsServer) -> None:
    sent = await sent_before_the_flush_returned(nats_server, flush_in_order)
    assert SUB_LINE in sent
    last_ping = sent.rindex(b"PING\r\n")
    assert sent.index(SUB_LINE) < last_ping, "the flush's PING went out after the SUB"
    assert nats_server.permission_violations() == []


async def test_nats_py_flush_alone_lets_its_ping_overtake_the_sub(
    nats_server: NatsServer,
) -> None:
    """Why the helper exists: if this starts failing, nats-py orders its flush itself and
    `flush_in_order` can become `Client.flush` again."""
    sent = await sent_before_the_flush_returned(nats_server, lambda nc: nc.flush())
    ping = sent.rindex(b"PING\r\n")
    assert SUB_LINE not in sent[:ping]


REPOSITORY = Path(__file__).resolve().parents[3]
AWAITED_FLUSH = re.compile(r"await\s+[\w.()]+\.flush\(")
"""An awaited `.flush(`: a NATS client's (a file's flush is not awaited)."""


def test_nothing_else_in_the_tree_awaits_client_flush() -> None:
    """The trap is easy to fall into again (a test written in stop 32 did, and lost a message
    in 2-8 runs of 100 under load): every caller goes through `flush_in_order`."""
    allowed = {
        REPOSITORY / "libs/opolyx_service/src/opolyx_service/flushing.py",  # the helper
        Path(__file__).resolve(),  # the demonstration above
    }
    sources = [
        path
        for top in ("libs", "services", "tests", "bench", "scripts", "deploy")
        for path in (REPOSITORY / top).rglob("*.py")
        if path not in allowed
    ]
    assert len(sources) > 100, f"the tree was not found under {REPOSITORY}"
    callers = [
        f"{path.relative_to(REPOSITORY)}:{n}"
        for path in sources
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if AWAITED_FLUSH.search(line)
    ]
    assert callers == [], "use opolyx_service.flush_in_order, not Client.flush"


async def test_a_connection_that_is_closed_is_refused_as_by_nats_py(
    nats_server: NatsServer,
) -> None:
    nc = await nats_server.connect("lobby")
    await nc.close()
    with pytest.raises(nats.errors.ConnectionClosedError):
        await flush_in_order(nc)
