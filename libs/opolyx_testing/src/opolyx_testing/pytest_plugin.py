"""pytest fixtures for tests that need real infrastructure (registered via `pytest11`).

- `nats_server` / `nats_url`: a fresh nats-server with JetStream per test (~25 ms locally),
  with one NATS user per role as `make run` has (docs/NATS_PERMISSIONS.md): `nats_url` is the
  admin's (everything allowed); start a service as its role with `nats_server.url_for(role)`,
  `.env_for(role)` or `.settings_for(role)`, connect as a role with `await
  nats_server.connect(role)`, and check `nats_server.permission_violations()`.
- `nc`: a nats-py connection to it with the admin's credentials, drained after the test.
- `connect_as`: `await connect_as("gateway")` connects as that role (the admin without one),
  as `nats_server.connect` does, and drains the connection after the test.
- `postgres_server`: one PostgreSQL per session.
- `service_processes`: start service processes; all are killed after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from opolyx_testing.nats_server import ADMIN_ROLE, NatsServer, start_nats_server
from opolyx_testing.postgres import PostgresServer, start_postgres
from opolyx_testing.process import ServiceProcess


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    with start_nats_server(tmp_path / "nats") as server:
        yield server


@pytest.fixture
def nats_url(nats_server: NatsServer) -> str:
    return nats_server.url


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    yield client
    await client.drain()


ConnectAs = Callable[..., Awaitable[Client]]
"""`connect_as(role=ADMIN_ROLE, **nats_options)`: a connection to the test's nats-server."""


@pytest.fixture
async def connect_as(nats_server: NatsServer) -> AsyncIterator[ConnectAs]:
    clients: list[Client] = []

    async def connect(role: str = ADMIN_ROLE, **options: Any) -> Client:
        client = await nats_server.connect(role, **options)
        clients.append(client)
        return client

    yield connect
    for client in reversed(clients):
        if not client.is_closed:  # a test may have closed it itself
            await client.drain()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    with start_postgres(tmp_path_factory.mktemp("postgres")) as server:
        yield server


class ServiceProcesses:
    """Starts service processes for one test and kills whatever is still running after it."""

    def __init__(self, log_dir: Path) -> None:
        self._log_dir = log_dir
        self._started: list[ServiceProcess] = []

    def start(
        self, argv: Sequence[str], env: Mapping[str, str], name: str = "service"
    ) -> ServiceProcess:
        process = ServiceProcess(argv, env, self._log_dir, name=f"{name}-{len(self._started)}")
        self._started.append(process.start())
        return process

    def kill_all(self) -> None:
        for process in self._started:
            process.kill()


@pytest.fixture
def service_processes(tmp_path: Path) -> Iterator[ServiceProcesses]:
    processes = ServiceProcesses(tmp_path)
    try:
        yield processes
    finally:
        processes.kill_all()
