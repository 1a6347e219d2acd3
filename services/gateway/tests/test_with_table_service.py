"""The gateway in front of the real table service (its own process) on a real nats-server:
the view, the seat check, the rules' own refusals, a reconnect that replays what was
missed, and a player brought up to date by a refused click after updates were lost, all
through the websocket protocol."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gateway_builders import RunningGateway
from opolyx_contracts import subjects
from opolyx_contracts.errors import COMMAND_STALE
from opolyx_contracts.game import Roll
from opolyx_contracts.refusals import OUT_OF_TURN
from opolyx_contracts.table import CreateTable, SeatSpec, TableCommand
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ConnectAs

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


@pytest.mark.parametrize("with_version", [False, True], ids=["web client", "with version"])
async def test_a_player_whose_updates_were_lost_catches_up_when_a_stale_click_is_refused(
    gateway: RunningGateway,
    service_processes: object,
    nats_server: NatsServer,
    connect_as: ConnectAs,
    with_version: bool,
) -> None:
    """Moves were stored and their updates never came: an owner killed between the events
    write and the publish loses them so, here nats-server drops every update the table
    sends. The player's next click, decided on the old state, is refused by the real table:
    sent without a version, as the web client sends every click, as out of turn; with the
    version it was decided on, as stale. That refusal alone brings the player the missed
    events and the state: no update, no turn timer."""
    table_proc = service_processes.start(  # type: ignore[attr-defined]
        [script_path("opolyx-table")], nats_server.env_for("table"), name="table"
    )
    await table_proc.wait_ready()
    signed_in = [await gateway.sign_in(name) for name in ("Alice", "Bob")]
    table = await create_table(gateway, [player for _, player in signed_in])
    sockets = [await gateway.client(token, batched=True) for token, _ in signed_in]
    for socket in sockets:
        assert (await socket.request("table.watch", table=table))["ok"]
    first, _ = [await socket.push("table.state", table=table) for socket in sockets]
    mover = first["state"]["current_seat"]
    assert {"type": "roll", "seat": mover} in legal_of(first, mover)

    nats_server.deny_publish("table", [subjects.table_update_wildcard()])
    # The mover rolls on another device (another gateway): stored, answered, never pushed.
    other_device = await connect_as("gateway")
    roll = TableCommand(command_id="other-device-1", player_id=signed_in[mover][1], command=Roll())
    answer = await other_device.request(
        subjects.table_command(table), roll.model_dump_json().encode(), timeout=10
    )
    stored = json.loads(answer.data)
    assert stored["ok"], stored
    assert stored["seq"] > first["seq"]

    # This socket still shows the roll, and the player clicks it.
    player = sockets[mover]
    version = {"expected_version": first["seq"]} if with_version else {}
    click = await player.request("table.cmd", table=table, command={"type": "roll"}, **version)
    refused = {COMMAND_STALE} if with_version else OUT_OF_TURN
    assert click["ok"] is False and click["error"]["code"] in refused, click
    missed: list[int] = []
    while len(missed) < stored["seq"] - first["seq"]:
        missed += [e["seq"] for e in (await player.push("table.events", table=table))["events"]]
    assert missed == list(range(first["seq"] + 1, stored["seq"] + 1))
    state = await player.push("table.state", table=table)
    assert state["seq"] == stored["seq"]
    assert state["state"]["pending"] != first["state"]["pending"]
    assert not [p for p in player.pushes if p["type"] == "table.update"]
    dropped = nats_server.permission_violations()
    assert dropped, "the table's updates were dropped"
    assert set(dropped) == {("table", "Publish", subjects.table_update(table))}
