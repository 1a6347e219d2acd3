"""Killed (SIGKILL) between the database commit and the GAMES ack, the service credits the
game exactly once: the restarted process gets the game again and only acknowledges it.
Real processes, real nats-server (as the progression role), SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from nats.aio.client import Client
from nats.js.api import ConsumerInfo
from opolyx_contracts.envelope import encode
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAMES_STREAM,
    table_events,
)
from opolyx_progression.database import create_engine
from opolyx_progression.schema import credited_games, game_credits, players
from opolyx_testing import script_path
from opolyx_testing.finished_games import two_player_game
from opolyx_testing.nats_server import NatsServer
from progression_builders import EventLog
from sqlalchemy import func, select

DURABLE = "progression"


def env(server: NatsServer, database_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **server.env_for("progression"),
        "OPOLYX_PROGRESSION__DATABASE_URL": database_url,
        "OPOLYX_PROGRESSION__DATA_DIR": str(tmp_path),
        "OPOLYX_PROGRESSION__OPERATOR__PORT": "-1",
        "OPOLYX_PROGRESSION__GAMES_ACK_WAIT_SECONDS": "1",
        **{f"OPOLYX_PROGRESSION__{k.upper()}": v for k, v in extra.items()},
    }


def is_stopped(pid: int) -> bool:
    """SIGSTOPped (state T in /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


async def wait_for(condition: Any, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_a_kill_between_commit_and_ack_credits_the_game_once(
    nats_server: NatsServer,
    admin: Client,
    database_url: str,
    tmp_path: Path,
    service_processes: Any,
) -> None:
    js = admin.jetstream()
    doomed = service_processes.start(
        [script_path("opolyx-progression")],
        env(nats_server, database_url, tmp_path, fault_stop_at="committed_before_ack"),
        name="progression",
    )
    await doomed.wait_ready(30)
    log = EventLog("g1").buy(0, 1).rent(1, 0, 500)
    game = two_player_game("g1", "ann", "ben").model_copy(update={"last_seq": log.last_seq})
    for batch in log.batches:
        await js.publish(table_events("g1"), encode(batch))
    await js.publish(GAME_FINISHED, encode(game))

    async def stopped() -> bool:
        assert doomed.running, doomed.log_tail()
        return is_stopped(doomed.pid)

    await wait_for(stopped, "the service to stop after its commit")
    doomed.kill()
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            assert await conn.scalar(select(func.count()).select_from(credited_games)) == 1
        info = await js.consumer_info(GAMES_STREAM, DURABLE)
        assert info.num_ack_pending == 1, "the kill came before the ack"

        restarted = service_processes.start(
            [script_path("opolyx-progression")],
            env(nats_server, database_url, tmp_path),
            name="progression",
        )
        await restarted.wait_ready(30)

        async def acknowledged() -> bool:
            info: ConsumerInfo = await js.consumer_info(GAMES_STREAM, DURABLE)
            return info.num_ack_pending == 0 and info.num_pending == 0

        await wait_for(acknowledged, "the redelivered game to be acknowledged")
        assert "game_already_credited" in restarted.log_tail(50_000)
        async with engine.connect() as conn:
            assert await conn.scalar(select(func.count()).select_from(credited_games)) == 1
            assert await conn.scalar(select(func.count()).select_from(game_credits)) == 2
            credited = await conn.scalar(
                select(players.c.games_credited).where(players.c.player_id == "ann")
            )
        assert credited == 1
    finally:
        await engine.dispose()
    assert nats_server.permission_violations() == []
