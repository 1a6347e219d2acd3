"""A small HTTP endpoint for probes and scraping: /livez, /readyz, /metrics.

Plain asyncio (no web framework), so every service, even one without HTTP of its own,
gets the same probes. Readiness is the AND of named checks plus a draining flag set at
shutdown, so a load balancer stops sending work before the process stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

__all__ = ["HealthServer", "ReadinessCheck"]

ReadinessCheck = Callable[[], bool | Awaitable[bool]]


class HealthServer:
    def __init__(self, registry: CollectorRegistry, host: str = "127.0.0.1", port: int = 0):
        self._registry = registry
        self._host = host
        self._port = port
        self._checks: dict[str, ReadinessCheck] = {}
        self._server: asyncio.Server | None = None
        self.draining = False
        """Set at shutdown: readiness fails, liveness still passes."""

    def add_readiness_check(self, name: str, check: ReadinessCheck) -> None:
        self._checks[name] = check

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

    async def readiness(self) -> dict[str, bool]:
        """Every check's outcome. A service with no check registered yet is not ready:
        it registers its checks before it starts, so nothing is ready by default."""
        results: dict[str, bool] = {"draining": not self.draining}
        if not self._checks:
            results["checks_registered"] = False
        for name, check in self._checks.items():
            try:
                outcome = check()
                if isinstance(outcome, Awaitable):
                    outcome = await outcome
                results[name] = bool(outcome)
            except Exception:
                results[name] = False
        return results

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 5.0)
            while (await asyncio.wait_for(reader.readline(), 5.0)) not in (b"\r\n", b"\n", b""):
                pass
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
        if path in ("/livez", "/healthz"):
            return "200 OK", "application/json", b'{"status":"alive"}'
        if path == "/readyz":
            checks = await self.readiness()
            ready = all(checks.values())
            body = json.dumps({"ready": ready, "checks": checks}).encode()
            return ("200 OK" if ready else "503 Service Unavailable"), "application/json", body
        if path == "/metrics":
            return "200 OK", CONTENT_TYPE_LATEST, generate_latest(self._registry)
        return "404 Not Found", "application/json", b'{"error":"not found"}'
