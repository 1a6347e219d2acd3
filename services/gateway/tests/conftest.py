"""Fixtures of the gateway tests: a real nats-server (opolyx_testing's ``nats_server``), the
gateway on a real uvicorn as NATS role "gateway", and a stand-in lobby. The harness itself is
``gateway_builders``; this puts the directory on ``sys.path`` so the tests import it, and
each other's helpers, by name (pytest runs with ``--import-mode=importlib``, which does not)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from opolyx_testing.nats_server import NatsServer

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from gateway_builders import FakeLobby, RunningGateway, gateway_settings, serve_gateway  # noqa: E402


@pytest.fixture
async def gateway(nats_server: NatsServer) -> AsyncIterator[RunningGateway]:
    """The gateway as NATS role "gateway"; the test's connection is the harness's admin."""
    settings = gateway_settings(nats_server.url_for("gateway"))
    async with serve_gateway(settings, nats_server.url) as running:
        yield running


@pytest.fixture
async def lobby(gateway: RunningGateway) -> FakeLobby:
    return await FakeLobby(gateway.nc).start()
