"""What the gateway makes of its upstream replies (`Upstream.ask`, which the table view, the
trade preview, the lobby, chat and progression requests all go through), on a real
nats-server with the gateway's NATS role and a responder that answers as it is told."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts import subjects
from opolyx_contracts.envelope import encode, error_reply
from opolyx_contracts.gateway import UPSTREAM_BAD_REPLY, LobbyRequest, TableTradePreview
from opolyx_contracts.lobby import LobbyCommand
from opolyx_gateway.errors import GatewayError
from opolyx_gateway.upstream import Upstream
from opolyx_service import flush_in_order
from opolyx_testing.pytest_plugin import ConnectAs

Call = Callable[[Upstream], Awaitable[Any]]

CALLS: dict[str, tuple[str, Call]] = {
    "table view": (subjects.table_view("t1"), lambda up: up.table_view("t1", 0)),
    "trade preview": (
        subjects.table_trade_preview("t1"),
        lambda up: up.trade_preview(
            TableTradePreview(id=1, type="table.trade_preview", table="t1", to=1, give_cash=10),
            "p1",
        ),
    ),
    "lobby": (
        subjects.LOBBY_CMD,
        lambda up: up.lobby(LobbyRequest(id=1, type="lobby", action="list"), "p1", "Ann"),
    ),
}


class Responder:
    """Answers every request on a subject with the body it is given, and keeps the requests."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.answer = b""
        self.requests: list[bytes] = []

    async def serve(self, subject: str) -> None:
        async def on_request(msg: Msg) -> None:
            self.requests.append(msg.data)
            await msg.respond(self.answer)

        await self.nc.subscribe(subject, cb=on_request)
        await flush_in_order(self.nc)


@pytest.fixture
async def upstream(connect_as: ConnectAs) -> Upstream:
    return Upstream(await connect_as("gateway"), timeout=5.0)


@pytest.fixture
async def responder(connect_as: ConnectAs) -> Responder:
    return Responder(await connect_as())


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize(
    "answer",
    [b"not json", b"[1, 2]", b'{"ok": true, "seq": "many", "table_id": []}', b'{"ok": "maybe"}'],
    ids=["not json", "not an object", "wrong field types", "neither ok nor error"],
)
async def test_an_unreadable_reply_is_an_upstream_bad_reply(
    upstream: Upstream, responder: Responder, call: str, answer: bytes
) -> None:
    subject, make = CALLS[call]
    await responder.serve(subject)
    responder.answer = answer
    with pytest.raises(GatewayError) as raised:
        await make(upstream)
    assert raised.value.code == UPSTREAM_BAD_REPLY
    assert len(responder.requests) == 1


@pytest.mark.parametrize("call", CALLS)
async def test_a_refusal_keeps_the_services_own_code_and_message(
    upstream: Upstream, responder: Responder, call: str
) -> None:
    subject, make = CALLS[call]
    await responder.serve(subject)
    responder.answer = encode(error_reply("room/full", "the room is full"))
    with pytest.raises(GatewayError) as raised:
        await make(upstream)
    assert (raised.value.code, raised.value.message) == ("room/full", "the room is full")


async def test_a_lobby_command_goes_as_the_tokens_player_and_its_reply_is_read(
    upstream: Upstream, responder: Responder
) -> None:
    await responder.serve(subjects.LOBBY_CMD)
    responder.answer = b'{"v": 1, "ok": true, "table_id": "t9"}'
    result = await upstream.lobby(
        LobbyRequest(id=1, type="lobby", action="create", mode="classic", seats=4), "p1", "Ann"
    )
    assert result.table_id == "t9"
    sent = LobbyCommand.model_validate_json(responder.requests[0])
    assert (sent.type, sent.player_id, sent.name, sent.mode, sent.seats, sent.public) == (
        "create", "p1", "Ann", "classic", 4, True,
    )  # fmt: skip
