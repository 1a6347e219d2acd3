"""One table-service instance: the shell's parts wired together, started and stopped.

Two NATS connections: one carries commands, events and replies; the other only the
partition leases, renewed by their own task, so a renewal never waits behind commands in
a socket buffer or a subscription queue (with both on one connection, 300+ busy tables
made the heartbeat late enough to lose leases).
"""

from __future__ import annotations

import contextlib

import opolyx_rules
from nats.aio.client import Client
from nats.aio.subscription import Subscription
from opolyx_contracts.subjects import TABLE_CREATE, TABLE_LEASES_BUCKET
from opolyx_service import ensure_kv
from prometheus_client import CollectorRegistry

from opolyx_table.announce import Announcer
from opolyx_table.creation import Creation
from opolyx_table.handlers import Handlers
from opolyx_table.jobs import Jobs, Resume
from opolyx_table.leases import PartitionLeases
from opolyx_table.outbox import Outbox
from opolyx_table.partitions import Partitions
from opolyx_table.scheduler import Scheduler
from opolyx_table.settings import TableConfig
from opolyx_table.store import Storage
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = ["TableInstance"]


class TableInstance:
    def __init__(
        self,
        nc: Client,
        lease_nc: Client,
        storage: Storage,
        config: TableConfig,
        instance_id: str,
        registry: CollectorRegistry | None = None,
    ) -> None:
        registry = registry or CollectorRegistry()
        self.nc = nc
        self.lease_nc = lease_nc
        self.storage = storage
        self.config = config
        self.instance_id = instance_id
        self.registry = registry
        self.writer = Writer(storage, config)
        self.outbox = Outbox(nc, storage, config.partitions, registry)
        self.partitions = Partitions(nc, storage, self.writer, config.recent_commands, registry)
        self.scheduler = Scheduler(self._on_timer)
        self.jobs = Jobs(
            nc,
            self.writer,
            self.outbox,
            Announcer(storage, self.writer, self.outbox),
            self.scheduler,
            config,
            self.partitions.reload,
            self.partitions.drop,
            registry,
        )
        self.creation = Creation(
            nc, self.partitions, self.writer, config, str(opolyx_rules.RULES_VERSION)
        )
        self.handlers = Handlers(self.partitions, self.jobs, self.creation, config)
        self.partitions.on_message = self.handlers.on_partition_message
        self.partitions.on_loaded = self._on_loaded
        self.leases: PartitionLeases | None = None
        self._create_sub: Subscription | None = None

    @property
    def tables(self) -> dict[str, Table]:
        return self.partitions.tables

    @property
    def owned(self) -> set[int]:
        """The partitions this instance holds leases for."""
        return set(self.leases.owned) if self.leases is not None else set()

    @property
    def ready(self) -> bool:
        return (
            self.nc.is_connected
            and self.lease_nc.is_connected
            and self.leases is not None
            and self.leases.rounds > 0
        )

    async def start(self) -> None:
        self.scheduler.start()
        self._create_sub = await self.nc.subscribe(
            TABLE_CREATE, queue="table", cb=self.handlers.on_create
        )
        kv = await ensure_kv(
            self.lease_nc.jetstream(timeout=self.storage.timeout),
            TABLE_LEASES_BUCKET,
            ttl=self.config.lease_ttl,
            replicas=self.config.replicas,
        )
        self.leases = PartitionLeases(
            kv,
            self.instance_id,
            self.config.partitions,
            self.config.heartbeat_interval,
            self.partitions.acquire,
            self.partitions.release,
        )
        self.leases.start()

    async def stop(self) -> None:
        """Hand every partition back at once (another instance takes over), then stop."""
        if self._create_sub is not None:
            with contextlib.suppress(Exception):
                await self._create_sub.unsubscribe()
        if self.leases is not None:
            await self.leases.stop(release=True)
        await self.scheduler.stop()
        self.handlers.cancel()

    def _on_loaded(self, table: Table) -> None:
        self.jobs.enqueue(table, Resume())

    def _on_timer(self, table_id: str, job: object) -> None:
        table = self.partitions.tables.get(table_id)
        if table is None:
            return
        self.jobs.enqueue(table, job)  # type: ignore[arg-type]
