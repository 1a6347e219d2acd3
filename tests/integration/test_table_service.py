"""The table service as real processes on a real nats-server: full games, kill -9, restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from typing import Any

from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError, NoKeysError
from opolyx_contracts.subjects import (
    DEFAULT_TABLE_PARTITIONS,
    TABLE_LEASES_BUCKET,
    TABLES_BUCKET,
    table_command,
    table_partition,
)
from opolyx_contracts.table import SeatSpec
from opolyx_testing import ServiceProcess, script_path
from opolyx_testing.chaos import owner_of
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import BotSeats, TableClient, check_contiguous

LEASE_TTL = 2.0

TAKEOVER_LEASE_TTL = 600.0
"""Seconds the leases live in the kill -9 test: far longer than any of its waits (60 s for a
game to finish), so the expiry cannot be what moves the killed instance's tables there; only
the liveness check can (`leases.py`: the killed instance's subject has "no responders")."""


def table_env(nats_url: str, instance: str, clock_rate: float = 1.0) -> dict[str, str]:
    return {
        "OPOLYX_NATS__URL": nats_url,
        "OPOLYX_INSTANCE_ID": instance,
        "OPOLYX_TABLE__LEASE_TTL": str(LEASE_TTL),
        "OPOLYX_TABLE__BOT_REASK": "1.0",
        "OPOLYX_TABLE__CLOCK_RATE": str(clock_rate),
    }


async def start_instance(
    processes: ServiceProcesses,
    server: NatsServer,
    instance: str,
    clock_rate: float = 1.0,
    **settings: str,
) -> ServiceProcess:
    """An instance of the table service, as NATS role "table" (`settings`: OPOLYX_TABLE__*)."""
    env = table_env(server.url_for("table"), instance, clock_rate)
    env.update({f"OPOLYX_TABLE__{name.upper()}": value for name, value in settings.items()})
    process = processes.start([script_path("opolyx-table")], env, name=instance)
    await process.wait_ready(timeout=30)
    return process


def bots(n: int) -> list[SeatSpec]:
    return [SeatSpec(player_id=f"bot-{i}", bot=True) for i in range(n)]


def humans(n: int) -> list[SeatSpec]:
    return [SeatSpec(player_id=f"human-{i}") for i in range(n)]


async def leases_held_by(nc: Client, instance: str) -> list[str]:
    kv = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)
    try:
        keys = await kv.keys()
    except NoKeysError:
        return []
    held = []
    for key in keys:
        with contextlib.suppress(KeyNotFoundError):
            entry = await kv.get(key)
            if key.startswith("p.") and entry.value == instance.encode():
                held.append(key)
    return held


async def shared_evenly(nc: Client, instances: list[str], timeout: float = 60) -> None:
    """Wait until each of `instances` holds its fair share of the partitions: from then on
    none is handed from one to another while they all live."""
    share = DEFAULT_TABLE_PARTITIONS // len(instances)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = [len(await leases_held_by(nc, instance)) for instance in instances]
        if held == [share] * len(instances):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the partitions were not shared out within {timeout} s: {held}")


def log_events(process: ServiceProcess) -> list[dict[str, Any]]:
    """The process's structured log lines (JSON), whatever else its output holds."""
    lines = []
    for text in process.log_path.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            line = json.loads(text)
            if isinstance(line, dict):
                lines.append(line)
    return lines


def command_ids(batches: list[Any]) -> list[str]:
    return [b.command_id for b in batches if b.command_id]


async def test_four_bots_play_a_classic_game_to_its_end_through_nats(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    await start_instance(service_processes, nats_server, "solo")
    client = TableClient(nc)
    # Garbage first: the service answers with errors and keeps serving.
    for body in (b"\x00\xff", b"{}", b'{"v":1,"command_id":"x","player_id":"y","command":[]}'):
        reply = json.loads((await nc.request(table_command("unknown"), body, timeout=5)).data)
        assert reply["ok"] is False and reply["error"]["code"]
    async with BotSeats(nc, client) as players:
        created = await client.create("classic", bots(4), seed=424242)
        finished = await client.wait_finished(created.table_id, timeout=150)
    batches = await client.read_events(created.table_id)
    last = check_contiguous(batches)
    assert finished.last_seq == last
    assert sorted(finished.placement) == [0, 1, 2, 3]
    assert finished.placement[0] == finished.winner
    ids = command_ids(batches)
    assert len(ids) == len(set(ids))
    # Every accepted answer is stored (a last one may be in flight when the game ends).
    assert set(players.accepted_ids) <= set(ids)
    assert len(ids) - len(players.accepted_ids) <= 1
    outs = await client.seats_out(created.table_id)
    assert sorted(o.seat for o in outs) == sorted(r.seat for r in finished.seats if not r.survived)
    assert batches[-1].events[-1].event.model_dump() == {
        "type": "seed_revealed",
        "seed": 424242,
        "seed_commitment": created.seed_commitment,
    }


async def test_kill_9_of_the_owner_moves_its_tables_to_the_other_instance(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    clock_rate = 50.0  # a 75 s turn timer runs out in 1.5 s of wall time
    # Heartbeats as often as at the usual TTL: the two instances share the partitions out
    # as fast as elsewhere; only the leases' expiry is out of the test's reach.
    instances = {
        name: await start_instance(
            service_processes, nats_server, name, clock_rate,
            lease_ttl=str(TAKEOVER_LEASE_TTL), heartbeat=str(LEASE_TTL / 3),
        )
        for name in ("left", "right")
    }  # fmt: skip
    # The tables below stay with their owner until the kill (no hand-over under way).
    await shared_evenly(nc, list(instances))
    client = TableClient(nc, timeout=2.0, retry_for=30.0)
    rng = random.Random(1)
    async with BotSeats(nc, client, delay=lambda: rng.uniform(0.002, 0.01)) as players:
        bot_table = await client.create("blitz", bots(4), seed=99)
        owner = await owner_of(nc, bot_table.table_id)
        # A table of idle humans in a partition of the same owner: only timers move it.
        idle_table = None
        for attempt in range(200):
            candidate = f"idle-{attempt}"
            if await owner_of(nc, candidate) == owner:
                idle_table = await client.create("blitz", humans(2), seed=5, table_id=candidate)
                break
        assert idle_table is not None
        await asyncio.sleep(0.8)
        answered_before_kill = players.answered
        instances[owner].kill()
        killed_at = time.time()
        finished = await client.wait_finished(bot_table.table_id, timeout=60)
        idle_finished = await client.wait_finished(idle_table.table_id, timeout=60)
    survivor = "right" if owner == "left" else "left"
    assert await owner_of(nc, bot_table.table_id) == survivor
    assert answered_before_kill > 0
    batches = await client.read_events(bot_table.table_id)
    assert check_contiguous(batches) == finished.last_seq
    ids = command_ids(batches)
    assert len(ids) == len(set(ids)), "no command applied twice"
    assert set(players.accepted_ids) <= set(ids), "no accepted command lost"
    assert any(b.at > killed_at for b in batches), "the game went on after the kill"
    # Why the survivor took over: it found the owner gone (its liveness subject had no
    # responders) and freed its leases, both tables' partitions among them. The leases would
    # have outlived every wait above (TAKEOVER_LEASE_TTL), so nothing else could move them.
    gone = [
        line for line in log_events(instances[survivor]) if line.get("event") == "instance_gone"
    ]
    # (Asked again once if a heartbeat listed the owner while it was being taken over.)
    assert {line.get("instance") for line in gone} == {owner}, instances[survivor].log_tail()
    freed = {key for line in gone for key in line.get("leases_freed", [])}
    for table_id in (bot_table.table_id, idle_table.table_id):
        assert f"p.{table_partition(table_id)}" in freed, (table_id, sorted(freed))
    idle_batches = await client.read_events(idle_table.table_id)
    check_contiguous(idle_batches)
    fired_after = [
        b for b in idle_batches if b.command and b.command.type == "timeout" and b.at > killed_at
    ]
    assert fired_after, "timers fired on the instance that took over"
    assert idle_finished.winner is not None


async def test_the_only_instance_restarts_and_games_and_timers_resume(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    clock_rate = 50.0
    first = await start_instance(service_processes, nats_server, "only", clock_rate)
    client = TableClient(nc, timeout=2.0, retry_for=30.0)
    rng = random.Random(2)
    async with BotSeats(nc, client, delay=lambda: rng.uniform(0.002, 0.01)) as players:
        bot_table = await client.create("blitz", bots(3), seed=7)
        idle_table = await client.create("blitz", humans(3), seed=8)
        await asyncio.sleep(0.5)
        assert first.terminate() == 0, first.log_tail()
        # SIGTERM hands the leases back at once: none waits for its TTL to run out.
        assert await leases_held_by(nc, "only") == []
        stopped_at = time.time()
        before = check_contiguous(await client.read_events(bot_table.table_id))
        await start_instance(service_processes, nats_server, "only", clock_rate)
        finished = await client.wait_finished(bot_table.table_id, timeout=60)
        idle_finished = await client.wait_finished(idle_table.table_id, timeout=60)
    batches = await client.read_events(bot_table.table_id)
    assert check_contiguous(batches) == finished.last_seq > before
    ids = command_ids(batches)
    assert len(ids) == len(set(ids))
    assert set(players.accepted_ids) <= set(ids)
    idle_batches = await client.read_events(idle_table.table_id)
    assert any(
        b.command and b.command.type == "timeout" and b.at > stopped_at for b in idle_batches
    )
    assert idle_finished.last_seq == check_contiguous(idle_batches)


async def test_kill_9_between_the_events_write_and_the_snapshot_write_loses_nothing(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    clock_rate = 50.0
    # A snapshot every 25 events and never on idling: between two snapshots, every batch
    # is an events write whose snapshot write has not happened.
    first = await start_instance(
        service_processes, nats_server, "first", clock_rate,
        snapshot_every="25", snapshot_idle="3600",
    )  # fmt: skip
    client = TableClient(nc, timeout=2.0, retry_for=30.0)
    kv = await nc.jetstream().key_value(TABLES_BUCKET)
    rng = random.Random(4)

    async def stored_and_snapshot(table_id: str) -> tuple[int, int]:
        last = await nc.jetstream().get_last_msg("TABLE_EVENTS", f"opolyx.table.{table_id}.events")
        entry = await kv.get(f"{table_partition(table_id)}.{table_id}")
        assert entry.value is not None
        return int(json.loads(last.data or b"{}")["last_seq"]), int(json.loads(entry.value)["seq"])

    async with BotSeats(nc, client, delay=lambda: rng.uniform(0.002, 0.01)) as players:
        created = await client.create("blitz", bots(3), seed=17)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            stored, snapshot = await stored_and_snapshot(created.table_id)
            # Kill well after a snapshot and well before the next one.
            if snapshot > 0 and 3 <= stored - snapshot <= 12:
                break
            await asyncio.sleep(0.002)
        first.kill()
        accepted_before_kill = list(players.accepted_ids)
        stored, snapshot = await stored_and_snapshot(created.table_id)
        assert 0 < snapshot < stored, "killed with events stored that the snapshot lacks"
        await start_instance(service_processes, nats_server, "second", clock_rate)
        finished = await client.wait_finished(created.table_id, timeout=90)
    batches = await client.read_events(created.table_id)
    assert check_contiguous(batches) == finished.last_seq > stored
    ids = command_ids(batches)
    assert len(ids) == len(set(ids)), "no command applied twice"
    assert set(accepted_before_kill) <= set(ids), "no command accepted before the kill lost"
    assert set(players.accepted_ids) <= set(ids)
