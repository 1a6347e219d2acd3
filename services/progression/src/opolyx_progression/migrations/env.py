"""Alembic environment: migrations run on a connection the service passes in.

The service calls `database.migrate(engine)`, which opens an async connection and runs
`command.upgrade` inside `run_sync` with that connection in `config.attributes`, so
migrations and the service use the same engine and URL (SQLite or PostgreSQL).
"""

from __future__ import annotations

from alembic import context
from opolyx_progression.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through opolyx_progression.database.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite alters tables by copying them; batch mode does that for later migrations.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
