"""Takeover without waiting for the lease TTL: a killed table instance's partitions move to
a live one as soon as its connection is gone (it no longer answers its liveness subject),
while an instance that is merely slow (stopped, but connected) keeps its leases.

The lease TTL here is 30 s, far longer than the waits: what moves a killed instance's
tables is the liveness question, never the expiry (that took the TTL and more before).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter

from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError
from opolyx_contracts.subjects import DEFAULT_TABLE_PARTITIONS, TABLE_LEASES_BUCKET
from opolyx_contracts.table import SeatSpec, TableCreated
from opolyx_testing import ServiceProcess, script_path
from opolyx_testing.chaos import owner_of
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient

LEASE_TTL = 30.0
"""Seconds: no test here waits that long, so the TTL cannot be what moves a table."""


async def start_instance(
    processes: ServiceProcesses, server: NatsServer, instance: str
) -> ServiceProcess:
    env = {
        "OPOLYX_NATS__URL": server.url_for("table"),
        "OPOLYX_INSTANCE_ID": instance,
        "OPOLYX_TABLE__LEASE_TTL": str(LEASE_TTL),
        "OPOLYX_TABLE__HEARTBEAT": "0.5",
        "OPOLYX_LOG__LEVEL": "INFO",
    }
    process = processes.start([script_path("opolyx-table")], env, name=instance)
    await process.wait_ready(timeout=60)
    return process


async def leases_settled(nc: Client, deadline: float) -> None:
    """Wait until "left" and "right" each hold their fair share of the partitions. Until
    then the one that started first hands one partition back per heartbeat: a lease it
    hands back just before the test stops it would be free, not its owner's, when the test
    looks (seen once in CI as `KeyNotFoundError` on the table's partition)."""
    kv = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)
    share = DEFAULT_TABLE_PARTITIONS // 2
    holders: Counter[bytes | None] = Counter()
    while time.monotonic() < deadline:
        holders = Counter()
        for p in range(DEFAULT_TABLE_PARTITIONS):
            try:
                entry = await kv.get(f"p.{p}")
            except Exception:
                holders[None] += 1
                continue
            holders[entry.value] += 1
        if holders == Counter({b"left": share, b"right": share}):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the partitions were never shared out evenly: {holders}")


async def two_instances_and_a_table(
    processes: ServiceProcesses, server: NatsServer, nc: Client
) -> tuple[dict[str, ServiceProcess], TableClient, TableCreated, str]:
    """Instances "left" and "right" sharing the partitions evenly, a new table, and its
    owner."""
    instances = {name: await start_instance(processes, server, name) for name in ("left", "right")}
    await leases_settled(nc, time.monotonic() + 60)
    client = TableClient(nc, timeout=2.0, retry_for=5.0)
    table = await client.create("classic", [SeatSpec(player_id="p0"), SeatSpec(player_id="p1")])
    return instances, client, table, await owner_of(nc, table.table_id)


async def test_a_killed_instance_is_taken_over_long_before_its_leases_expire(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    instances, client, table, owner = await two_instances_and_a_table(
        service_processes, nats_server, nc
    )
    survivor = "right" if owner == "left" else "left"
    before = await client.view(table.table_id)

    instances[owner].kill()
    killed = time.monotonic()
    # Far within the TTL: the survivor owns the partition and serves the table.
    while time.monotonic() - killed < LEASE_TTL / 3:
        with contextlib.suppress(KeyNotFoundError):  # freed, not claimed yet
            if await owner_of(nc, table.table_id, wait=0) == survivor:
                break
        await asyncio.sleep(0.05)
    owner_now = await owner_of(nc, table.table_id, wait=0)
    assert owner_now == survivor, instances[survivor].log_tail(3000)
    after = await TableClient(nc, timeout=2.0, retry_for=LEASE_TTL / 3).view(table.table_id)
    assert after["version"] == before["version"]
    assert "instance_gone" in instances[survivor].log_tail(20_000)


async def test_a_stopped_but_connected_instance_keeps_its_leases(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    instances, client, table, owner = await two_instances_and_a_table(
        service_processes, nats_server, nc
    )
    other = "right" if owner == "left" else "left"
    # Hung (its connections open, nothing answered): busy is not dead.
    instances[owner].send_signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(3.0)  # a dozen of the other's liveness checks
        assert await owner_of(nc, table.table_id, wait=0) == owner
    finally:
        instances[owner].send_signal(signal.SIGCONT)
    view = await client.view(table.table_id)
    assert view["version"] >= 0
    assert await owner_of(nc, table.table_id, wait=0) == owner
    assert "instance_gone" not in instances[other].log_tail(20_000)
    assert "lease_lost" not in instances[owner].log_tail(20_000)
