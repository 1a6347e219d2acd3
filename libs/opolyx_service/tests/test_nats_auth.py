"""Credentials flow: the files `make run` and the harness write, the options a service builds
from `NatsSettings` (nats-py and FastStream alike), and the real server accepting exactly
those: user and password file (make run), credentials in the URL (tests), TLS (production)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from faststream.nats.security import NatsUserPassword
from nats.aio.msg import Msg
from opolyx_contracts.permissions import ROLES
from opolyx_contracts.subjects import LOBBY_EVENTS, TABLE_CREATE
from opolyx_service import flush_in_order
from opolyx_service.broker import create_broker
from opolyx_service.connection import connect_nats
from opolyx_service.nats_auth import (
    broker_options,
    connect_options,
    inbox_prefix,
    redacted_servers,
)
from opolyx_service.nats_server_config import ServerTls, write_nats_auth
from opolyx_service.settings import NatsSettings, ServiceSettings
from opolyx_testing.nats_server import NatsServer, start_nats_server
from prometheus_client import CollectorRegistry
from pydantic import SecretStr


def test_credentials_are_made_once_private_and_kept(tmp_path: Path) -> None:
    first = write_nats_auth(tmp_path / "auth")
    again = write_nats_auth(tmp_path / "auth")
    assert first.passwords == again.passwords
    assert set(first.passwords) == set(ROLES)
    assert len(set(first.passwords.values())) == len(ROLES)
    assert (tmp_path / "auth").stat().st_mode & 0o777 == 0o700
    for role in ROLES:
        path = first.password_file(role)
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.read_text() == first.passwords[role]
    config = json.loads(first.config_path.read_text())
    users = {u["user"]: u for u in config["authorization"]["users"]}
    assert set(users) == set(ROLES)
    assert users["bots"]["permissions"]["publish"]["allow"] == list(ROLES["bots"].publish)
    assert "allow_responses" in users["table"]["permissions"]
    assert "allow_responses" not in users["gateway"]["permissions"]
    assert first.env_for("lobby") == {
        "OPOLYX_NATS__USER": "lobby",
        "OPOLYX_NATS__PASSWORD_FILE": str(first.password_file("lobby")),
    }
    with pytest.raises(KeyError):
        first.password_file("intruder")


def test_options_from_settings(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    from_file = NatsSettings(user="table", password_file=secret)
    assert connect_options(from_file) == {
        "inbox_prefix": "_INBOX.table",
        "user": "table",
        "password": "s3cret",
    }
    security = broker_options(from_file)["security"]
    assert isinstance(security, NatsUserPassword)
    assert (security.username, security.password) == ("table", "s3cret")
    # credentials in the URL (the harness): the inbox follows the URL's user
    in_url = NatsSettings(url="nats://gateway:pw@127.0.0.1:4222")
    assert connect_options(in_url) == {"inbox_prefix": "_INBOX.gateway"}
    assert inbox_prefix(NatsSettings()) == "_INBOX"
    assert redacted_servers(in_url) == ["nats://gateway:***@127.0.0.1:4222"]
    assert redacted_servers(NatsSettings(url="nats://a:1,nats://b:2")) == [
        "nats://a:1",
        "nats://b:2",
    ]
    assert inbox_prefix(NatsSettings(inbox_prefix="_INBOX.chat")) == "_INBOX.chat"
    # a secret wins over the file, and is not shown
    from_secret = NatsSettings(user="lobby", password=SecretStr("p"), password_file=secret)
    assert connect_options(from_secret)["password"] == "p"
    assert "p'" not in repr(from_secret)
    with pytest.raises(ValueError, match="PASSWORD"):
        connect_options(NatsSettings(user="lobby"))
    with pytest.raises(ValueError, match="cannot read"):
        connect_options(NatsSettings(user="lobby", password_file=tmp_path / "missing"))


def test_settings_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPOLYX_NATS__USER", "bots")
    monkeypatch.setenv("OPOLYX_NATS__PASSWORD", "from-a-secret")
    monkeypatch.setenv("OPOLYX_NATS__TLS_CA_FILE", str(tmp_path / "ca.pem"))
    nats = ServiceSettings().nats
    assert nats.user == "bots"
    assert nats.password is not None and nats.password.get_secret_value() == "from-a-secret"
    assert nats.tls_ca_file == tmp_path / "ca.pem"
    assert "from-a-secret" not in repr(nats)


async def test_a_service_connects_with_its_user_and_password_file(nats_server: NatsServer) -> None:
    """What `make run` hands a service: its user and the file with its password."""
    assert nats_server.auth is not None
    settings = NatsSettings(
        url=nats_server.plain_url,
        user="lobby",
        password_file=nats_server.auth.password_file("lobby"),
    )
    admin = await nats_server.connect()
    lobby = await connect_nats(settings, "lobby-test")
    try:

        async def table(msg: Msg) -> None:
            await msg.respond(b'{"ok": true}')

        await admin.subscribe(TABLE_CREATE, cb=table)
        await flush_in_order(admin)
        reply = await lobby.request(TABLE_CREATE, b"{}", timeout=5)
        assert reply.data == b'{"ok": true}'
        assert reply.subject.startswith("_INBOX.lobby.")
    finally:
        await lobby.close()
        await admin.close()


async def test_a_faststream_broker_connects_as_its_role(nats_server: NatsServer) -> None:
    assert nats_server.auth is not None
    settings = ServiceSettings(
        service_name="lobby",
        nats=NatsSettings(url=nats_server.url_for("lobby")),
    )
    admin = await nats_server.connect()
    broker = create_broker(settings, CollectorRegistry())
    try:
        got: list[bytes] = []

        async def collect(msg: Msg) -> None:
            got.append(msg.data)

        async def table(msg: Msg) -> None:
            await msg.respond(b'{"ok": true}')

        await admin.subscribe(LOBBY_EVENTS, cb=collect)
        await admin.subscribe(TABLE_CREATE, cb=table)
        await flush_in_order(admin)
        await broker.connect()
        reply = await broker.request(b"{}", TABLE_CREATE, timeout=5)
        assert await reply.decode() == {"ok": True}
        await broker.publish(b"event", LOBBY_EVENTS)
        await flush_in_order(broker.connection)
        await flush_in_order(admin)
        for _ in range(100):
            if got:
                break
            await flush_in_order(admin)
        assert got == [b"event"]
    finally:
        await broker.stop()
        await admin.close()


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A throw-away CA and a server certificate for 127.0.0.1 signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.pem", cwd=directory,
    )  # fmt: skip
    (directory / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "server.key", "-out", "server.csr", cwd=directory,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "1", "-extfile", "san.cnf", "-out", "server.pem",
        cwd=directory,
    )  # fmt: skip
    return directory / "ca.pem", directory / "server.pem", directory / "server.key"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make certificates")
async def test_tls_settings_reach_a_tls_only_server(tmp_path: Path) -> None:
    ca, cert, key = make_certificates(tmp_path / "certs")
    tls = ServerTls(cert_file=cert, key_file=key)
    with start_nats_server(tmp_path / "nats", prefer_docker=False, tls=tls) as server:
        assert server.auth is not None
        url = server.plain_url.replace("tls://", "nats://")
        settings = NatsSettings(
            url=url, user="gateway", password_file=server.auth.password_file("gateway"),
            tls_ca_file=ca,
        )  # fmt: skip
        nc = await connect_nats(settings, "tls-test")
        try:
            assert nc.is_connected
            await nc.publish("opolyx.lobby.cmd", b"{}")
            await flush_in_order(nc)
        finally:
            await nc.close()
        # The server admits no plain-text client: it says so before anything is sent.
        host, port = server.plain_url.removeprefix("tls://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        info = json.loads((await reader.readline()).decode().removeprefix("INFO "))
        writer.close()
        await writer.wait_closed()
        assert info["tls_required"] is True
        assert info["auth_required"] is True
