"""The nats-server configuration `make run` and the tests write holds bcrypt hashes, never a
password: the clear text is only in each role's own 0600 file, and the real server still
lets each role in with it (and nobody with the hash)."""

from __future__ import annotations

import json
from pathlib import Path

import bcrypt
import nats
import pytest
from nats.aio.client import Client
from opolyx_contracts.permissions import ROLES
from opolyx_service.nats_server_config import write_nats_auth
from opolyx_testing.nats_server import NatsServer


def test_the_server_configuration_names_passwords_by_their_hash_only(tmp_path: Path) -> None:
    setup = write_nats_auth(tmp_path / "auth")
    text = setup.config_path.read_text()
    assert setup.config_path.stat().st_mode & 0o777 == 0o600
    users = {u["user"]: u for u in json.loads(text)["authorization"]["users"]}
    assert set(users) == set(ROLES)
    for role, password in setup.passwords.items():
        assert password not in text
        hashed = users[role]["password"]
        assert hashed.startswith("$2")
        assert bcrypt.checkpw(password.encode(), hashed.encode())
        assert setup.password_file(role).stat().st_mode & 0o777 == 0o600


async def test_the_real_server_takes_the_password_and_refuses_its_hash(
    nats_server: NatsServer,
) -> None:
    nc = await nats.connect(nats_server.url_for("lobby"))
    assert nc.is_connected
    await nc.close()
    assert nats_server.auth is not None
    users = json.loads(nats_server.auth.config_path.read_text())["authorization"]["users"]
    hashed = next(u["password"] for u in users if u["user"] == "lobby")
    # a client of our own, closed after the refusal: nats.connect() would leave the refused
    # socket open, and the warning of its finalisation would land in a later test
    refused_client = Client()
    try:
        with pytest.raises((nats.errors.Error, OSError)) as refused:
            await refused_client.connect(
                nats_server.plain_url,
                user="lobby",
                password=hashed,
                allow_reconnect=False,
                max_reconnect_attempts=1,
                connect_timeout=2,
            )
    finally:
        await refused_client.close()
    assert "authorization" in str(refused.value).lower()
