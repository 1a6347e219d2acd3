"""Helpers of the chaos tests: services as real processes in their NATS roles, who owns a
table, and when the game moved again after a fault.

    table = await start_service(processes, server, "table", name="a",
                                env={"OPOLYX_INSTANCE_ID": "a"})
    table.kill(); killed_at = time.time()
    takeover = await first_batch_after(client, table_id, killed_at) - killed_at
    await restart(table)    # the same process again: same port, same environment
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping

from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError
from opolyx_contracts.subjects import TABLE_LEASES_BUCKET, table_partition

from opolyx_testing.nats_server import NatsServer
from opolyx_testing.process import ServiceProcess, script_path
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient

__all__ = ["QUIET", "first_batch_after", "owner_of", "restart", "start_service"]

QUIET = {"OPOLYX_LOG__LEVEL": "WARNING"}

SCRIPTS = {
    "table": "opolyx-table",
    "bots": "opolyx-bots",
    "lobby": "opolyx-lobby",
    "gateway": "opolyx-gateway",
}
"""The entry point of each role's service."""


async def start_service(
    processes: ServiceProcesses,
    server: NatsServer,
    role: str,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> ServiceProcess:
    """The service of `role` as a process with that role's credentials, once ready
    (`timeout` is generous: a Python service starts slowly on a busy machine)."""
    process = processes.start(
        [script_path(SCRIPTS[role])],
        {**QUIET, **server.env_for(role), **(env or {})},
        name=name or role,
    )
    await process.wait_ready(timeout)
    return process


async def restart(process: ServiceProcess, timeout: float = 120) -> ServiceProcess:
    """Kill `process` if it still runs and start it again (same port and environment)."""
    process.kill()
    process.start()
    await process.wait_ready(timeout)
    return process


async def owner_of(nc: Client, table_id: str, wait: float = 30) -> str:
    """The instance id holding the lease of the table's partition.

    Waits up to `wait` seconds while the partition has no owner: when instances start
    together one may claim beyond its fair share and hand a partition back, which leaves it
    unowned until another instance's next heartbeat claims it. With `wait=0` it looks once
    (KeyNotFoundError: nobody owns it now)."""
    kv = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)
    key = f"p.{table_partition(table_id)}"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        with contextlib.suppress(KeyNotFoundError):  # handed back, not claimed yet
            entry = await kv.get(key)
            if entry.value:
                return entry.value.decode()
        await asyncio.sleep(0.05)
    entry = await kv.get(key)
    assert entry.value is not None
    return entry.value.decode()


async def first_batch_after(
    client: TableClient, table_id: str, moment: float, timeout: float = 30
) -> float:
    """Wall time of the first batch stored after `moment` (waits for one to exist)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            later = [b.at for b in await client.read_events(table_id) if b.at > moment]
        except Exception:  # NATS restarting, JetStream recovering: look again
            later = []
        if later:
            return min(later)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no event stored within {timeout} s after the fault")
