"""One table-service instance: the shell's parts wired together, started and stopped.

The partition leases are kept by a thread of their own with its own NATS connection
(`leases.LeaseKeeper`), so a renewal never waits behind commands in a socket buffer, a
subscription queue or the service's event loop (with everything on one loop and one
connection, 300+ busy tables made the heartbeat late enough to lose leases).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import opolyx_rules
from nats.aio.client import Client
from nats.aio.subscription import Subscription
from opolyx_contracts.subjects import TABLE_CREATE
from opolyx_contracts.table import TableEvents
from opolyx_service.metrics import ServiceMetrics
from prometheus_client import CollectorRegistry

from opolyx_table.announce import Announcer
from opolyx_table.creation import Creation
from opolyx_table.handlers import Handlers
from opolyx_table.jobs import BotReask, Deadline, Jobs, Resume
from opolyx_table.leases import LeaseKeeper
from opolyx_table.outbox import Outbox
from opolyx_table.partitions import TABLE_QUEUE, Partitions
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
        connect_leases: Callable[[], Awaitable[Client]],
        storage: Storage,
        config: TableConfig,
        instance_id: str,
        registry: CollectorRegistry | None = None,
        service_metrics: ServiceMetrics | None = None,
    ) -> None:
        registry = registry or CollectorRegistry()
        self.nc = nc
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
            service_metrics,
        )
        self.creation = Creation(
            nc, self.partitions, self.writer, config, str(opolyx_rules.RULES_VERSION)
        )
        self.handlers = Handlers(self.partitions, self.jobs, self.creation, config)
        self.partitions.on_message = self.handlers.on_partition_message
        self.partitions.on_loaded = self._on_loaded
        self.leases = LeaseKeeper(
            connect_leases,
            instance_id,
            config.partitions,
            config.lease_ttl,
            config.heartbeat_interval,
            config.replicas,
            self.partitions.acquire,
            self.partitions.release,
            check_interval=config.peer_check,
        )
        self._create_sub: Subscription | None = None

    @property
    def tables(self) -> dict[str, Table]:
        return self.partitions.tables

    @property
    def owned(self) -> set[int]:
        """The partitions this instance holds leases for."""
        return self.leases.owned

    @property
    def ready(self) -> bool:
        return self.nc.is_connected and self.leases.connected and self.leases.rounds > 0

    async def start(self) -> None:
        self.scheduler.start()
        self._create_sub = await self.nc.subscribe(
            TABLE_CREATE, queue=TABLE_QUEUE, cb=self.handlers.on_create
        )
        await self.leases.start()

    async def stop(self) -> None:
        """Hand every partition back at once (another instance takes over), then stop."""
        if self._create_sub is not None:
            with contextlib.suppress(Exception):
                await self._create_sub.unsubscribe()
        await self.leases.stop(release=True)
        await self.scheduler.stop()
        self.handlers.cancel()

    def _on_loaded(self, table: Table, stored: list[TableEvents]) -> None:
        self.jobs.enqueue(table, Resume(tuple(stored)))

    def _on_timer(self, table_id: str, job: object) -> None:
        table = self.partitions.tables.get(table_id)
        if table is None:
            return
        if isinstance(job, BotReask) and job.version != table.version:
            return  # answered long ago (the usual case): not worth a job
        if isinstance(job, Deadline) and job.superseded(table):
            return
        self.jobs.enqueue(table, job)  # type: ignore[arg-type]
