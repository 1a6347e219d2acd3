"""The chart rendered with the real Helm library (helm-python-sdk), as Kubernetes objects.

Fixtures: `default_render` (the chart's own values), `production_render` (the production
example), `render_chart` (any values), `production_with` (the example with an override),
`chart_postgres` (a PostgreSQL for progression)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml
from opolyx_testing.postgres import PostgresServer, start_postgres

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "opolyx"
PRODUCTION_VALUES = REPO / "deploy" / "helm" / "examples" / "production.yaml"
RELEASE = "opolyx"
NAMESPACE = "games"

COMPONENTS = ("table", "lobby", "bots", "chat", "progression", "gateway")
"""Every service the chart deploys (the architecture's list)."""


def services_in_repository() -> list[str]:
    """The services the repository holds (`services/<name>/pyproject.toml` under version
    control): a service still being written in a working copy is not deployed yet."""
    listed = subprocess.run(
        ["git", "ls-files", "services/*/pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode == 0 and listed.stdout.strip():
        paths = [REPO / line for line in listed.stdout.split()]
    else:  # not a git checkout (an exported tree): every service directory counts
        paths = sorted((REPO / "services").glob("*/pyproject.toml"))
    return sorted(path.parent.name for path in paths)


def production_values() -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load(PRODUCTION_VALUES.read_text())
    return values


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` deep-merged over `base` (how `helm -f a -f b` combines files)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


@dataclass(frozen=True)
class Rendered:
    """One render of the chart: manifests by template, and the objects in them."""

    manifests: dict[str, str]

    @cached_property
    def objects(self) -> list[dict[str, Any]]:
        return list(self._iter_objects())

    def _iter_objects(self) -> Iterator[dict[str, Any]]:
        for template, text in sorted(self.manifests.items()):
            if template.endswith("NOTES.txt"):
                continue
            for document in yaml.safe_load_all(text):
                if document:
                    yield document

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind]

    def named(self, kind: str, name: str) -> dict[str, Any]:
        matches = [o for o in self.of_kind(kind) if o["metadata"]["name"] == name]
        assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
        return matches[0]

    def deployments(self) -> dict[str, dict[str, Any]]:
        """Deployments by component label."""
        return {
            d["metadata"]["labels"]["app.kubernetes.io/component"]: d
            for d in self.of_kind("Deployment")
        }

    def environment(self, component: str) -> dict[str, str | dict[str, Any]]:
        """The container's environment: ConfigMap variables (envFrom) and its own `env`
        (plain values as text, references as the `valueFrom` mapping)."""
        container = self.deployments()[component]["spec"]["template"]["spec"]["containers"][0]
        env: dict[str, str | dict[str, Any]] = {}
        for source in container.get("envFrom", []):
            config_map = self.named("ConfigMap", source["configMapRef"]["name"])
            env.update(config_map.get("data", {}))
        for entry in container.get("env", []):
            env[entry["name"]] = entry.get("value", entry.get("valueFrom", {}))
        return env

    def plain(self, component: str, name: str) -> str:
        """A variable of the container's environment that is set as text (not a reference)."""
        value = self.environment(component)[name]
        assert isinstance(value, str), f"{component}: {name} is a reference: {value}"
        return value


def render(values: dict[str, Any] | None = None) -> Rendered:
    """Render as `helm install` would (Helm checks the values against the schema first)."""
    with helm_python.Chart.load(CHART) as chart:
        return Rendered(chart.render(values or {}, name=RELEASE, namespace=NAMESPACE))


def component_name(component: str) -> str:
    """A component's object name (the release is named like the chart, so no doubled prefix)."""
    return f"{RELEASE}-{component}"


@pytest.fixture(scope="session")
def chart_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL for progression, its data outside pytest's temp root: pytest resets that
    root to mode 0700 at each session start, which locks out the `postgres` user whenever
    another pytest session starts on the same machine meanwhile."""
    root = Path(tempfile.mkdtemp(prefix="opolyx-chart-pg-"))
    try:
        with start_postgres(root / "pg") as server:
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def default_render() -> Rendered:
    return render()


@pytest.fixture(scope="session")
def production_render() -> Rendered:
    return render(production_values())


@pytest.fixture(scope="session")
def render_chart() -> Any:
    """`render_chart(values)`: a render of any values."""
    return render


@pytest.fixture
def production_with() -> Any:
    """`production_with(override)`: the production example with `override` merged over it."""
    return lambda override: merged(production_values(), override)
