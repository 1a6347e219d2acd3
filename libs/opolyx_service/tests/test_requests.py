"""`Requests` against a real nats-server with the roles' authorization: replies reach their
own request (matched by token, whatever order they come in), nobody listening is
`NoRespondersError`, no answer in time is `TimeoutError` and a late answer is dropped,
headers go through, and a request given up leaves nothing behind. `send` hands the same
outcomes to a waiter's callbacks, and only once the inbox is open."""

from __future__ import annotations

import asyncio

import nats.errors
import pytest
from nats.aio.msg import Msg
from opolyx_contracts.subjects import LOBBY_CMD, table_command
from opolyx_service import flush_in_order
from opolyx_service.requests import Requests
from opolyx_testing.nats_server import NatsServer


async def test_replies_reach_their_own_requests_in_any_order(nats_server: NatsServer) -> None:
    """As the gateway role (its replies may only come to `_INBOX.gateway.`), 20 requests at
    once; the responder answers them last first."""
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    held: list[Msg] = []

    async def hold_then_answer_backwards(msg: Msg) -> None:
        held.append(msg)
        if len(held) == 20:
            for each in reversed(held):
                await each.respond(b"re:" + each.data)

    await lobby.subscribe(LOBBY_CMD, cb=hold_then_answer_backwards)
    await flush_in_order(lobby)
    requests = Requests(gateway)
    try:
        answers = await asyncio.gather(
            *(requests.request(LOBBY_CMD, str(n).encode(), timeout=10) for n in range(20))
        )
        assert [a.data for a in answers] == [f"re:{n}".encode() for n in range(20)]
        assert len(requests) == 0
        assert nats_server.permission_violations() == []
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_nobody_listening_is_no_responders(nats_server: NatsServer) -> None:
    nc = await nats_server.connect("gateway")
    requests = Requests(nc)
    try:
        with pytest.raises(nats.errors.NoRespondersError):
            await requests.request(LOBBY_CMD, b"{}", timeout=10)
        assert len(requests) == 0
    finally:
        await nc.drain()


async def test_no_answer_in_time_is_a_timeout_and_a_late_answer_is_dropped(
    nats_server: NatsServer,
) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    late: list[Msg] = []
    answered_late = asyncio.Event()

    async def answer(msg: Msg) -> None:
        if msg.data == b"late":
            late.append(msg)  # answered once the requester has given up
            return
        if late:
            await late.pop().respond(b"too late")
            answered_late.set()
        await msg.respond(b"now")

    await lobby.subscribe(LOBBY_CMD, cb=answer)
    await flush_in_order(lobby)
    requests = Requests(gateway, granularity=0.02)
    try:
        with pytest.raises(nats.errors.TimeoutError):
            await requests.request(LOBBY_CMD, b"late", timeout=0.1)
        assert len(requests) == 0
        # The late answer goes out just before this one's: it must not be taken for it.
        answer_now = await requests.request(LOBBY_CMD, b"next", timeout=10)
        assert answered_late.is_set()
        assert answer_now.data == b"now"
        assert len(requests) == 0
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_headers_go_with_the_request(nats_server: NatsServer) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")

    async def echo_header(msg: Msg) -> None:
        await msg.respond((msg.headers or {}).get("traceparent", "none").encode())

    await lobby.subscribe(LOBBY_CMD, cb=echo_header)
    await flush_in_order(lobby)
    requests = Requests(gateway)
    try:
        traced = await requests.request(
            LOBBY_CMD, b"{}", timeout=10, headers={"traceparent": "00-abc-def-01"}
        )
        plain = await requests.request(LOBBY_CMD, b"{}", timeout=10)
        assert (traced.data, plain.data) == (b"00-abc-def-01", b"none")
    finally:
        await gateway.drain()
        await lobby.drain()


async def test_a_cancelled_request_leaves_nothing_waiting(nats_server: NatsServer) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")
    received = asyncio.Event()

    async def never_answer(msg: Msg) -> None:
        received.set()

    await lobby.subscribe(LOBBY_CMD, cb=never_answer)
    await flush_in_order(lobby)
    requests = Requests(gateway)
    try:
        waiting = asyncio.create_task(requests.request(LOBBY_CMD, b"{}", timeout=30))
        await received.wait()
        assert len(requests) == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert len(requests) == 0
    finally:
        await gateway.drain()
        await lobby.drain()


class Collected:
    """A `send` waiter that keeps what it was given."""

    def __init__(self, outcomes: asyncio.Queue[tuple[str, Msg | BaseException]], name: str):
        self.outcomes = outcomes
        self.name = name

    def done(self) -> bool:
        return False

    def set_result(self, result: Msg, /) -> None:
        self.outcomes.put_nowait((self.name, result))

    def set_exception(self, exception: BaseException, /) -> None:
        self.outcomes.put_nowait((self.name, exception))


async def test_send_hands_each_reply_or_timeout_to_its_own_waiter(
    nats_server: NatsServer,
) -> None:
    lobby = await nats_server.connect("lobby")
    gateway = await nats_server.connect("gateway")

    async def answer_all_but_silence(msg: Msg) -> None:
        if msg.data != b"silence":
            await msg.respond(b"re:" + msg.data)

    await lobby.subscribe(LOBBY_CMD, cb=answer_all_but_silence)
    await flush_in_order(lobby)
    requests = Requests(gateway, granularity=0.02)
    outcomes: asyncio.Queue[tuple[str, Msg | BaseException]] = asyncio.Queue()
    try:
        with pytest.raises(RuntimeError):
            requests.send(LOBBY_CMD, b"a", Collected(outcomes, "early"), timeout=10)
        await requests.open()
        requests.send(LOBBY_CMD, b"silence", Collected(outcomes, "silence"), timeout=0.1)
        for n in range(5):
            requests.send(LOBBY_CMD, str(n).encode(), Collected(outcomes, str(n)), timeout=10)
        nobody = table_command("no-such-table")  # the gateway's to send, nobody's to answer
        requests.send(nobody, b"x", Collected(outcomes, "nobody"), timeout=10)
        got = dict([await asyncio.wait_for(outcomes.get(), 10) for _ in range(7)])
        assert outcomes.empty()
        answers = [got[str(n)] for n in range(5)]
        assert [a.data if isinstance(a, Msg) else a for a in answers] == [
            f"re:{n}".encode() for n in range(5)
        ]
        assert isinstance(got["nobody"], Msg) and got["nobody"].headers
        assert got["nobody"].headers["Status"] == "503"  # no responders, as the server said
        assert isinstance(got["silence"], nats.errors.TimeoutError)
        assert len(requests) == 0
    finally:
        await gateway.drain()
        await lobby.drain()
