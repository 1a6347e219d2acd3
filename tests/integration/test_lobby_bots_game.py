"""A room of one human and bots, started through the lobby, plays to its end through the
table service and two bot worker processes; one worker is killed (SIGKILL) mid-game and
the game still finishes. Real nats-server, real processes for the table and the bots."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from nats.aio.client import Client
from opolyx_contracts.game import parse_command
from opolyx_contracts.subjects import table_command, table_view
from opolyx_contracts.table import TableCommand
from opolyx_lobby.app import LobbyApp
from opolyx_rules import awaiting, command_to_json, state_from_json
from opolyx_rules.commands import RejectOffer
from opolyx_rules.simulate import simple_policy
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer

from .lobby_steps import lobby

HUMAN = "hana"


async def view(nc: Client, table_id: str, seat: int) -> dict[str, Any]:
    msg = await nc.request(
        table_view(table_id), json.dumps({"v": 1, "seat": seat}).encode(), timeout=10
    )
    reply: dict[str, Any] = json.loads(msg.data)
    assert reply.get("ok"), reply
    return reply


async def start_services(server: NatsServer, service_processes: Any) -> list[Any]:
    """The table service and two bot workers as real processes, each as its own NATS role;
    returns the workers."""
    env = {"OPOLYX_LOG__LEVEL": "WARNING"}
    table = service_processes.start(
        [script_path("opolyx-table")],
        {
            **env,
            **server.env_for("table"),
            "OPOLYX_TABLE__BOT_REASK": "0.5",
            "OPOLYX_TABLE__LEASE_TTL": "3",
        },
        name="table",
    )
    bots_env = {**env, **server.env_for("bots")}
    workers = [
        service_processes.start([script_path("opolyx-bots")], bots_env, name=f"bots{i}")
        for i in range(2)
    ]
    for process in (table, *workers):
        await process.wait_ready(30)
    return workers


async def start_room_with_bots(nc: Client, mode: str = "blitz") -> str:
    """The human opens a public room, bots take the free seats after the wait, the human
    starts it; returns the table id."""
    created = await lobby(nc, type="create", player_id=HUMAN, name="Hana", mode=mode, seats=4)
    assert created["ok"], created
    room_id = created["room"]["room_id"]
    deadline = time.monotonic() + 10
    room: dict[str, Any] = created["room"]
    while len(room["members"]) < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        room = (await lobby(nc, type="get", player_id=HUMAN, room_id=room_id))["room"]
    assert [m["bot"] for m in room["members"]] == [False, True, True, True]
    started = await lobby(nc, type="start", player_id=HUMAN, room_id=room_id)
    assert started["ok"], started
    assert started["room"]["status"] == "started"
    return str(started["table_id"])


async def send(
    nc: Client, table_id: str, command: dict[str, Any], version: int | None
) -> dict[str, Any]:
    """A command as the human; `version=None` sends it whatever the table's version is."""
    msg = await nc.request(
        table_command(table_id),
        TableCommand(
            command_id=uuid.uuid4().hex,
            player_id=HUMAN,
            command=parse_command(command),
            expected_version=version,
        )
        .model_dump_json()
        .encode(),
        timeout=10,
    )
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


async def wait_until_free(nc: Client) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    mine: dict[str, Any] = {}
    while time.monotonic() < deadline:
        mine = await lobby(nc, type="mine", player_id=HUMAN)
        if mine["table_id"] is None and mine["room"] is None:
            break
        await asyncio.sleep(0.1)
    return mine


async def test_one_human_and_bots_play_to_the_end_even_when_a_bot_worker_dies(
    nats_server: NatsServer, nc: Client, lobby_app: LobbyApp, service_processes: Any
) -> None:
    workers = await start_services(nats_server, service_processes)
    table_id = await start_room_with_bots(nc)
    seat = 0  # the lobby seats members in room order; the table draws who starts

    killed_at: int | None = None
    version = 0
    deadline = time.monotonic() + 180
    finished = False
    while time.monotonic() < deadline:
        current = await view(nc, table_id, seat)
        version = current["version"]
        state = state_from_json(current["state"])
        if state.finished:
            finished = True
            break
        if killed_at is None and version >= 60:
            workers[0].kill()
            killed_at = version
        if seat in awaiting(state) and not state.seats[seat].out:
            to_me = [o for o in state.offers if o.to == seat]
            command = RejectOffer(seat, to_me[0].id) if to_me else simple_policy(state, seat)
            await send(nc, table_id, command_to_json(command), version)
        else:
            await asyncio.sleep(0.02)
    assert finished, f"game not finished by the deadline (version {version})"
    assert killed_at is not None and not workers[0].running
    assert version > killed_at + 50, "the game went on long after the worker died"

    # the GAMES stream frees the human: no room, no table, can play again at once
    mine = await wait_until_free(nc)
    assert mine["table_id"] is None and mine["room"] is None
    again = await lobby(nc, type="create", player_id=HUMAN, mode="classic", seats=2)
    assert again["ok"], again
    # Table, lobby and bots did all of it within their NATS roles.
    if nats_server.is_local_process:
        assert nats_server.permission_violations() == []


async def test_a_human_who_resigns_is_free_at_once_while_the_bots_play_on(
    nats_server: NatsServer, nc: Client, lobby_app: LobbyApp, service_processes: Any
) -> None:
    await start_services(nats_server, service_processes)
    table_id = await start_room_with_bots(nc, mode="classic")  # long enough to outlast us
    blocked = await lobby(nc, type="create", player_id=HUMAN, mode="classic", seats=2)
    assert blocked["error"]["code"] == "lobby/already_in_game"

    # Resigning is allowed in any state (R16), so it carries no expected version: the bots
    # keep moving, and a versioned resign could lose every race against them.
    current = await view(nc, table_id, 0)
    reply = await send(nc, table_id, {"type": "resign"}, None)
    assert reply["ok"], reply

    # opolyx.game.seat_out frees the player while the game goes on
    mine = await wait_until_free(nc)
    assert mine["table_id"] is None and mine["room"] is None
    assert not state_from_json((await view(nc, table_id, 0))["state"]).finished
    again = await lobby(nc, type="create", player_id=HUMAN, mode="classic", seats=2)
    assert again["ok"], again

    # the three bots finish the game on their own
    deadline = time.monotonic() + 150
    state = state_from_json(current["state"])
    while time.monotonic() < deadline and not state.finished:
        await asyncio.sleep(0.2)
        state = state_from_json((await view(nc, table_id, 0))["state"])
    assert state.finished and state.seats[0].out
    if nats_server.is_local_process:
        assert nats_server.permission_violations() == []
