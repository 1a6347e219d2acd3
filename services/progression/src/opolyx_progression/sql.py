"""Small SQL helpers shared by the store modules (one spelling of upserts for both dialects)."""

from __future__ import annotations

from typing import Any

from opolyx_contracts.progression import RankName
from opolyx_rules.progression import rank_for_level
from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["insert_ignore", "rank_name", "upsert"]


def _insert(conn: AsyncConnection, table: Table) -> Any:
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_ignore(conn: AsyncConnection, table: Table, keys: list[str]) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO NOTHING` on SQLite and PostgreSQL alike."""
    return _insert(conn, table).on_conflict_do_nothing(index_elements=keys)


def upsert(conn: AsyncConnection, table: Table, keys: list[str], **updates: Any) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO UPDATE SET updates`; `updates` may use the returned
    statement's `excluded` through a callable taking it."""
    stmt = _insert(conn, table)
    values = {
        name: value(stmt.excluded) if callable(value) else value for name, value in updates.items()
    }
    return stmt.on_conflict_do_update(index_elements=keys, set_=values)


def rank_name(level: int) -> RankName:
    """The rank (R20) of a level, as the contract spells it."""
    return rank_for_level(level).value
