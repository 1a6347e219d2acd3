"""A service whose NATS credentials are refused stops at once, non-zero, with one clear error
naming the user and never the password; retrying cannot fix credentials. Real processes of
real services (FastStream brokers: the lobby, the bots; plain nats-py: progression, the table,
chat; the gateway, which connects in the background of its HTTP app)
against the real nats-server with the roles' authorization. (An unreachable server is still
retried with backoff: tests/integration/test_service_skeleton.py.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses

WRONG_PASSWORD = "not-the-password-0f3a9c"
EXIT_BOUND = 60.0
"""Generous for a loaded machine; a process that retried would run until killed."""


def log_events(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            events.append(parsed)
    return events


@pytest.mark.parametrize(
    ("service", "role"),
    [
        ("opolyx-lobby", "lobby"),
        ("opolyx-progression", "progression"),
        ("opolyx-table", "table"),
        ("opolyx-bots", "bots"),
        ("opolyx-chat", "chat"),
        # connects in the background of its HTTP app, and must still stop
        ("opolyx-gateway", "gateway"),
    ],
)
async def test_refused_credentials_stop_the_service_with_one_error_naming_the_user(
    service: str,
    role: str,
    nats_server: NatsServer,
    service_processes: ServiceProcesses,
    tmp_path: Path,
) -> None:
    process = service_processes.start(
        [script_path(service)],
        env={
            "OPOLYX_NATS__URL": nats_server.plain_url,
            "OPOLYX_NATS__USER": role,
            "OPOLYX_NATS__PASSWORD": WRONG_PASSWORD,
            "OPOLYX_NATS__CONNECT_BACKOFF_INITIAL": "0.05",
            "OPOLYX_NATS__CONNECT_BACKOFF_MAX": "0.1",
            # progression keeps its database here (SQLite by default).
            "OPOLYX_PROGRESSION__DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'p.db'}",
        },
        name=service,
    )
    code = await asyncio.to_thread(process.wait, EXIT_BOUND)
    log = process.log_path.read_text(errors="replace")
    assert code is not None, f"{service} still running (retrying?):\n{log[-3000:]}"
    assert code != 0, log[-3000:]

    events = log_events(log)
    refused = [e for e in events if e.get("event") == "nats_authorization_failed"]
    assert len(refused) == 1, log[-3000:]
    assert refused[0]["user"] == role
    assert refused[0]["level"] == "error"
    assert not [e for e in events if e.get("event") == "nats_unreachable"]  # not retried
    assert WRONG_PASSWORD not in log
    assert "Traceback" not in log  # one clear line, not a stack trace
