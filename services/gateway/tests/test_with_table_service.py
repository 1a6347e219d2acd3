"""The gateway in front of the real table service (its own process) on a real nats-server:
the view, the seat check, the rules' own refusals, and a reconnect that replays what was
missed, all through the websocket protocol."""

from __future__ import annotations

import json
from typing import Any

from gateway_builders import RunningGateway
from opolyx_contracts import subjects
from opolyx_contracts.table import CreateTable, SeatSpec
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer

ANSWERS = ("buy", "pay", "roll", "pass", "jackpot_decline", "bus", "teleport", "pay_bail")


def legal_of(push: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    return next((p["legal"] for p in push["pending"] if p["seat"] == seat), [])


async def create_table(gateway: RunningGateway, players: list[str]) -> str:
    body = CreateTable(
        mode="classic", seats=[SeatSpec(player_id=p, name=p) for p in players], seed=5
    )
    reply = await gateway.nc.request(
        subjects.TABLE_CREATE, body.model_dump_json().encode(), timeout=10
    )
    created = json.loads(reply.data)
    assert created["ok"], created
    return str(created["table_id"])


async def test_play_refusals_and_resume_against_the_real_table_service(
    gateway: RunningGateway, service_processes: object, nats_server: NatsServer
) -> None:
    table_proc = service_processes.start(  # type: ignore[attr-defined]
        [script_path("opolyx-table")],
        nats_server.env_for("table"),
        name="table",
    )
    await table_proc.wait_ready()
    token_a, alice = await gateway.sign_in("Alice")
    token_b, bob = await gateway.sign_in("Bob")
    table = await create_table(gateway, [alice, bob])
    a = await gateway.client(token_a)
    b = await gateway.client(token_b)
    watch_a = await a.request("table.watch", table=table)
    watch_b = await b.request("table.watch", table=table)
    assert (watch_a["data"]["seat"], watch_b["data"]["seat"]) == (0, 1)
    first = await a.push("table.state", table=table)
    first_b = await b.push("table.state", table=table)
    current = first["state"]["current_seat"]
    mover, waiter = (a, b) if current == 0 else (b, a)
    state = first if current == 0 else first_b
    assert state["state"]["pending"]["kind"] == "roll"
    other_seat = 1 - current

    # the one whose turn it is not: the rules refuse, with their own code
    early = await waiter.request("table.cmd", table=table, command={"type": "roll"})
    assert early["ok"] is False and "/" in early["error"]["code"]
    # naming the other seat: refused before it reaches the table
    stolen = await waiter.request(
        "table.cmd", table=table, command={"type": "roll", "seat": current}
    )
    assert stolen["error"]["code"] == "seat/not_yours"

    assert {"type": "roll", "seat": current} in legal_of(state, current)
    rolled = await mover.request("table.cmd", table=table, command={"type": "roll"})
    assert rolled["ok"], rolled
    pushed = await mover.push("table.update", table_id=table)
    assert pushed["last_seq"] == rolled["data"]["seq"]
    assert any(e["event"]["type"] == "dice_rolled" for e in pushed["events"])
    # the waiter got the very same update, without asking
    assert await waiter.push("table.update", table_id=table) == pushed

    # the waiter drops out, the game goes on, and a reconnect replays what was missed
    seen = watch_b["data"]["seq"] if waiter is b else watch_a["data"]["seq"]
    await waiter.close()
    state = pushed
    for _ in range(20):  # the mover answers its decisions until the turn passes
        pending = state["view"]["pending"]
        if pending is None or pending["seat"] == other_seat:
            break
        if pending["seat"] == current:
            choice = next(c for c in legal_of(state, current) if c["type"] in ANSWERS)
            assert (await mover.request("table.cmd", table=table, command=choice))["ok"]
        state = await mover.push("table.update", table_id=table, timeout=10)
    token = token_b if waiter is b else token_a
    back = await gateway.client(token)
    resumed = await back.request("table.watch", table=table, since=seen)
    assert resumed["data"]["replayed"] == resumed["data"]["seq"] - seen > 0
    replayed: list[int] = []
    while len(replayed) < resumed["data"]["replayed"]:
        replayed += [e["seq"] for e in (await back.push("table.events", table=table))["events"]]
    assert replayed == list(range(seen + 1, resumed["data"]["seq"] + 1))
    assert (await back.push("table.state", table=table))["seq"] == resumed["data"]["seq"]
