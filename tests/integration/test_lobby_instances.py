"""Two lobby processes side by side on one nats-server: the queue group spreads the
requests over both, and a crowd racing for the last seat of a room never over-fills it."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

from nats.aio.client import Client
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer

from .lobby_steps import lobby


def handled_commands(port: int) -> float:
    """Lobby commands this process received, from its Prometheus endpoint."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("faststream_received_messages_total{") and "lobby.cmd" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


async def test_two_lobby_processes_share_requests_and_never_overfill_the_last_seat(
    nats_server: NatsServer, nc: Client, service_processes: Any
) -> None:
    env = {**nats_server.env_for("lobby"), "OPOLYX_LOG__LEVEL": "WARNING"}
    lobbies = [
        service_processes.start([script_path("opolyx-lobby")], env, name=f"lobby{i}")
        for i in range(2)
    ]
    for process in lobbies:
        await process.wait_ready(30)

    for round_no in range(3):
        host = f"host{round_no}"
        created = await lobby(nc, type="create", player_id=host, mode="classic", seats=3)
        room_id = created["room"]["room_id"]
        await lobby(nc, type="join", player_id=f"early{round_no}", room_id=room_id)
        crowd = [f"p{round_no}-{i}" for i in range(12)]
        replies = await asyncio.gather(
            *(lobby(nc, type="join", player_id=p, room_id=room_id) for p in crowd)
        )
        winners = [p for p, r in zip(crowd, replies, strict=True) if r["ok"]]
        assert len(winners) == 1
        assert all(r["error"]["code"] == "lobby/room_full" for r in replies if not r["ok"])
        room = (await lobby(nc, type="get", player_id=host, room_id=room_id))["room"]
        assert len(room["members"]) == 3
        assert room["members"][-1]["player_id"] == winners[0]

    served = [handled_commands(p.http_port) for p in lobbies]
    assert all(count > 0 for count in served), served
