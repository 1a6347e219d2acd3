"""`opolyx-table`: run one table-service instance (configuration from OPOLYX_* variables)."""

from __future__ import annotations

from collections.abc import Awaitable

from nats.aio.client import Client
from opolyx_service import ServiceRuntime, connect_nats, get_logger, run_service
from opolyx_service.gc_policy import freeze_until_shutdown

from opolyx_table.instance import TableInstance
from opolyx_table.settings import TableSettings
from opolyx_table.store import Storage

log = get_logger("opolyx_table")


async def serve(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    assert isinstance(settings, TableSettings)
    config = settings.table
    # Registered before the first await: the probe must not pass before NATS is up.
    started: list[TableInstance] = []
    runtime.add_readiness_check("serving", lambda: bool(started) and started[0].ready)
    # Waits for NATS with backoff, adds a "nats" readiness check, drains at shutdown.
    nc = await runtime.connect_nats(name=f"table-{runtime.instance_id}")

    def connect_leases() -> Awaitable[Client]:
        # Called in the lease thread: a connection of its own, on that thread's loop.
        return connect_nats(settings.nats, f"table-{runtime.instance_id}-leases")

    storage = await Storage.open(
        nc,
        lease_ttl=config.lease_ttl,
        replicas=config.replicas,
        duplicate_window=config.duplicate_window,
        events_max_age=config.events_max_age,
    )
    instance = TableInstance(
        nc, connect_leases, storage, config, runtime.instance_id, runtime.registry, runtime.metrics
    )
    await instance.start()
    started.append(instance)
    # Registered last, so it runs first at shutdown: the leases go back at once.
    runtime.on_shutdown(instance.stop)
    log.info("table_service_started", partitions=config.partitions, lease_ttl=config.lease_ttl)
    freeze_until_shutdown(runtime, config.gc_freeze_seconds, config.gc_reclaim_seconds)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(TableSettings(), serve)


if __name__ == "__main__":
    main()
