"""The lifecycle every service shares: logs, tracing, metrics, probes, graceful shutdown.

    async def serve(runtime: ServiceRuntime) -> None:
        nc = await connect_nats(runtime.settings.nats, runtime.instance_id)
        runtime.health.add_readiness_check("nats", lambda: nc.is_connected)
        runtime.on_shutdown(nc.drain)
        ... start handlers ...
        await runtime.wait_for_shutdown()

    def main() -> None:
        run_service(MySettings(), serve)

On SIGTERM/SIGINT readiness turns false at once, then the shutdown hooks run in reverse
order of registration within `shutdown_grace` seconds; the process then exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry

from opolyx_service.health import HealthServer
from opolyx_service.logs import configure_logging, get_logger
from opolyx_service.settings import ServiceSettings
from opolyx_service.telemetry import configure_tracing

__all__ = ["ServiceRuntime", "run_service"]

S = TypeVar("S", bound=ServiceSettings)

log = get_logger("opolyx_service.runtime")


class ServiceRuntime:
    def __init__(self, settings: ServiceSettings, registry: CollectorRegistry | None = None):
        self.settings = settings
        self.instance_id = settings.resolved_instance_id()
        self.registry = registry or CollectorRegistry()
        self.health = HealthServer(self.registry, settings.http.host, settings.http.port)
        self._shutdown = asyncio.Event()
        self._hooks: list[Callable[[], Awaitable[Any]]] = []

    def on_shutdown(self, hook: Callable[[], Awaitable[Any]]) -> None:
        """Run `hook` at shutdown (hooks run last-registered first)."""
        self._hooks.append(hook)

    def request_shutdown(self) -> None:
        self.health.draining = True
        self._shutdown.set()

    @property
    def shutting_down(self) -> bool:
        return self._shutdown.is_set()

    async def wait_for_shutdown(self) -> None:
        await self._shutdown.wait()

    async def start(self) -> None:
        if self.settings.http.port >= 0:
            await self.health.start()
            log.info("health_endpoint", host=self.settings.http.host, port=self.health.port)

    async def stop(self) -> None:
        self.health.draining = True
        for hook in reversed(self._hooks):
            try:
                await asyncio.wait_for(hook(), self.settings.shutdown_grace)
            except Exception as exc:
                log.warning("shutdown_hook_failed", hook=repr(hook), error=repr(exc))
        self._hooks.clear()
        await self.health.stop()

    async def __aenter__(self) -> ServiceRuntime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def run_service(settings: S, serve: Callable[[ServiceRuntime], Awaitable[None]]) -> None:
    """Configure logs and tracing, then run `serve` until SIGTERM/SIGINT; exit cleanly."""
    configure_logging(settings.service_name, settings.log.level, settings.log.format)
    configure_tracing(
        settings.service_name, settings.telemetry.traces, settings.telemetry.otlp_endpoint
    )

    async def main() -> None:
        runtime = ServiceRuntime(settings)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, runtime.request_shutdown)
        async with runtime:
            log.info("service_starting", instance=runtime.instance_id)
            await serve(runtime)
        log.info("service_stopped", instance=runtime.instance_id)

    if settings.event_loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if settings.event_loop == "uvloop":
                raise
        else:
            uvloop.run(main())
            return
    asyncio.run(main())
