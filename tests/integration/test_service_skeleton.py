"""Every service started through the skeleton behaves alike when NATS cannot be reached:
it keeps retrying with backoff, says it is not ready (and not draining), and a signal stops
it promptly with exit code 0. Real processes of the real services."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest
from opolyx_testing import ServiceProcess, free_port, script_path
from opolyx_testing.pytest_plugin import ServiceProcesses

SERVICES = [
    "opolyx-table",
    "opolyx-lobby",
    "opolyx-bots",
    "opolyx-progression",
    "opolyx-gateway",
    "opolyx-chat",
]

GRACE = 60.0
"""Far above the exit bound below: a prompt exit is the signal handled, not a grace timeout."""
EXIT_BOUND = 30.0
START_BOUND = 120.0


async def failed_attempts(process: ServiceProcess) -> float:
    value = await process.metric("opolyx_nats_connect_attempts_total", 'outcome="failed"')
    return value or 0.0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("service", SERVICES)
async def test_a_service_without_nats_retries_is_not_ready_and_stops_on_a_signal(
    service: str, sig: signal.Signals, service_processes: ServiceProcesses, tmp_path: Path
) -> None:
    unreachable = f"nats://127.0.0.1:{free_port()}"  # nothing listens there
    process = service_processes.start(
        [script_path(service)],
        env={
            "OPOLYX_NATS__URL": unreachable,
            "OPOLYX_NATS__CONNECT_BACKOFF_INITIAL": "0.05",
            "OPOLYX_NATS__CONNECT_BACKOFF_MAX": "0.2",
            "OPOLYX_SHUTDOWN_GRACE": str(GRACE),
            # Progression opens its SQLite file before NATS: keep it out of the checkout.
            "OPOLYX_PROGRESSION__DATA_DIR": str(tmp_path),
        },
        name=service,
    )
    # Retrying: at least three failed attempts counted while the process keeps running.
    # (A generous bound, not a timing check: starting a process on a loaded machine is slow.)
    deadline = time.monotonic() + START_BOUND
    while time.monotonic() < deadline:
        assert process.running, process.log_tail()
        try:
            if await failed_attempts(process) >= 3:
                break
        except OSError:
            pass  # the health endpoint is not up yet
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"{service} did not retry:\n{process.log_tail()}")

    readiness = await process.readiness()
    assert readiness["ready"] is False
    assert readiness["draining"] is False
    assert False in readiness["checks"].values(), readiness  # says which part is not up
    status, _ = await process.get("/readyz")
    assert status == 503
    assert (await process.get("/livez"))[0] == 200

    process.send_signal(sig)
    code = await asyncio.to_thread(process.wait, EXIT_BOUND)
    assert code == 0, f"{service} exit code {code}:\n{process.log_tail()}"
    assert "nats_unreachable" in process.log_tail()
