"""Fixtures of the progression tests; lets them import ``progression_builders`` (pytest runs
with ``--import-mode=importlib``, which does not put this directory on ``sys.path``)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information
import pytest
from nats.aio.client import Client
from opolyx_contracts.subjects import (
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
    TABLE_EVENTS_STREAM,
    TABLE_EVENTS_SUBJECTS,
)
from opolyx_progression.database import open_database
from opolyx_service.connection import ensure_stream
from opolyx_testing.postgres import PostgresServer
from opolyx_testing.pytest_plugin import ConnectAs
from sqlalchemy.ext.asyncio import AsyncEngine

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


async def _fresh_postgres_database(server: PostgresServer) -> str:
    name = f"progression_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(server.dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return server.async_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test against a SQLite file and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'progression.sqlite3'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return await _fresh_postgres_database(server)


@pytest.fixture
async def admin(connect_as: ConnectAs) -> Client:
    """The admin's connection, with the two streams the service reads (made as the table
    service and the lobby make them)."""
    nc = await connect_as()
    js = nc.jetstream()
    await ensure_stream(js, TABLE_EVENTS_STREAM, [TABLE_EVENTS_SUBJECTS])
    await ensure_stream(js, GAMES_STREAM, [GAMES_STREAM_SUBJECTS])
    return nc


@pytest.fixture
async def gateway(connect_as: ConnectAs) -> Client:
    return await connect_as("gateway")


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = await open_database(database_url)
    yield engine
    await engine.dispose()
