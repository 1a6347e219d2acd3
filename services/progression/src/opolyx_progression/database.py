"""The database engine and its migrations (SQLite by default, PostgreSQL in production).

`open_database(url)` creates the async engine and brings the schema up to date with
Alembic before anything else touches it; several instances starting at once on PostgreSQL
serialise on an advisory lock so exactly one runs each migration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = ["MIGRATIONS", "create_engine", "migrate", "open_database"]

MIGRATIONS = Path(__file__).parent / "migrations"
_MIGRATION_LOCK = 0x6F706F6C  # any constant: the key of the PostgreSQL advisory lock


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL is durable against a process kill (the case the crediting must survive);
    # only an OS crash can lose the last commits, and GAMES then redelivers them.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)


def _upgrade(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    command.upgrade(config, "head")


async def migrate(engine: AsyncEngine) -> None:
    """Apply every migration not yet applied (idempotent)."""
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade)


async def open_database(url: str) -> AsyncEngine:
    engine = create_engine(url)
    await migrate(engine)
    return engine
