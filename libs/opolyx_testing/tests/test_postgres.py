import shutil
import subprocess

import pytest
from opolyx_testing import PostgresServer
from opolyx_testing.docker import docker_available
from opolyx_testing.postgres import find_pg_bin

needs_postgres = pytest.mark.skipif(
    find_pg_bin() is None and not docker_available(),
    reason="neither a Docker engine nor PostgreSQL binaries (apt-get install postgresql)",
)


@needs_postgres
def test_postgres_server_accepts_queries_with_its_credentials(
    postgres_server: PostgresServer,
) -> None:
    pg_bin = find_pg_bin()
    psql = shutil.which("psql") or str(pg_bin / "psql" if pg_bin else "psql")
    result = subprocess.run(
        [psql, postgres_server.dsn, "-tAc", "select 40 + 2"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "42"
    assert postgres_server.async_url.startswith("postgresql+asyncpg://")
