"""The chart README's recipe for the official NATS chart: run as written, it gives a clustered
JetStream on file storage and one user per opolyx role, each password read from the Secret
the opolyx chart mounts; the resulting server configuration is accepted by nats-server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from opolyx_contracts.permissions import ROLES
from opolyx_testing.nats_server import nats_server_binary

from .conftest import CHART

README = CHART / "README.md"
RECIPE = re.compile(r"nats-values\.yaml <<'EOF'\n(.*?)\nEOF\n", re.DOTALL)
REFERENCE = re.compile(r"^<< \$([A-Z_]+) >>$")


@pytest.fixture(scope="module")
def recipe_values() -> dict[str, Any]:
    """What the README's script prints, run as written."""
    (script,) = RECIPE.findall(README.read_text())
    result = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, check=True
    )
    values: dict[str, Any] = yaml.safe_load(result.stdout)
    return values


def test_the_recipe_clusters_jetstream_on_file_storage(recipe_values: dict[str, Any]) -> None:
    config = recipe_values["config"]
    assert config["cluster"] == {"enabled": True, "replicas": 3}
    assert config["jetstream"]["enabled"] is True
    assert config["jetstream"]["fileStore"]["enabled"] is True


def test_every_role_is_a_user_whose_password_comes_from_the_charts_secret(
    recipe_values: dict[str, Any],
) -> None:
    values = recipe_values
    chart_values = yaml.safe_load((CHART / "values.yaml").read_text())
    secret = chart_values["nats"]["auth"]["existingSecret"]
    users = {u["user"]: u for u in values["config"]["merge"]["authorization"]["users"]}
    assert set(users) == set(ROLES)
    env = values["container"]["env"]
    for role, user in users.items():
        match = REFERENCE.match(user["password"])
        assert match, f"{role}: the password must be a reference, not a value"
        reference = env[match.group(1)]["valueFrom"]["secretKeyRef"]
        # The same Secret and key the opolyx chart mounts into the role's pods.
        assert reference == {"name": secret, "key": role}


def test_nats_server_accepts_the_configuration_the_recipe_makes(
    recipe_values: dict[str, Any], tmp_path: Path
) -> None:
    values = recipe_values
    authorization = values["config"]["merge"]["authorization"]
    # The NATS chart writes `<< $X >>` as a bare `$X`: an environment reference of nats.conf.
    text = json.dumps({"authorization": authorization}, indent=2)
    text = re.sub(r'"<< (\$[A-Z_]+) >>"', r"\1", text)
    conf = tmp_path / "nats.conf"
    conf.write_text(text)
    env = {name: f"password-of-{name.lower()}" for name in values["container"]["env"]}
    checked = subprocess.run(
        [str(nats_server_binary()), "-c", str(conf), "-t"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    missing = subprocess.run(
        [str(nats_server_binary()), "-c", str(conf), "-t"],
        env={},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    # A password missing from the Secret is caught when the server starts.
    assert missing.returncode != 0 and "variable reference" in missing.stderr
