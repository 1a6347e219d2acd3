"""The worker: decision requests in, one legal command out to the table, over real NATS."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from bots_builders import request_for
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_bots.worker import BotsSection, BotsSettings, BotWorker, decide_for_request
from opolyx_contracts.subjects import BOTS_DECIDE
from opolyx_contracts.table import DecisionRequest
from opolyx_rules import (
    Roll,
    State,
    apply,
    awaiting,
    command_from_json,
    new_game,
    simple_policy,
)
from opolyx_service import flush_in_order
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer


def midgame(seed: int, steps: int) -> State:
    state = new_game("speed", 3, seed)
    for i in range(steps):
        if state.finished:
            break
        seat = awaiting(state)[0]
        state, _ = apply(state, simple_policy(state, seat), float(i + 1))
    return state


@pytest.mark.parametrize("seed", range(6))
def test_decisions_from_the_wire_form_are_legal_in_the_real_state(seed: int) -> None:
    state = midgame(seed, 40 + 37 * seed)
    seat = awaiting(state)[0]
    request = DecisionRequest.model_validate_json(request_for(state, seat).model_dump_json())
    command = decide_for_request(request, random.Random(seed))
    assert command is not None
    apply(state, command, 10_000.0)  # raises RulesError if it were illegal


async def test_two_workers_share_the_queue_and_exactly_one_answers_each_request(
    nats_server: NatsServer, nc: Client
) -> None:
    workers = [
        BotWorker(BotsSettings(nats=nats_server.settings_for("bots"), http=HttpSettings(port=-1)))
        for _ in range(2)
    ]
    for worker in workers:
        await worker.start()
    received: list[dict[str, Any]] = []

    async def table(msg: Msg) -> None:
        received.append(json.loads(msg.data))
        await msg.respond(
            json.dumps({"v": 1, "ok": True, "seq": 1, "version": 8, "events": 1}).encode()
        )

    await nc.subscribe("opolyx.table.3.t-1.bot", cb=table)
    await flush_in_order(nc)
    try:
        state = new_game("classic", 2, 5, first_seat=0)
        for attempt in range(1, 11):
            request = request_for(state, 0, attempt=attempt, version=attempt)
            await nc.publish(BOTS_DECIDE, request.model_dump_json().encode())
        for _ in range(100):
            if len(received) >= 10:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
    finally:
        for worker in workers:
            await worker.stop()
    assert len(received) == 10
    assert sorted(r["expected_version"] for r in received) == list(range(1, 11))
    for body in received:
        assert body["player_id"] == "bot-esme"
        assert body["command_id"] == f"t-1:{body['expected_version']}:0"
        assert command_from_json({"seat": 0, **body["command"]}) == Roll(0)


async def test_a_malformed_request_is_dropped_and_the_worker_keeps_serving(
    nats_server: NatsServer, nc: Client
) -> None:
    settings = BotsSettings(
        nats=nats_server.settings_for("bots"),
        http=HttpSettings(port=-1),
        bots=BotsSection(command_timeout_seconds=0.2),
    )
    worker = BotWorker(settings)
    await worker.start()
    received: list[dict[str, Any]] = []

    async def table(msg: Msg) -> None:
        received.append(json.loads(msg.data))
        await msg.respond(
            json.dumps({"v": 1, "ok": True, "seq": 1, "version": 8, "events": 1}).encode()
        )

    state = new_game("classic", 2, 5, first_seat=0)
    try:
        # no table answers yet: the decision is made, sending it times out quietly
        assert await worker.handle(request_for(state, 0)) == "unanswered"
        await nc.subscribe("opolyx.table.3.t-1.bot", cb=table)
        await flush_in_order(nc)
        await nc.publish(BOTS_DECIDE, b"{broken")
        await nc.publish(BOTS_DECIDE, b'{"v": 1, "table_id": "t"}')
        await nc.publish(BOTS_DECIDE, request_for(state, 0, version=9).model_dump_json().encode())
        for _ in range(200):
            if received:
                break
            await asyncio.sleep(0.02)
    finally:
        await worker.stop()
    assert [body["expected_version"] for body in received] == [9]


async def test_a_human_seat_on_autopilot_gets_a_legal_move_and_no_bot_sticker(
    nats_server: NatsServer, nc: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = midgame(3, 25)
    seat = awaiting(state)[0]
    request = request_for(state, seat).model_copy(update={"player_id": "ines"})
    command = decide_for_request(request, random.Random(1))  # no persona: balanced style
    assert command is not None
    apply(state, command, 10_000.0)
    worker = BotWorker(
        BotsSettings(
            nats=nats_server.settings_for("bots"),
            http=HttpSettings(port=-1),
            bots=BotsSection(command_timeout_seconds=0.2),
        )
    )
    seen: list[DecisionRequest] = []
    monkeypatch.setattr(worker.stickers, "seen", seen.append)
    await worker.start()
    try:
        assert await worker.handle(request) == "unanswered"  # no table answers here
        assert await worker.handle(request_for(state, seat)) == "unanswered"
    finally:
        await worker.stop()
    assert [r.player_id for r in seen] == ["bot-esme"], "stickers only for a bot's own seat"


async def test_a_command_the_table_did_not_run_is_sent_again_and_a_refusal_is_not(
    nats_server: NatsServer, nc: Client
) -> None:
    """`service/busy` and `table/not_owner` mean the command did not run: the worker sends
    the same command id again after `retry_delay_seconds` (the table's re-ask would come
    only after seconds). A final refusal (a stale version) is not sent again."""
    worker = BotWorker(
        BotsSettings(
            nats=nats_server.settings_for("bots"),
            http=HttpSettings(port=-1),
            bots=BotsSection(retry_delay_seconds=0.05),
        )
    )
    await worker.start()
    received: list[dict[str, Any]] = []
    first_answers = {1: "service/busy", 2: "table/not_owner", 3: "command/stale_version"}

    async def table(msg: Msg) -> None:
        body = json.loads(msg.data)
        version = body["expected_version"]
        first = not any(r["expected_version"] == version for r in received)
        received.append(body)
        if first:
            error = {"code": first_answers[version], "message": "not now"}
            await msg.respond(json.dumps({"v": 1, "ok": False, "error": error}).encode())
        else:
            reply = {"v": 1, "ok": True, "seq": version, "version": version, "events": 1}
            await msg.respond(json.dumps(reply).encode())

    await nc.subscribe("opolyx.table.3.t-1.bot", cb=table)
    await flush_in_order(nc)
    try:
        state = new_game("classic", 2, 5, first_seat=0)
        for version in first_answers:
            request = request_for(state, 0, version=version)
            await nc.publish(BOTS_DECIDE, request.model_dump_json().encode())
        for _ in range(250):
            if len(received) >= 5:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # a wrong resend of the refused one would come by now
    finally:
        await worker.stop()
    sent = sorted((r["expected_version"], r["command_id"]) for r in received)
    assert sent == [
        (1, "t-1:1:0"),
        (1, "t-1:1:0"),
        (2, "t-1:2:0"),
        (2, "t-1:2:0"),
        (3, "t-1:3:0"),
    ]
