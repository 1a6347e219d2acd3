"""A nats-server configuration with one user per role and the credentials that go with it.

The roles and their allow lists come from `opolyx_contracts.permissions`; this module only
renders them for the server and keeps one random password per role in a folder:

    setup = write_nats_auth(data_dir / "nats-auth")
    # nats-server -c setup.config_path -js ...
    env = setup.env_for("table")  # OPOLYX_NATS__USER / OPOLYX_NATS__PASSWORD_FILE

`make run` (scripts/run_local.py) and the test harness (opolyx_testing.nats_server) both call
`write_nats_auth`, so what runs locally is what the tests run against. Production deployments
bring their own server configuration and hand each service its credentials as a Secret.

The server configuration holds bcrypt hashes of the passwords, never the passwords: the
clear text is only in each role's own file (0600), which is all a service is given. The
cost factor is bcrypt's lowest (4): a password is 256 random bits, so no cost factor makes
guessing it any harder, while the server pays the cost on every connection.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from opolyx_contracts.permissions import ROLES, Role

__all__ = [
    "CONFIG_NAME",
    "NatsAuthSetup",
    "ServerTls",
    "bcrypt_hash",
    "ensure_passwords",
    "password_file",
    "render_server_config",
    "url_with_credentials",
    "write_nats_auth",
]

CONFIG_NAME = "nats-server.conf"
BCRYPT_COST = 4
"""See the module's note: random 256-bit passwords need no key stretching."""


def bcrypt_hash(password: str) -> str:
    """The password as nats-server's configuration takes it hashed (``$2b$...``)."""
    import bcrypt  # only where a server configuration is written (local runs, tests)

    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(BCRYPT_COST)).decode()


def password_file(directory: Path, role: str) -> Path:
    """Where the password of `role` is kept in a configuration's folder."""
    return directory / f"{role}.password"


def ensure_passwords(directory: Path, roles: Iterable[str]) -> dict[str, str]:
    """One password per role in `<directory>/<role>.password` (0600), made once and kept."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    passwords: dict[str, str] = {}
    for role in roles:
        path = password_file(directory, role)
        if not path.exists():
            # O_EXCL: two processes setting up the same folder never overwrite each other.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w") as out:
                    out.write(secrets.token_urlsafe(32))
        passwords[role] = path.read_text().strip()
    return passwords


@dataclass(frozen=True)
class ServerTls:
    """TLS for the server's client port (a production-like local run, TLS tests)."""

    cert_file: Path
    key_file: Path
    ca_file: Path | None = None
    verify_clients: bool = False
    """Require client certificates signed by `ca_file` (mutual TLS)."""

    def config(self) -> dict[str, Any]:
        block: dict[str, Any] = {"cert_file": str(self.cert_file), "key_file": str(self.key_file)}
        if self.ca_file is not None:
            block["ca_file"] = str(self.ca_file)
        if self.verify_clients:
            block["verify"] = True
        return block


def _user(role: Role, password: str) -> dict[str, Any]:
    permissions: dict[str, Any] = {
        "publish": {"allow": list(role.publish)},
        "subscribe": {"allow": list(role.subscribe)},
    }
    if role.responds:
        # One reply per request received, within a minute.
        permissions["allow_responses"] = {"max": 1, "expires": "1m"}
    return {"user": role.name, "password": password, "permissions": permissions}


def render_server_config(
    passwords: Mapping[str, str],
    roles: Mapping[str, Role] = ROLES,
    *,
    store_dir: Path | None = None,
    tls: ServerTls | None = None,
) -> str:
    """The server's configuration (JSON, which nats-server reads as its own format).

    `passwords` are written as given: bcrypt hashes (`write_nats_auth`), or references the
    server resolves itself (the NATS chart's ``<< $VAR >>``, deploy/helm/opolyx/README.md).
    Listening address and port stay on the command line (`-a`, `-p`), so one file serves a
    local process and a container alike. With `store_dir`, JetStream is enabled there.
    """
    config: dict[str, Any] = {
        "authorization": {
            "users": [_user(roles[name], password) for name, password in passwords.items()]
        }
    }
    if store_dir is not None:
        config["jetstream"] = {"store_dir": str(store_dir)}
    if tls is not None:
        config["tls"] = tls.config()
    return json.dumps(config, indent=2) + "\n"


def url_with_credentials(url: str, user: str, password: str) -> str:
    """`nats://host:port` with `user:password@` in it (nats-py reads them from the URL)."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme or "nats", netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class NatsAuthSetup:
    """The files written for one server: its configuration and a password file per role."""

    directory: Path
    config_path: Path
    passwords: dict[str, str] = field(repr=False)

    def password_file(self, role: str) -> Path:
        self._check(role)
        return password_file(self.directory, role)

    def url_for(self, role: str, url: str) -> str:
        """The server `url` with `role`'s credentials in it."""
        self._check(role)
        return url_with_credentials(url, role, self.passwords[role])

    def env_for(self, role: str) -> dict[str, str]:
        """Environment for a service of `role` (the URL is set separately)."""
        return {
            "OPOLYX_NATS__USER": role,
            "OPOLYX_NATS__PASSWORD_FILE": str(self.password_file(role)),
        }

    def _check(self, role: str) -> None:
        if role not in self.passwords:
            raise KeyError(f"no NATS role {role!r}; roles: {', '.join(self.passwords)}")


def write_nats_auth(
    directory: Path,
    roles: Mapping[str, Role] = ROLES,
    *,
    store_dir: Path | None = None,
    tls: ServerTls | None = None,
) -> NatsAuthSetup:
    """Write (or refresh) the server configuration; passwords already there are kept. The
    configuration names each password by its bcrypt hash only."""
    passwords = ensure_passwords(directory, roles)
    config_path = directory / CONFIG_NAME
    hashed = {role: bcrypt_hash(password) for role, password in passwords.items()}
    text = render_server_config(hashed, roles, store_dir=store_dir, tls=tls)
    tmp = config_path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    tmp.replace(config_path)
    return NatsAuthSetup(directory, config_path, passwords)
