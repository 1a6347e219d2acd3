"""In-process table-service instances on a real nats-server (fixture `nats_server`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import pytest
from nats.aio.client import Client
from opolyx_service.metrics import ServiceMetrics
from opolyx_table.instance import TableInstance
from opolyx_table.settings import TableConfig
from opolyx_table.store import Storage
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.table_client import TableClient
from prometheus_client import CollectorRegistry

StartTable = Callable[..., Awaitable[TableInstance]]

READY_LIMIT = 60.0
"""Seconds an instance may take to connect and finish its first lease round (a fraction of
a second here; far more only if something hangs, which then fails the test that started it)."""


@pytest.fixture
async def client_nc(nats_url: str) -> AsyncIterator[Client]:
    nc = await nats.connect(nats_url)
    yield nc
    await nc.drain()


@pytest.fixture
def client(client_nc: Client) -> TableClient:
    return TableClient(client_nc, timeout=3.0, retry_for=15.0)


@pytest.fixture
async def start_table(nats_server: NatsServer) -> AsyncIterator[StartTable]:
    """Start table-service instances in this process (as NATS role "table"); all are stopped
    after the test."""
    started: list[tuple[TableInstance, Client]] = []

    async def start(instance_id: str = "t1", **config: object) -> TableInstance:
        nc = await nats_server.connect("table", name=instance_id)
        # Bots are asked at once (no think time) unless a test sets `bot_pace`.
        settings = TableConfig.model_validate(
            {"lease_ttl": 2.0, "bot_reask": 1.0, "bot_pace": 0, **config}
        )
        storage = await Storage.open(nc, lease_ttl=settings.lease_ttl)

        def connect_leases() -> Awaitable[Client]:
            return nats_server.connect("table", name=f"{instance_id}-leases")

        registry = CollectorRegistry()  # the service's metrics, as the runtime wires them
        metrics = ServiceMetrics(registry, "table", instance_id)
        instance = TableInstance(
            nc, connect_leases, storage, settings, instance_id, registry, metrics
        )
        await instance.start()
        started.append((instance, nc))
        async with asyncio.timeout(READY_LIMIT):
            while not instance.ready:
                await asyncio.sleep(0.01)
        return instance

    yield start
    for instance, nc in reversed(started):
        await instance.stop()
        await nc.drain()
