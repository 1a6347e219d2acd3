"""`opolyx-table`: run one table-service instance (configuration from OPOLYX_* variables)."""

from __future__ import annotations

from opolyx_service import ServiceRuntime, connect_nats, get_logger, run_service

from opolyx_table.engine import RulesEngine
from opolyx_table.service import TableService
from opolyx_table.settings import TableSettings
from opolyx_table.store import Storage

log = get_logger("opolyx_table")


async def serve(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    assert isinstance(settings, TableSettings)
    config = settings.table
    # Registered before the first await: the probe must not pass before NATS is up.
    started: list[TableService] = []
    runtime.health.add_readiness_check("serving", lambda: bool(started) and started[0].ready)
    nc = await connect_nats(settings.nats, name=f"table-{runtime.instance_id}")
    runtime.on_shutdown(nc.drain)
    storage = await Storage.open(
        nc,
        lease_ttl=config.lease_ttl,
        replicas=config.replicas,
        duplicate_window=config.duplicate_window,
        events_max_age=config.events_max_age,
    )
    service = TableService(
        nc, storage, RulesEngine(), config, runtime.instance_id, runtime.registry
    )
    await service.start()
    started.append(service)
    runtime.on_shutdown(service.stop)
    log.info("table_service_started", partitions=config.partitions, lease_ttl=config.lease_ttl)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(TableSettings(), serve)


if __name__ == "__main__":
    main()
