"""``opolyx-gateway``: the gateway on uvicorn, run by the service skeleton like every service.

`run_service` configures logs and tracing, owns SIGTERM/SIGINT and the shutdown order; the
gateway serves its probes (`/livez`, `/readyz`, `/metrics`) on its own HTTP port from the
skeleton's readiness and registry, so the skeleton's separate health listener stays off.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import uvicorn
from litestar import Litestar
from opolyx_service.connection import NatsAuthorizationFailed
from opolyx_service.gc_policy import freeze_until_shutdown
from opolyx_service.runtime import ServiceRuntime, run_service

from opolyx_gateway.app import create_app
from opolyx_gateway.serving import served
from opolyx_gateway.settings import GatewaySettings


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the service runtime has them."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def uvicorn_config(settings: GatewaySettings, app: Litestar) -> uvicorn.Config:
    return uvicorn.Config(
        served(app),
        host=settings.http.host,
        port=settings.http.port,
        ws="websockets-sansio",
        # No permessage-deflate: measured here (uvicorn's settings, 12-bit window, memLevel 5)
        # it costs 3.3 us per 78-byte reply and 21 us per 3.7 KB table.update frame, per
        # watcher, about 5% of the gateway's whole CPU budget per command for each watcher,
        # to save ~2.5 KB per update; every frame of a game is that small, so no threshold
        # pays (and each socket's zlib state costs memory).
        ws_per_message_deflate=False,
        # Up to this the gateway reads a message and answers it (too large: a coded reply);
        # past it the server closes the socket with 1009 before buffering more.
        ws_max_size=settings.gateway.max_frame_bytes,
        # The client's address is the gateway's to read (`trusted_proxies`, admission.py):
        # uvicorn's own proxy handling believes X-Forwarded-For from any loopback peer.
        proxy_headers=False,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(settings.shutdown_grace),
    )


async def serve(settings: GatewaySettings, runtime: ServiceRuntime) -> None:
    app = create_app(settings, runtime)
    server = _Server(uvicorn_config(settings, app))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()  # it failed to start: say why
                raise RuntimeError("the gateway's HTTP server stopped while starting")
            await asyncio.sleep(0.05)
        options = settings.gateway
        freeze_until_shutdown(runtime, options.gc_freeze_seconds, options.gc_reclaim_seconds)
        await _until_shutdown_or_refused(app, runtime)
    finally:
        server.should_exit = True
        await serving


async def _until_shutdown_or_refused(app: Litestar, runtime: ServiceRuntime) -> None:
    """Wait for a shutdown; raise at once if NATS refused the gateway's credentials (the
    skeleton then exits 1, like every other service)."""
    connecting: asyncio.Task[object] = app.state.connecting
    shutdown = asyncio.ensure_future(runtime.wait_for_shutdown())
    try:
        await asyncio.wait({shutdown, connecting}, return_when=asyncio.FIRST_COMPLETED)
        if connecting.done() and not connecting.cancelled():
            refused = connecting.exception()
            if isinstance(refused, NatsAuthorizationFailed):
                raise refused
        await shutdown
    finally:
        shutdown.cancel()


def main() -> None:
    settings = GatewaySettings()
    # The gateway's own port serves the probes; the skeleton opens no second listener.
    runtime_settings = settings.model_copy(
        update={"http": settings.http.model_copy(update={"port": -1})}
    )
    run_service(runtime_settings, lambda runtime: serve(settings, runtime))


if __name__ == "__main__":
    main()
