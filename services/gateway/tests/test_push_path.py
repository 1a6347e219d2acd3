"""The push path's shortcuts give what the plain path gives: a live update's header read
from its first characters, and a push written without a task (or by the writer task when
the socket's transport makes it wait), in order."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace
from typing import Any

import pytest
from gateway_builders import KEYS
from opolyx_contracts.game import TurnStarted
from opolyx_contracts.table import EventRecord, PublicView, TableUpdate
from opolyx_gateway.pushes import UpdateHeader, read_update_header
from opolyx_gateway.settings import GatewayOptions
from opolyx_gateway.ws import ASGI_CHANNELS, ClientSession
from opolyx_rules import new_game, public_view
from pydantic import ValidationError


def an_update(first_seq: int = 7, last_seq: int = 8) -> TableUpdate:
    view = PublicView.model_validate(public_view(new_game("classic", 2, 3)))
    return TableUpdate(
        table_id="t-42_x",
        first_seq=first_seq,
        last_seq=last_seq,
        version=last_seq,
        events=[
            EventRecord(seq=s, version=s, event=TurnStarted(seat=0, round=1, deadline=75.0))
            for s in range(first_seq, last_seq + 1)
        ],
        view=view,
        pending=[],
        at=time.time(),
    )


def test_the_header_read_from_the_leading_characters_is_the_models() -> None:
    raw = an_update(7, 1234567).model_dump_json()
    assert raw.startswith('{"v":1,"table_id":"t-42_x","first_seq":7,"last_seq":1234567,')
    assert read_update_header(raw) == UpdateHeader.model_validate_json(raw)
    assert read_update_header(raw) == UpdateHeader(
        v=1, table_id="t-42_x", first_seq=7, last_seq=1234567
    )


def test_an_update_written_another_way_is_read_by_the_model() -> None:
    data = json.loads(an_update(3, 4).model_dump_json())
    reordered = json.dumps({"last_seq": 4, **data}, indent=1)
    assert read_update_header(reordered) == UpdateHeader(
        v=1, table_id="t-42_x", first_seq=3, last_seq=4
    )


@pytest.mark.parametrize(
    "raw",
    [
        '{"v":1,"table_id":"t","first_seq":1,"last_seq":2,"view":',  # cut short
        '{"v":1,"table_id":"t","first_seq":0,"last_seq":2}',  # no event 0
        '{"v":2,"table_id":"t","first_seq":1,"last_seq":2}',  # another contract version
        "[]",
    ],
)
def test_an_update_of_another_shape_is_refused(raw: str) -> None:
    with pytest.raises(ValidationError):
        read_update_header(raw)


class Transport:
    """The server's side of a socket: sends return at once unless it is paused."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.writable = asyncio.Event()
        self.writable.set()

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()  # as uvicorn's send does
        self.sent.append(message["text"])

    async def receive(self) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError


def a_session(transport: Transport) -> ClientSession:
    gateway: Any = SimpleNamespace(options=GatewayOptions(signing_keys=KEYS, send_queue_size=8))
    socket: Any = SimpleNamespace(
        scope={"type": "websocket", ASGI_CHANNELS: (transport.receive, transport.send)},
        query_params={},
    )
    return ClientSession(gateway, socket)


async def test_a_push_is_written_before_push_returns_when_the_socket_takes_it() -> None:
    transport = Transport()
    session = a_session(transport)
    session.push("one")
    assert transport.sent == ["one"]  # no task, no wait
    session.push("two")
    assert transport.sent == ["one", "two"]


async def test_pushes_wait_in_order_while_the_transport_is_paused() -> None:
    transport = Transport()
    session = a_session(transport)
    transport.writable.clear()
    for text in ("one", "two", "three"):
        session.push(text)
    await asyncio.sleep(0.01)
    assert transport.sent == []
    transport.writable.set()
    for _ in range(100):
        if len(transport.sent) == 3:
            break
        await asyncio.sleep(0.01)
    assert transport.sent == ["one", "two", "three"]
    session.push("four")  # the writer is done: straight out again
    assert transport.sent[-1] == "four"


async def test_a_paused_socket_that_falls_too_far_behind_is_closed() -> None:
    transport = Transport()
    session = a_session(transport)
    transport.writable.clear()
    for n in range(10):
        session.push(f"push {n}")
    assert session.closing is not None and session.closing[0] == 4408
    writer = session._writer
    assert writer is not None
    writer.cancel()  # a writer cancelled while it waits ends cleanly
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert transport.sent == []


async def test_a_push_that_fails_closes_its_socket_and_not_the_callers_loop() -> None:
    transport = Transport()

    async def broken(message: dict[str, Any]) -> None:
        raise ValueError("the server's send failed")

    transport.send = broken  # type: ignore[method-assign]
    session = a_session(transport)
    session.push("one")  # raises nothing into the feed pushing to every watcher
    assert session.closing == (1011, "internal error")
    writer = session._writer
    assert writer is not None
    writer.cancel()
