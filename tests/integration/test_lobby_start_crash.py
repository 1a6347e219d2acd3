"""A lobby killed (SIGKILL) at any step of starting a game converges once restarted: the
room and the game agree, nobody is seated in a game they left, nobody is locked out of a
game they have no seat in. Real nats-server, real table-service and lobby processes.

The lobby's fault-injection setting (``OPOLYX_LOBBY__FAULT_STOP_AT``) makes it stop itself
(SIGSTOP) at a named step, so the test kills it exactly there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import NoKeysError
from opolyx_contracts.lobby import LobbyCommand, LobbyEvent, lobby_member_events
from opolyx_contracts.subjects import LOBBY_CMD, TABLE_CREATE, TABLES_BUCKET, table_view
from opolyx_lobby.starting import START_STEPS
from opolyx_service import flush_in_order
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer


async def lobby(nc: Client, timeout: float = 10, **fields: Any) -> dict[str, Any]:
    command = LobbyCommand.model_validate(fields)
    msg = await nc.request(LOBBY_CMD, command.model_dump_json().encode(), timeout=timeout)
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


def lobby_env(server: NatsServer, **lobby_settings: str) -> dict[str, str]:
    """A lobby process as NATS role "lobby"."""
    env = {
        **server.env_for("lobby"),
        "OPOLYX_LOG__LEVEL": "INFO",
        "OPOLYX_LOBBY__BOT_FILL_AFTER_SECONDS": "3600",
        "OPOLYX_LOBBY__FILL_CHECK_SECONDS": "0.2",
        "OPOLYX_LOBBY__START_RESUME_AFTER_SECONDS": "1.0",
        "OPOLYX_LOBBY__TABLE_CREATE_TIMEOUT_SECONDS": "2.0",
    }
    env.update({f"OPOLYX_LOBBY__{k.upper()}": v for k, v in lobby_settings.items()})
    return env


async def start_table(server: NatsServer, service_processes: Any) -> Any:
    env = {**server.env_for("table"), "OPOLYX_LOG__LEVEL": "WARNING"}
    table = service_processes.start([script_path("opolyx-table")], env, name="table")
    await table.wait_ready(30)
    return table


def is_stopped(pid: int) -> bool:
    """SIGSTOPped (state T in /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


async def wait_stopped(process: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.running:
            raise AssertionError(f"lobby exited instead of stopping:\n{process.log_tail()}")
        if is_stopped(process.pid):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"lobby never reached its fault step:\n{process.log_tail()}")


async def abandon(request: asyncio.Task[Any]) -> None:
    request.cancel()
    with contextlib.suppress(asyncio.CancelledError, NatsTimeoutError):
        await request


async def open_room(nc: Client) -> str:
    """alice's room with bob and one bot: ready to start."""
    created = await lobby(
        nc, type="create", player_id="alice", name="Alice", mode="classic", seats=3
    )
    assert created["ok"], created
    room_id = str(created["room"]["room_id"])
    assert (await lobby(nc, type="join", player_id="bob", name="Bob", room_id=room_id))["ok"]
    assert (await lobby(nc, type="add_bot", player_id="alice", room_id=room_id))["ok"]
    return room_id


async def room_once_settled(nc: Client, room_id: str, timeout: float = 30) -> dict[str, Any]:
    """The room once it no longer says "starting"."""
    deadline = time.monotonic() + timeout
    room: dict[str, Any] = {}
    while time.monotonic() < deadline:
        room = (await lobby(nc, type="get", player_id="alice", room_id=room_id))["room"]
        if room["status"] != "starting":
            return room
        await asyncio.sleep(0.1)
    raise AssertionError(f"room still starting after {timeout} s: {room}")


async def tables_of(nc: Client, room_id: str) -> list[str]:
    kv = await nc.jetstream().key_value(TABLES_BUCKET)
    try:
        keys = await kv.keys()
    except NoKeysError:
        return []
    prefix = f"t-{room_id.removeprefix('r-')}"
    return sorted({k.split(".", 1)[1] for k in keys if k.split(".", 1)[1].startswith(prefix)})


async def assert_room_and_game_agree(nc: Client, room_id: str, players: list[str]) -> str:
    """The room's table seats exactly the room's members; every player is in the game
    exactly when seated in it, and a player without a seat is free to play elsewhere."""
    room = (await lobby(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert room["status"] == "started", room
    table_id = str(room["table_id"])
    msg = await nc.request(table_view(table_id), b'{"v": 1}', timeout=10)
    view = json.loads(msg.data)
    assert view["ok"], view
    seated = [s["player_id"] for s in view["seats"]]
    assert seated == [m["player_id"] for m in room["members"]], (seated, room["members"])
    assert await tables_of(nc, room_id) == [table_id], "one start, one table"
    for player in players:
        mine = await lobby(nc, type="mine", player_id=player)
        if player in seated:
            assert mine["table_id"] == table_id, (player, mine)
        else:
            assert mine["table_id"] is None, (player, mine)
            own = await lobby(nc, type="create", player_id=player, mode="classic", seats=2)
            assert own["ok"], (player, own)
    return table_id


@pytest.mark.parametrize("step", START_STEPS)
async def test_a_lobby_killed_at_any_step_of_a_start_converges_after_restart(
    step: str, nats_server: NatsServer, nc: Client, service_processes: Any
) -> None:
    await start_table(nats_server, service_processes)
    doomed = service_processes.start(
        [script_path("opolyx-lobby")], lobby_env(nats_server, fault_stop_at=step), name="lobby"
    )
    await doomed.wait_ready(30)
    room_id = await open_room(nc)

    starting = asyncio.create_task(
        lobby(nc, timeout=30, type="start", player_id="alice", room_id=room_id)
    )
    await wait_stopped(doomed)
    doomed.kill()
    await abandon(starting)  # the killed lobby never answers

    told: list[LobbyEvent] = []

    async def on_member_event(msg: Msg) -> None:
        told.append(LobbyEvent.model_validate_json(msg.data))

    await nc.subscribe(lobby_member_events("bob"), cb=on_member_event)
    await flush_in_order(nc)
    restarted = service_processes.start(
        [script_path("opolyx-lobby")], lobby_env(nats_server), name="lobby"
    )
    await restarted.wait_ready(30)
    room = await room_once_settled(nc, room_id)
    assert room["status"] == "started", room
    table_id = await assert_room_and_game_agree(nc, room_id, ["alice", "bob"])
    # the members' clients are told the game started, whatever step the crash hit
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(e.type == "room_started" for e in told):
        await asyncio.sleep(0.05)
    assert [e.table_id for e in told if e.type == "room_started"][:1] == [table_id]
    # the room's members are in the game: they cannot leave the room or join another
    left = await lobby(nc, type="leave", player_id="bob", room_id=room_id)
    assert left["error"]["code"] == "lobby/room_started"
    # resending the start answers with the same table
    again = await lobby(nc, type="start", player_id="alice", room_id=room_id)
    assert again["ok"] and again["table_id"] == table_id


async def test_issue_scenario_tables_paused_lobby_killed_then_leave_join_and_start_again(
    nats_server: NatsServer, nc: Client, service_processes: Any
) -> None:
    """Tables paused, start sent, lobby killed -9, tables resumed, lobby restarted; then a
    member leaves, another joins and the creator starts (where the room lets them)."""
    table = await start_table(nats_server, service_processes)
    doomed = service_processes.start(
        [script_path("opolyx-lobby")], lobby_env(nats_server), name="lobby"
    )
    await doomed.wait_ready(30)
    room_id = await open_room(nc)
    create_sent = asyncio.Event()

    async def on_create(_: Msg) -> None:
        create_sent.set()

    await nc.subscribe(TABLE_CREATE, cb=on_create)
    await flush_in_order(nc)

    os.kill(table.pid, signal.SIGSTOP)
    try:
        starting = asyncio.create_task(
            lobby(nc, timeout=30, type="start", player_id="alice", room_id=room_id)
        )
        await asyncio.wait_for(create_sent.wait(), 10)
        doomed.kill()
    finally:
        os.kill(table.pid, signal.SIGCONT)
    await abandon(starting)

    restarted = service_processes.start(
        [script_path("opolyx-lobby")], lobby_env(nats_server), name="lobby"
    )
    await restarted.wait_ready(30)
    room = await room_once_settled(nc, room_id)

    left = await lobby(nc, type="leave", player_id="bob", room_id=room_id)
    joined = await lobby(nc, type="join", player_id="carl", name="Carl", room_id=room_id)
    if room["status"] == "open":  # only a room that reopened takes changes and a new start
        restart = await lobby(nc, type="start", player_id="alice", room_id=room_id)
        assert restart["ok"], restart
    else:
        assert left["error"]["code"] == "lobby/room_started"
        assert joined["error"]["code"] == "lobby/room_started"
    await assert_room_and_game_agree(nc, room_id, ["alice", "bob", "carl"])
