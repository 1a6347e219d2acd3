"""Property-based fuzzing of the websocket protocol against the real gateway and the real
table service (its own process) on a real nats-server with authorization.

Random and hostile messages from a signed-in player: bytes that are not JSON, JSON that is
not an object, nesting thousands deep, messages past the size limit, ids of every type and
size, unknown types and fields, unicode everywhere, bogus table ids and subjects, commands
for the other player's seat, out-of-range versions and sequences, tokens of somebody else
or forged. Every reply is ok or a coded error (never ``internal/error``), every message the
gateway sends reads as the contract's, the socket stays open (nothing here is a reason to
close it), and a refused message leaves the game where it was (same sequence and version).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

from gateway_builders import RunningGateway, WsClient, gateway_settings, serve_gateway
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opolyx_contracts import subjects
from opolyx_contracts.errors import INTERNAL
from opolyx_contracts.gateway import server_message_adapter
from opolyx_contracts.table import CreateTable, SeatSpec
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient

T = TypeVar("T")
CODE = re.compile(r"^[a-z_]+/[a-z_.]+$")
TYPES = ["hello", "ping", "lobby", "table.watch", "table.unwatch", "table.cmd", "table.cmd"]
TYPES += [
    "chat.watch",
    "chat.unwatch",
    "chat.post",
    "chat.mute",
    "chat.report",
    "chat.settings",
    "fly",
    "",
]
# every rules command but the two that end the game for good (valid, so they would apply)
COMMANDS = ["roll", "buy", "decline", "bid", "pass", "build", "sell", "mortgage", "unmortgage"]
COMMANDS += ["pay_bail", "pay", "jackpot", "jackpot_decline", "bus", "teleport", "offer"]
COMMANDS += ["accept", "reject", "cancel", "timeout", "dance", ""]
HOSTILE_TEXT = [
    "",
    "*",
    ">",
    "a.b",
    "t-1 ",
    "\uff21\uff22\uff23",
    "\u202eevil",
    "\x00",
    "💣" * 40,
    "x" * 300,
]

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**200),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(HOSTILE_TEXT),
    st.lists(st.integers(), max_size=5),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=4),
)
message_id = st.one_of(
    st.integers(-(2**70), 2**70), st.text(max_size=140), st.sampled_from(HOSTILE_TEXT), junk
)


def deep(depth: int) -> str:
    return '{"id": 1, "type": "ping", "x": ' + "[" * depth + "]" * depth + "}"


@st.composite
def game_command(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 5)) == 0:
        return draw(junk)
    command: dict[str, Any] = {"type": draw(st.sampled_from(COMMANDS))}
    for key in ("seat", "square", "amount", "numbers", "to", "give", "take", "offer_id"):
        if draw(st.integers(0, 3)) == 0:
            command[key] = draw(st.one_of(st.sampled_from([0, 1, 2, -1, 7, 2**40]), junk))
    return command


@st.composite
def client_message(draw: st.DrawFn, table_id: str, tokens: list[str]) -> str | bytes:
    kind = draw(st.integers(0, 20))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind == 1:
        return draw(st.text(max_size=300))
    if kind == 2:
        return deep(draw(st.sampled_from([199, 201, 999, 1001, 20_000])))
    if kind == 3:
        return json.dumps({"id": 9, "type": "ping", "pad": "x" * draw(st.integers(16_000, 90_000))})
    if kind == 4:
        return json.dumps(draw(st.one_of(junk, st.lists(junk, max_size=3))))
    if kind <= 8:  # well formed, so the paths past validation are exercised too
        plausible: dict[str, Any] = draw(
            st.sampled_from(
                [
                    {"type": "ping"},
                    {"type": "table.watch", "table": table_id},
                    {"type": "table.watch", "table": table_id, "since": draw(st.integers(0, 40))},
                    {"type": "table.unwatch", "table": table_id},
                    {"type": "table.cmd", "table": table_id, "command": {"type": "roll"}},
                    {
                        "type": "table.cmd",
                        "table": table_id,
                        "command": {"type": "roll", "seat": 1},
                    },
                    {"type": "lobby", "action": "list"},
                    {"type": "hello", "token": tokens[0]},
                ]
            )
        )
        return json.dumps({"id": draw(st.one_of(st.integers(), st.text(max_size=20))), **plausible})
    message: dict[str, Any] = {"id": draw(message_id), "type": draw(st.sampled_from(TYPES))}
    tables = st.one_of(st.just(table_id), st.sampled_from(["nope", "t" * 128, "a.b", ">"]), junk)
    fields: dict[str, st.SearchStrategy[Any]] = {
        "table": tables,
        "command": game_command(),
        "since": st.one_of(st.integers(-3, 60), st.integers(2**40, 2**80), junk),
        "expected_version": st.one_of(st.integers(-3, 60), junk),
        "token": st.one_of(
            st.sampled_from(tokens), st.sampled_from([t + "==" for t in tokens]), junk
        ),
        "action": st.one_of(st.sampled_from(["list", "create", "join", "start", "x"]), junk),
        "room": st.one_of(st.text(max_size=20), junk),
        "channel": st.one_of(st.sampled_from(["lobby", f"t_{table_id}", "r_x", "q_1"]), junk),
        "text": st.one_of(st.text(max_size=600), junk),
        "target": st.one_of(st.text(max_size=20), junk),
        "player_id": st.sampled_from(["g-victim", "bot-ada", "*"]),
    }
    for key in draw(st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True)):
        message[key] = draw(fields[key])
    if message["type"] == "table.cmd" and draw(st.booleans()):  # mostly well formed
        message.update(table=table_id, command=draw(game_command()))
    if draw(st.integers(0, 6)) == 0:
        del message[draw(st.sampled_from(sorted(message)))]
    return json.dumps(message, ensure_ascii=draw(st.booleans()))


def check(raw: str | bytes) -> dict[str, Any]:
    """A message from the gateway: the contract's shape; an error is coded, never internal."""
    server_message_adapter.validate_json(raw)
    message: dict[str, Any] = json.loads(raw)
    if message["type"] == "reply" and not message["ok"]:
        code = message["error"]["code"]
        assert CODE.match(code) and code != INTERNAL, message
        assert message["error"]["message"], message
    return message


def test_hostile_messages_get_coded_replies_and_change_no_game(
    nats_server: NatsServer, service_processes: ServiceProcesses
) -> None:
    loop = asyncio.new_event_loop()

    def run(coroutine: Coroutine[Any, Any, T]) -> T:
        return loop.run_until_complete(coroutine)

    table_proc = service_processes.start(
        [script_path("opolyx-table")],
        # game time at a hundredth of wall time: no deadline fires during the fuzz
        {
            "OPOLYX_LOG__LEVEL": "WARNING",
            "OPOLYX_TABLE__CLOCK_RATE": "0.01",
            **nats_server.env_for("table"),
        },
        name="table",
    )
    run(table_proc.wait_ready(60))
    # no rate limit in the way of the fuzz (the limits have tests of their own)
    serving = serve_gateway(
        gateway_settings(
            nats_server.url_for("gateway"),
            rate_per_second=10_000.0,
            rate_burst=10_000,
            rate_violations_before_close=1_000_000,
        ),
        nats_server.url,
    )
    gw: RunningGateway = run(serving.__aenter__())
    try:
        alice_token, alice = run(gw.sign_in("Alice"))
        bob_token, bob = run(gw.sign_in("Bob"))
        created = run(
            gw.nc.request(
                subjects.TABLE_CREATE,
                CreateTable(
                    mode="classic",
                    seats=[SeatSpec(player_id=p) for p in (alice, bob)],
                    seed=11,
                    autopilot=False,  # Bob is away all along: nobody plays for him
                )
                .model_dump_json()
                .encode(),
                timeout=10,
            )
        )
        table_id = json.loads(created.data)["table_id"]
        viewer = TableClient(gw.nc)
        client: WsClient = run(gw.client(alice_token))
        forged = alice_token[:-3] + "abc"
        tokens = [alice_token, bob_token, forged]

        def position() -> tuple[int, int]:
            view = run(viewer.view(table_id))
            assert view["ok"], view
            return int(view["seq"]), int(view["version"])

        async def exchange(raw: str | bytes) -> dict[str, Any]:
            """Send one message; every message until its one reply (pushes checked too)."""
            await client.socket.send(raw)
            while True:
                message = check(await asyncio.wait_for(client.socket.recv(), 15))
                if message["type"] == "reply":
                    return message

        counts = {"ok": 0, "refused": 0, "applied": 0}

        @settings(
            max_examples=200,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(data=st.data())
        def one_message(data: st.DataObject) -> None:
            raw = data.draw(client_message(table_id, tokens))
            before = position()
            reply = run(exchange(raw))
            after = position()
            if reply["ok"]:
                counts["ok"] += 1
                sent = json.loads(raw)
                if after != before:  # only an accepted command of this player may move it
                    assert sent["type"] == "table.cmd", (raw, reply)
                    counts["applied"] += 1
            else:
                counts["refused"] += 1
                assert after == before, f"a refused message changed the game: {raw!r} {reply}"

        one_message()
        assert counts["refused"] > 50 and counts["ok"] > 10, counts
        # the socket is still open and served, and so is a new one
        assert run(exchange('{"id": "end", "type": "ping"}'))["ok"]
        other: WsClient = run(gw.client(bob_token))
        assert run(other.request("table.watch", table=table_id))["data"]["seat"] == 1
        assert table_proc.running
        print(f"\nwebsocket fuzz: {counts}")
    finally:
        run(serving.__aexit__(None, None, None))
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
        loop.close()
