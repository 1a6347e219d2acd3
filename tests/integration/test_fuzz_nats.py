"""Property-based fuzzing of the subjects the table service and the bot workers listen on.

Real nats-server with authorization, the table service and a bot worker as real processes.
Random and hostile bodies (garbage bytes, wrong types, huge strings, deeply nested JSON,
unknown fields, forged player ids, another seat's command) go to a running table's command
subject (as the gateway), to the create subject (as the lobby) and onto the bots' decision
subject (as the table). Every reply is `ok` or a coded error that is not `internal/error`;
a refused command leaves the game where it was (same stored sequence and version); both
services stay up and still serve a good request at the end.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.errors import INTERNAL
from opolyx_contracts.subjects import (
    BOTS_CONSUMER,
    BOTS_DECIDE,
    BOTS_DECISIONS_STREAM,
    TABLE_CREATE,
    table_bot_command,
    table_command,
)
from opolyx_contracts.table import DecisionRequest, SeatSpec
from opolyx_rules import command_to_json, legal_commands, new_game, public_view
from opolyx_service import flush_in_order
from opolyx_testing import ServiceProcess, script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient

T = TypeVar("T")
CODE = re.compile(r"^[a-z_]+/[a-z_.]+$")
PLAYERS = ["alice", "bob"]
HOSTILE_IDS = ["", "bot-ada", "carol", "*", ">", "a.b", "x" * 300, "\u0430lice", "\x00", None, 7]
COMMAND_TYPES = ["roll", "buy", "decline", "end_turn", "pay_bail", "offer", "build", "resign"]
COMMAND_TYPES += ["timeout", "dance", ""]


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=5),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=4),
)


@st.composite
def game_command(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 4)) == 0:
        return draw(junk)
    body: dict[str, Any] = {"type": draw(st.sampled_from(COMMAND_TYPES))}
    for key in ("property", "amount", "to", "give", "take", "offer_id", "seat"):
        if draw(st.integers(0, 3)) == 0:
            body[key] = draw(junk)
    if draw(st.integers(0, 5)) == 0:
        body["unknown_field"] = draw(st.text(max_size=2000))
    return body


@st.composite
def command_body(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return draw(st.binary(max_size=2000))
    if kind == 1:
        return deep(draw(st.sampled_from([50, 500, 5000, 50_000]))).encode()
    if kind == 2:
        return json.dumps({"v": 1, "pad": "x" * draw(st.integers(10_000, 900_000))}).encode()
    if kind == 3:  # well formed, from either seat (one of them is forged for the turn)
        plausible = {
            "v": 1,
            "command_id": draw(st.uuids().map(str)),
            "player_id": draw(st.sampled_from(PLAYERS)),
            "command": {"type": draw(st.sampled_from(["roll", "end_turn", "buy", "decline"]))},
        }
        return json.dumps(plausible).encode()
    body: dict[str, Any] = {
        "v": draw(st.sampled_from([1, 1, 1, 2, "1", None])),
        "command_id": draw(st.one_of(st.uuids().map(str), junk)),
        "player_id": draw(st.one_of(st.sampled_from(PLAYERS + HOSTILE_IDS), junk)),
        "command": draw(game_command()),
    }
    if draw(st.booleans()):
        body["expected_version"] = draw(st.one_of(st.integers(-5, 50), junk))
    if draw(st.integers(0, 4)) == 0:
        body[draw(st.sampled_from(["seed", "seat", "bot", "admin", "x"]))] = draw(junk)
    if draw(st.integers(0, 6)) == 0:
        del body[draw(st.sampled_from(sorted(body)))]
    return json.dumps(body).encode()


@st.composite
def create_body(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.binary(max_size=2000))
    if kind == 1:
        return deep(draw(st.sampled_from([500, 50_000]))).encode()
    seat = st.one_of(
        st.fixed_dictionaries(
            {"player_id": st.sampled_from(PLAYERS + HOSTILE_IDS), "bot": st.booleans()}
        ),
        junk,
    )
    body: dict[str, Any] = {
        "v": draw(st.sampled_from([1, 1, 2, None])),
        "mode": draw(st.sampled_from(["classic", "blitz", "team", "chess", "", None, 3])),
        "seats": draw(st.one_of(st.lists(seat, max_size=9), junk)),
    }
    for key in ("seed", "table_id", "clock_rate", "room_id", "unknown"):
        if draw(st.integers(0, 3)) == 0:
            body[key] = draw(st.one_of(junk, st.text(max_size=200)))
    return json.dumps(body).encode()


def check_coded(raw: bytes) -> dict[str, Any]:
    reply = json.loads(raw)
    assert isinstance(reply, dict), reply
    if reply.get("ok") is True:
        return reply
    assert reply.get("ok") is False, reply
    code = reply["error"]["code"]
    assert CODE.match(code) and code != INTERNAL, reply
    assert reply["error"]["message"], reply
    return reply


async def start(
    processes: ServiceProcesses, server: NatsServer, script: str, role: str
) -> ServiceProcess:
    env = {"OPOLYX_LOG__LEVEL": "WARNING", **server.env_for(role)}
    process = processes.start([script_path(script)], env, name=role)
    await process.wait_ready(60)
    return process


def test_hostile_bodies_get_coded_answers_and_change_no_game(
    nats_server: NatsServer, service_processes: ServiceProcesses
) -> None:
    loop = asyncio.new_event_loop()

    def run(coroutine: Coroutine[Any, Any, T]) -> T:
        return loop.run_until_complete(coroutine)

    table = run(start(service_processes, nats_server, "opolyx-table", "table"))
    bots = run(start(service_processes, nats_server, "opolyx-bots", "bots"))
    gateway: Client = run(nats_server.connect("gateway"))
    lobby: Client = run(nats_server.connect("lobby"))
    as_table: Client = run(nats_server.connect("table"))
    admin: Client = run(nats_server.connect())
    seats = [SeatSpec(player_id=p) for p in PLAYERS]
    created = run(TableClient(lobby).create("classic", seats))
    table_id = created.table_id
    viewer = TableClient(admin)

    def position() -> tuple[int, int]:
        view = run(viewer.view(table_id))
        assert view["ok"], view
        return int(view["seq"]), int(view["version"])

    counts = {"accepted": 0, "refused": 0, "created": 0}
    try:

        @settings(
            max_examples=150,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(target=st.sampled_from(["command", "command", "create", "decide"]), data=st.data())
        def one_message(target: str, data: st.DataObject) -> None:
            if target == "decide":
                # Nobody answers a decision request: published as the table publishes them.
                run(as_table.publish(BOTS_DECIDE, data.draw(command_body())))
                return
            if target == "create":
                reply = check_coded(
                    run(lobby.request(TABLE_CREATE, data.draw(create_body()), timeout=10)).data
                )
                counts["created" if reply["ok"] else "refused"] += 1
                return
            before = position()
            raw = run(gateway.request(table_command(table_id), data.draw(command_body()), 10))
            reply = check_coded(raw.data)
            if reply["ok"]:
                counts["accepted"] += 1
            else:
                counts["refused"] += 1
                assert position() == before, f"a refused command changed the game: {reply}"

        one_message()
        assert counts["refused"] > 0

        # Both services are still up and serving.
        assert table.running and bots.running
        assert run(table.readiness())["ready"] and run(bots.readiness())["ready"]
        answered: list[dict[str, Any]] = []

        async def fake_table(msg: Msg) -> None:
            answered.append(json.loads(msg.data))
            await msg.respond(b'{"v": 1, "ok": true, "seq": 1, "version": 1, "events": 1}')

        run(admin.subscribe(table_bot_command("fuzz-ok"), cb=fake_table))
        run(flush_in_order(admin))
        run(as_table.publish(BOTS_DECIDE, good_decision_request()))

        async def until_answered() -> None:
            for _ in range(300):
                info = await admin.jetstream().consumer_info(BOTS_DECISIONS_STREAM, BOTS_CONSUMER)
                if answered and info.num_ack_pending == 0 and info.num_pending == 0:
                    return
                await asyncio.sleep(0.05)

        run(until_answered())
        assert [a["command_id"] for a in answered] == ["fuzz-ok:1:0"]
        info = run(admin.jetstream().consumer_info(BOTS_DECISIONS_STREAM, BOTS_CONSUMER))
        assert info.num_ack_pending == 0 and info.num_pending == 0  # nothing stuck
        print(f"\nfuzz: {counts}")
    finally:
        for connection in (gateway, lobby, as_table, admin):
            run(connection.close())
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
        loop.close()


def good_decision_request() -> bytes:
    """A valid request for a bot seat of a fresh game, to a subject the test answers."""
    state = new_game("classic", 2, 5, first_seat=0)
    request = DecisionRequest.model_validate(
        {
            "table_id": "fuzz-ok",
            "seat": 0,
            "player_id": "bot-esme",
            "command_subject": table_bot_command("fuzz-ok"),
            "command_id": "fuzz-ok:1:0",
            "version": 1,
            "attempt": 1,
            "state": public_view(state),
            "legal": [command_to_json(c) for c in legal_commands(state, 0)],
            "deadline_at": None,
        }
    )
    return request.model_dump_json().encode()
