"""The gateway process as operators run it: through the service skeleton, without NATS yet."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import httpx
import pytest
from opolyx_testing import script_path
from opolyx_testing.ports import free_port

START_LIMIT = 60.0
"""Seconds the gateway process may take to serve HTTP: a second or two normally; 20 s ran
out on a fresh clone at load 15 (its first imports compile every module)."""


async def wait_http(client: httpx.AsyncClient, path: str) -> httpx.Response:
    deadline = time.monotonic() + START_LIMIT
    while True:
        try:
            return await client.get(path)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_without_nats_it_serves_not_ready_and_stops_on_a_signal(sig: signal.Signals) -> None:
    port = free_port()
    env = {
        **os.environ,
        "OPOLYX_NATS__URL": f"nats://127.0.0.1:{free_port()}",  # nothing listens there
        "OPOLYX_HTTP__PORT": str(port),
        "OPOLYX_LOG__LEVEL": "WARNING",
    }
    proc = subprocess.Popen([script_path("opolyx-gateway")], env=env)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            assert (await wait_http(client, "/livez")).status_code == 200
            ready = await client.get("/readyz")
            deadline = time.monotonic() + START_LIMIT
            while not ready.json()["checks"].get("started"):  # serving is a moment behind HTTP
                assert time.monotonic() < deadline, ready.json()
                await asyncio.sleep(0.05)
                ready = await client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json() == {
                "ready": False,
                "draining": False,
                "checks": {"started": True, "nats": False},
            }
            assert (await client.get("/api/board")).status_code == 200  # no NATS needed
            refused = await client.post("/api/session", json={"name": "Early"})
            assert refused.status_code == 503
            assert refused.json()["code"] == "service/unavailable"
        proc.send_signal(sig)
        # promptly: `wait` raises if the process is still running after 10 s
        assert await asyncio.to_thread(proc.wait, 10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
