"""Probes and scraping, the same on every service: ``/livez``, ``/readyz``, ``/metrics``.

``HealthServer`` is plain asyncio (no web framework), so every service, even one without
HTTP of its own, gets the same probes. A service that already serves HTTP (the gateway)
mounts the same ``Readiness`` on its own routes and answers with ``readiness_response``.

Readiness is the AND of named checks, and false while draining (set at shutdown, so a load
balancer stops sending work before the process stops). The body always has the same shape:

    {"ready": false, "draining": false, "checks": {"nats": false}}

``draining`` is true only once shutdown has begun. Before a service registered any check it
is not ready (``checks`` is empty): nothing has said it can serve yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

__all__ = [
    "LIVENESS_PATH",
    "METRICS_PATH",
    "READINESS_PATH",
    "HealthServer",
    "Readiness",
    "ReadinessCheck",
    "ReadinessReport",
    "readiness_response",
]

LIVENESS_PATH = "/livez"
"""200 while the process runs its event loop (restart it when this fails)."""
READINESS_PATH = "/readyz"
"""200 when every readiness check passes and the service is not draining, else 503."""
METRICS_PATH = "/metrics"
"""Prometheus text format of the service's registry."""

ReadinessCheck = Callable[[], bool | Awaitable[bool]]


@dataclass(frozen=True)
class ReadinessReport:
    draining: bool
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return bool(self.checks) and all(self.checks.values()) and not self.draining

    def to_json(self) -> bytes:
        body = {"ready": self.ready, "draining": self.draining, "checks": self.checks}
        return json.dumps(body).encode()


class Readiness:
    """Named checks a service registers before it starts work, plus the draining flag."""

    def __init__(self) -> None:
        self._checks: dict[str, ReadinessCheck] = {}
        self.draining = False
        """Set at shutdown: readiness fails, liveness still passes."""
        self.on_report: Callable[[ReadinessReport], None] | None = None
        """Told every report (the runtime mirrors it in the `opolyx_service_ready` gauge)."""

    def add_check(self, name: str, check: ReadinessCheck) -> None:
        self._checks[name] = check

    async def report(self) -> ReadinessReport:
        results: dict[str, bool] = {}
        for name, check in self._checks.items():
            try:
                outcome = check()
                if isinstance(outcome, Awaitable):
                    outcome = await outcome
                results[name] = bool(outcome)
            except Exception:  # a broken check means "not ready", never a failed probe
                results[name] = False
        report = ReadinessReport(draining=self.draining, checks=results)
        if self.on_report is not None:
            self.on_report(report)
        return report


async def readiness_response(readiness: Readiness) -> tuple[int, bytes]:
    """HTTP status and JSON body of ``/readyz`` (for services with a web framework)."""
    report = await readiness.report()
    return (200 if report.ready else 503), report.to_json()


class HealthServer:
    def __init__(
        self,
        registry: CollectorRegistry,
        host: str = "127.0.0.1",
        port: int = 0,
        readiness: Readiness | None = None,
    ):
        self._registry = registry
        self._host = host
        self._port = port
        self.readiness = readiness or Readiness()
        self._server: asyncio.Server | None = None

    def add_readiness_check(self, name: str, check: ReadinessCheck) -> None:
        self.readiness.add_check(name, check)

    @property
    def draining(self) -> bool:
        return self.readiness.draining

    @draining.setter
    def draining(self, value: bool) -> None:
        self.readiness.draining = value

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets:
            return self._port
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 5.0)
            # Headers are read and dropped; a probe sends a handful, a bound keeps it cheap.
            for _ in range(100):
                line = await asyncio.wait_for(reader.readline(), 5.0)
                if line in (b"\r\n", b"\n", b""):
                    break
            parts = request_line.decode("latin-1").split()
            path = parts[1].split("?")[0] if len(parts) >= 2 else "/"
            status, content_type, body = await self._route(path)
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _route(self, path: str) -> tuple[str, str, bytes]:
        if path == LIVENESS_PATH:
            return "200 OK", "application/json", b'{"status":"alive"}'
        if path == READINESS_PATH:
            status, body = await readiness_response(self.readiness)
            text = "200 OK" if status == 200 else "503 Service Unavailable"
            return text, "application/json", body
        if path == METRICS_PATH:
            return "200 OK", CONTENT_TYPE_LATEST, generate_latest(self._registry)
        return "404 Not Found", "application/json", b'{"error":"not found"}'
