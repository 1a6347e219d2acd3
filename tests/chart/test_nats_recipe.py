"""The chart README's recipe for the official NATS chart, run as written: the values script
gives a clustered JetStream on file storage and one user per opolyx role whose password is
a bcrypt hash from a Secret of hashes; the hashes script makes that Secret from the
passwords Secret the opolyx chart mounts. A real nats-server, configured the way the NATS
chart would from those values, lets each role in with its clear password only."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import json
import re
import secrets
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
import yaml
from nats.aio.client import Client
from opolyx_contracts.permissions import ROLES
from opolyx_testing.nats_server import nats_server_binary
from opolyx_testing.ports import free_port

from .conftest import CHART, REPO

README = CHART / "README.md"
VALUES_SCRIPT = REPO / "deploy" / "helm" / "nats_values.py"
HASHES_SCRIPT = REPO / "deploy" / "helm" / "nats_password_hashes.py"
REFERENCE = re.compile(r"^<< \$([A-Z_]+) >>$")


def run_script(script: Path, *args: str, stdin: str = "") -> str:
    result = subprocess.run(
        [sys.executable, str(script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def recipe_values() -> dict[str, Any]:
    """What the values script prints, run as the README says."""
    values: dict[str, Any] = yaml.safe_load(run_script(VALUES_SCRIPT))
    return values


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    """The passwords Secret's contents (the README's `openssl rand` per role)."""
    return {role: secrets.token_urlsafe(32) for role in ROLES}


@pytest.fixture(scope="module")
def hashes_secret(passwords: dict[str, str]) -> dict[str, Any]:
    """The hashes script fed the passwords Secret as `kubectl get secret -o json` prints it."""
    chart_values = yaml.safe_load((CHART / "values.yaml").read_text())
    passwords_secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": chart_values["nats"]["auth"]["existingSecret"], "namespace": "o"},
        "type": "Opaque",
        "data": {role: base64.b64encode(pw.encode()).decode() for role, pw in passwords.items()},
    }
    secret: dict[str, Any] = json.loads(
        run_script(HASHES_SCRIPT, stdin=json.dumps(passwords_secret))
    )
    return secret


def test_the_readme_recipe_runs_the_two_scripts() -> None:
    text = README.read_text()
    assert "deploy/helm/nats_values.py > nats-values.yaml" in text
    assert "deploy/helm/nats_password_hashes.py" in text
    assert "<<'EOF'" not in text  # no inline script left to drift from the tested ones


def test_the_recipe_clusters_jetstream_on_file_storage(recipe_values: dict[str, Any]) -> None:
    config = recipe_values["config"]
    assert config["cluster"] == {"enabled": True, "replicas": 3}
    assert config["jetstream"]["enabled"] is True
    assert config["jetstream"]["fileStore"]["enabled"] is True


def test_every_role_is_a_user_whose_password_is_a_hash_from_the_hashes_secret(
    recipe_values: dict[str, Any], hashes_secret: dict[str, Any]
) -> None:
    users = {u["user"]: u for u in recipe_values["config"]["merge"]["authorization"]["users"]}
    assert set(users) == set(ROLES)
    env = recipe_values["container"]["env"]
    for role, user in users.items():
        match = REFERENCE.match(user["password"])
        assert match, f"{role}: the password must be a reference, not a value"
        reference = env[match.group(1)]["valueFrom"]["secretKeyRef"]
        assert reference == {"name": hashes_secret["metadata"]["name"], "key": role}
    assert hashes_secret["kind"] == "Secret"
    assert hashes_secret["metadata"]["namespace"] == "o"  # beside the passwords Secret
    assert set(hashes_secret["data"]) == set(ROLES)


def test_the_hashes_secret_holds_no_password(
    hashes_secret: dict[str, Any], passwords: dict[str, str]
) -> None:
    text = json.dumps(hashes_secret)
    for role, password in passwords.items():
        value = base64.b64decode(hashes_secret["data"][role]).decode()
        assert password not in value and password not in text
        assert re.fullmatch(r'"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}"', value), value


def test_a_passwords_secret_missing_a_role_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process (the script run above proves it runs as a script): a missing key is
    # named, and nothing is printed for kubectl to apply.
    script = _load(HASHES_SCRIPT)
    secret = {"data": {"table": base64.b64encode(b"x").decode()}}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(secret)))
    assert script.main([]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "gateway" in err


def _load(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nats_chart_config(values: dict[str, Any]) -> str:
    """The server configuration the NATS chart writes from `config.merge`: JSON, with each
    `<< $X >>` string written bare, as the variable reference `$X`."""
    text = json.dumps({"authorization": values["config"]["merge"]["authorization"]}, indent=2)
    return re.sub(r'"<< (\$[A-Z_]+) >>"', r"\1", text)


def pod_environment(
    values: dict[str, Any], secrets_by_name: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """The NATS container's environment as the kubelet fills it from `secretKeyRef`s."""
    env: dict[str, str] = {}
    for name, source in values["container"]["env"].items():
        ref = source["valueFrom"]["secretKeyRef"]
        env[name] = base64.b64decode(secrets_by_name[ref["name"]]["data"][ref["key"]]).decode()
    return env


@pytest.fixture
def recipe_server(
    recipe_values: dict[str, Any], hashes_secret: dict[str, Any], tmp_path: Path
) -> Iterator[str]:
    """A real nats-server with the recipe's configuration and the pods' environment; its URL."""
    conf = tmp_path / "nats.conf"
    conf.write_text(nats_chart_config(recipe_values))
    env = pod_environment(recipe_values, {hashes_secret["metadata"]["name"]: hashes_secret})
    port = free_port()
    log = tmp_path / "nats-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(nats_server_binary()), "-c", str(conf), "-a", "127.0.0.1", "-p", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield f"nats://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)
    assert process.returncode == 0, log.read_text()


async def _connect(url: str, user: str, password: str) -> Client:
    # A client of our own, closed after a refusal: nats.connect() leaves the refused socket
    # open, and the warning of its finalisation would land in a later test.
    client = Client()
    try:
        await client.connect(
            url,
            user=user,
            password=password,
            allow_reconnect=False,
            max_reconnect_attempts=1,
            connect_timeout=2,
            # The server starts while the first attempt runs: a refused TCP connection is
            # retried, an authorization error is not (it is what the test looks for).
            reconnect_time_wait=0.05,  # type: ignore[arg-type]  # nats-py says int; it sleeps this
        )
    except BaseException:
        await client.close()
        raise
    return client


async def _connect_when_listening(url: str, user: str, password: str) -> Client:
    for _ in range(200):
        try:
            return await _connect(url, user, password)
        except (OSError, nats.errors.NoServersError):
            await asyncio.sleep(0.05)  # the server is still starting
    return await _connect(url, user, password)


async def test_each_role_connects_with_its_password_and_nobody_with_a_wrong_one(
    recipe_server: str, passwords: dict[str, str], hashes_secret: dict[str, Any]
) -> None:
    for role, password in passwords.items():
        client = await _connect_when_listening(recipe_server, role, password)
        assert client.is_connected, role
        await client.close()
    table_hash = base64.b64decode(hashes_secret["data"]["table"]).decode().strip('"')
    wrong = {
        "another role's password": ("table", passwords["gateway"]),
        "the hash itself": ("table", table_hash),
        "a made-up password": ("gateway", "not-the-password"),
    }
    for why, (user, password) in wrong.items():
        with pytest.raises(nats.errors.Error) as refused:
            await _connect(recipe_server, user, password)
        assert "authorization" in str(refused.value).lower(), why


def _check_configuration(conf: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`nats-server -t`: parse the configuration with this environment, then exit."""
    return subprocess.run(
        [str(nats_server_binary()), "-c", str(conf), "-t"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_quotes_around_each_hash_are_what_lets_the_server_start(
    recipe_values: dict[str, Any], hashes_secret: dict[str, Any], tmp_path: Path
) -> None:
    conf = tmp_path / "nats.conf"
    conf.write_text(nats_chart_config(recipe_values))
    env = pod_environment(recipe_values, {hashes_secret["metadata"]["name"]: hashes_secret})
    assert _check_configuration(conf, env).returncode == 0
    # Unquoted, `$2b$04$...` reads as another variable reference: the server does not start.
    unquoted = _check_configuration(conf, {k: v.strip('"') for k, v in env.items()})
    assert unquoted.returncode != 0, unquoted.stdout
    # A hash missing from the pod's environment is caught at start too.
    missing = _check_configuration(conf, {})
    assert missing.returncode != 0 and "variable reference" in missing.stderr
