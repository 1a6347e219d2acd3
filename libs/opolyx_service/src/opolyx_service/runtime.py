"""The lifecycle every service shares: settings, logs, tracing, metrics, probes, NATS, shutdown.

    async def serve(runtime: ServiceRuntime) -> None:
        broker = runtime.create_broker()
        register_handlers(broker)                 # typed FastStream handlers
        await runtime.start_broker(broker)         # waits for NATS with backoff
        await runtime.wait_for_shutdown()

    def main() -> None:
        run_service(MySettings(), serve)

What the runtime guarantees, for every service alike:
- `/livez`, `/readyz`, `/metrics` on `OPOLYX_HTTP__PORT` (see `health.py`); readiness
  includes a `started` check that passes only once `serve` reached `wait_for_shutdown`,
  plus a `nats` check for each connection made through the runtime.
- NATS unreachable at start: retried with backoff (`connection.wait_until_reachable`), not
  ready meanwhile, and a signal still stops the process at once. Credentials refused
  (authorization violation): one `nats_authorization_failed` error naming the user, exit 1.
- SIGTERM/SIGINT: readiness turns false (`"draining": true`) at once; if `serve` was still
  starting it is cancelled; then the shutdown hooks run last-registered first, each within
  `shutdown_grace` seconds; the process exits 0. An exception out of `serve` exits 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from faststream.nats import NatsBroker
from nats.aio.client import Client
from prometheus_client import CollectorRegistry

from opolyx_service.broker import create_broker, start_broker
from opolyx_service.connection import NatsAuthorizationFailed, connect_nats, wait_until_reachable
from opolyx_service.health import HealthServer, Readiness, ReadinessCheck
from opolyx_service.logs import configure_logging, get_logger
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.settings import ServiceSettings
from opolyx_service.tasks import cancel_and_wait
from opolyx_service.telemetry import configure_tracing

__all__ = ["ServiceRuntime", "run_service"]

S = TypeVar("S", bound=ServiceSettings)

log = get_logger("opolyx_service.runtime")


class ServiceRuntime:
    def __init__(self, settings: ServiceSettings, registry: CollectorRegistry | None = None):
        self.settings = settings
        self.instance_id = settings.resolved_instance_id()
        self.registry = registry or CollectorRegistry()
        self.metrics = ServiceMetrics(self.registry, settings.service_name, self.instance_id)
        self.readiness = Readiness()
        self.health = HealthServer(
            self.registry, settings.http.host, settings.http.port, self.readiness
        )
        self._serving = False
        self.readiness.add_check("started", lambda: self._serving)
        self.readiness.on_report = lambda report: self.metrics.ready.set(float(report.ready))
        self._shutdown = asyncio.Event()
        self._hooks: list[Callable[[], Awaitable[Any]]] = []

    # -- readiness and shutdown ---------------------------------------------------------

    def add_readiness_check(self, name: str, check: ReadinessCheck) -> None:
        self.readiness.add_check(name, check)

    def on_shutdown(self, hook: Callable[[], Awaitable[Any]]) -> None:
        """Run `hook` at shutdown (hooks run last-registered first)."""
        self._hooks.append(hook)

    def request_shutdown(self) -> None:
        self.readiness.draining = True
        self.metrics.draining.set(1)
        self._shutdown.set()

    @property
    def shutting_down(self) -> bool:
        return self._shutdown.is_set()

    @property
    def serving(self) -> bool:
        """True once `serve` finished starting (it awaits `wait_for_shutdown`)."""
        return self._serving

    async def wait_for_shutdown(self) -> None:
        """Say "started" (readiness) and wait until a shutdown is requested."""
        self._serving = True
        await self._shutdown.wait()

    # -- NATS ------------------------------------------------------------------------

    async def wait_for_nats(self) -> None:
        """Return once NATS is reachable (backoff, counted in `opolyx_nats_connect_attempts`)."""
        await wait_until_reachable(
            self.settings.nats, self._connection_name(), on_attempt=self._count_attempt
        )

    async def connect_nats(self, name: str | None = None, **options: Any) -> Client:
        """A plain nats-py connection (for a measured hot path): waits for NATS, adds a
        `nats` readiness check, and drains the connection at shutdown."""
        nc = await connect_nats(
            self.settings.nats,
            name or self._connection_name(),
            on_attempt=self._count_attempt,
            **options,
        )
        self.add_readiness_check("nats", lambda: bool(nc.is_connected))
        self.on_shutdown(nc.drain)
        return nc

    def create_broker(self, **options: Any) -> NatsBroker:
        """A FastStream broker with the service's settings, metrics and error replies."""
        return create_broker(self.settings, self.registry, **options)

    async def start_broker(self, broker: NatsBroker) -> None:
        """Wait for NATS, start the broker's handlers (known to the server on return), add
        a `nats` readiness check and stop the broker at shutdown."""
        await start_broker(broker)
        self.on_shutdown(broker.stop)
        self.add_readiness_check("nats", lambda: bool(broker.connection.is_connected))

    def _connection_name(self) -> str:
        return f"{self.settings.service_name}-{self.instance_id}"

    def _count_attempt(self, ok: bool) -> None:
        self.metrics.connect_attempts.labels("connected" if ok else "failed").inc()

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        if self.settings.http.port >= 0:
            await self.health.start()
            log.info("health_endpoint", host=self.settings.http.host, port=self.health.port)

    async def stop(self) -> None:
        self.request_shutdown()
        for hook in reversed(self._hooks):
            try:
                await asyncio.wait_for(hook(), self.settings.shutdown_grace)
            except Exception as exc:
                log.warning("shutdown_hook_failed", hook=repr(hook), error=repr(exc))
        self._hooks.clear()
        await self.health.stop()

    async def run(self, serve: Callable[[ServiceRuntime], Awaitable[None]]) -> int:
        """Run `serve` until it returns or a shutdown is requested; the exit code."""
        serving = asyncio.ensure_future(serve(self))
        shutdown = asyncio.ensure_future(self._shutdown.wait())
        try:
            await asyncio.wait({serving, shutdown}, return_when=asyncio.FIRST_COMPLETED)
            if not serving.done() and not self._serving:
                log.info("shutdown_while_starting")
                # Cancelled again while it runs on: a start waiting for an unreachable NATS
                # can lose one cancellation inside nats-py's `wait_for` (Python 3.11, see
                # `tasks.py`) and go on retrying until the grace ran out.
                await cancel_and_wait(serving, self.settings.shutdown_grace)
            try:
                await asyncio.wait_for(serving, self.settings.shutdown_grace)
            except asyncio.CancelledError:
                if not self.shutting_down:
                    raise
            except TimeoutError:
                log.warning("serve_did_not_return_in_time", grace=self.settings.shutdown_grace)
            except NatsAuthorizationFailed:
                return 1  # logged once where it was found (`nats_authorization_failed`)
            except Exception:
                log.exception("service_failed")
                return 1
            return 0
        finally:
            await cancel_and_wait(shutdown)

    async def __aenter__(self) -> ServiceRuntime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def run_service(settings: S, serve: Callable[[ServiceRuntime], Awaitable[None]]) -> None:
    """Configure logs and tracing, run `serve` until SIGTERM/SIGINT, exit with its code."""
    configure_logging(settings.service_name, settings.log.level, settings.log.format)
    configure_tracing(
        settings.service_name, settings.telemetry.traces, settings.telemetry.otlp_endpoint
    )

    async def main() -> int:
        runtime = ServiceRuntime(settings)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, runtime.request_shutdown)
        async with runtime:
            log.info("service_starting", instance=runtime.instance_id)
            code = await runtime.run(serve)
        log.info("service_stopped", instance=runtime.instance_id, code=code)
        return code

    code: int
    if settings.event_loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if settings.event_loop == "uvloop":
                raise
        else:
            code = uvloop.run(main())
            sys.exit(code)
    code = asyncio.run(main())
    sys.exit(code)
