"""A real PostgreSQL for tests: a container where Docker answers, else a throwaway cluster
made with the local `initdb`/`pg_ctl` (Debian's postgresql package; `make` installs it),
run as the `postgres` user when the tests run as root (initdb refuses root).

    with start_postgres(tmp_path) as pg:
        engine = create_async_engine(pg.async_url)
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opolyx_testing.docker import docker_available
from opolyx_testing.ports import free_port

__all__ = ["POSTGRES_IMAGE", "PostgresServer", "find_pg_bin", "start_postgres"]

POSTGRES_IMAGE = "postgres:17-alpine"


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    database: str
    _stop: Any = field(default=None, repr=False)

    @property
    def async_url(self) -> str:
        """SQLAlchemy URL for asyncpg."""
        return (
            f"postgresql+asyncpg://{self.user}:{self.password}@{self.host}:{self.port}/"
            f"{self.database}"
        )

    @property
    def dsn(self) -> str:
        """libpq/asyncpg DSN."""
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{self.database}"

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None


def find_pg_bin() -> Path | None:
    """Directory holding initdb/pg_ctl (Debian keeps them out of PATH)."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(versions[0]).parent if versions else None


def _start_local(data_root: Path) -> PostgresServer:
    pg_bin = find_pg_bin()
    if pg_bin is None:
        raise RuntimeError(
            "PostgreSQL binaries not found: apt-get install postgresql (or run a Docker engine)"
        )
    as_root = os.geteuid() == 0
    data_root.mkdir(parents=True, exist_ok=True)
    data_dir = data_root / "pgdata"
    socket_dir = data_root / "pgsock"
    socket_dir.mkdir(exist_ok=True)
    prefix: list[str] = []
    if as_root:
        shutil.chown(data_root, "postgres")
        shutil.chown(socket_dir, "postgres")
        # runuser needs every parent directory to be traversable by postgres
        for parent in data_root.parents:
            if parent.stat().st_mode & 0o001 == 0:
                parent.chmod(parent.stat().st_mode | 0o001)
        prefix = ["runuser", "-u", "postgres", "--"]
    user, password, database = "postgres", "postgres", "postgres"
    pwfile = data_root / "pwfile"
    pwfile.write_text(password)
    if as_root:
        shutil.chown(pwfile, "postgres")
    subprocess.run(
        [
            *prefix,
            str(pg_bin / "initdb"),
            "-D",
            str(data_dir),
            "-U",
            user,
            "--pwfile",
            str(pwfile),
            "-A",
            "scram-sha-256",
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    log_file = data_root / "postgres.log"
    subprocess.run(
        [
            *prefix,
            str(pg_bin / "pg_ctl"),
            "-D",
            str(data_dir),
            "-l",
            str(log_file),
            "-w",
            "-o",
            f"-p {port} -c listen_addresses=127.0.0.1 -c fsync=off -k {socket_dir}",
            "start",
        ],
        check=True,
        capture_output=True,
    )

    def stop() -> None:
        subprocess.run(
            [*prefix, str(pg_bin / "pg_ctl"), "-D", str(data_dir), "-m", "immediate", "stop"],
            check=False,
            capture_output=True,
        )

    return PostgresServer("127.0.0.1", port, user, password, database, _stop=stop)


def _start_container() -> PostgresServer:
    from testcontainers.community.postgres import PostgresContainer

    container = PostgresContainer(POSTGRES_IMAGE, driver="asyncpg")
    container.start()
    return PostgresServer(
        host=container.get_container_host_ip(),
        port=int(container.get_exposed_port(5432)),
        user=container.username,
        password=container.password,
        database=container.dbname,
        _stop=container.stop,
    )


@contextlib.contextmanager
def start_postgres(data_root: Path, prefer_docker: bool | None = None) -> Iterator[PostgresServer]:
    use_docker = docker_available() if prefer_docker is None else prefer_docker
    server = _start_container() if use_docker else _start_local(data_root)
    try:
        yield server
    finally:
        server.stop()
