"""Where a local system (`scripts/run_local.py`, `make run`) keeps its state under its data
folder. The launcher writes there, and tests that reach into a running local system (its
nats-server, as a role) read from there: both through this one description."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opolyx_service.nats_server_config import CONFIG_NAME, password_file, url_with_credentials

from opolyx_testing.nats_server import nats_server_argv, ports_file_url

__all__ = ["LocalLayout", "RunningNats"]


@dataclass(frozen=True)
class RunningNats:
    """The local system's nats-server, as its ports file tells it."""

    pid: int
    url: str
    """Without credentials."""


@dataclass(frozen=True)
class LocalLayout:
    data_dir: Path

    @property
    def nats_auth(self) -> Path:
        """The server configuration and one password file per role."""
        return self.data_dir / "nats-auth"

    @property
    def nats_config(self) -> Path:
        return self.nats_auth / CONFIG_NAME

    @property
    def nats_store(self) -> Path:
        """JetStream's store."""
        return self.data_dir / "nats"

    @property
    def nats_ports(self) -> Path:
        """nats-server writes `nats-server_<pid>.ports` here (`--ports_file_dir`)."""
        return self.data_dir / "nats-ports"

    @property
    def logs(self) -> Path:
        return self.data_dir / "logs"

    @property
    def signing_key(self) -> Path:
        """The gateway's session signing key: kept, so a restart keeps players signed in."""
        return self.data_dir / "gateway-signing-key"

    @property
    def progression_data(self) -> Path:
        """Progression's SQLite database."""
        return self.data_dir / "progression"

    def operator_token(self, service: str) -> Path:
        """The token `service`'s operator endpoint takes (written on the first run)."""
        return self.data_dir / f"{service}-operator-token"

    def operator_port(self, service: str) -> Path:
        """The port of `service`'s operator endpoint in this run."""
        return self.data_dir / f"{service}-operator-port"

    def log_file(self, process: str) -> Path:
        return self.logs / f"{process}.log"

    def nats_server_argv(self) -> list[str]:
        """The local system's nats-server command line: its configuration, store and ports
        folder (the folders must exist)."""
        return nats_server_argv(self.nats_store, self.nats_ports, self.nats_config)

    def nats_server(self) -> RunningNats:
        """The running nats-server (the launcher removes stale ports files when it starts one)."""
        (ports,) = self.nats_ports.glob("nats-server_*.ports")
        url = ports_file_url(ports)
        if url is None:
            raise RuntimeError(f"{ports} names no client URL")
        return RunningNats(pid=int(ports.stem.rsplit("_", 1)[1]), url=url)

    def nats_url_for(self, role: str) -> str:
        """The running nats-server's URL with `role`'s user and password."""
        password = password_file(self.nats_auth, role).read_text().strip()
        return url_with_credentials(self.nats_server().url, role, password)
