"""The chart against the code it deploys: every variable a Deployment sets is a setting of that
service, every entry point and probe path exists, every service has its Deployment, and the
services started with exactly the configuration the chart renders become ready, answer the
probes and pass the `helm test` pod's check."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import tomllib
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opolyx_chat.settings import ChatSettings
from opolyx_contracts import subjects
from opolyx_gateway.app import create_app
from opolyx_gateway.settings import GatewaySettings
from opolyx_progression.settings import ProgressionSettings
from opolyx_service.health import HealthServer, Readiness
from opolyx_service.settings import ServiceSettings
from opolyx_table.settings import TableSettings
from opolyx_testing import ServiceProcess
from opolyx_testing.nats_cluster import NatsCluster, start_nats_cluster
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.ports import free_port
from opolyx_testing.postgres import PostgresServer
from prometheus_client import CollectorRegistry
from pydantic import BaseModel

from .conftest import REPO, Rendered, services_in_repository


def _load_schema_generator() -> types.ModuleType:
    path = REPO / "deploy" / "helm" / "settings_schema.py"
    spec = importlib.util.spec_from_file_location("settings_schema", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


schema_generator = _load_schema_generator()
SETTINGS: dict[str, type[ServiceSettings]] = schema_generator.SETTINGS
"""Each service's settings model (one list, the schema generator's). A new service directory
must be added there (`test_every_service_directory_is_deployed_and_known` says so)."""

SERVICES_DIR = REPO / "services"


def existing_services() -> list[str]:
    return services_in_repository()


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings section a field holds, if it holds one (`Section` or `Section | None`)."""
    candidates = [annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        candidates = list(typing.get_args(annotation))
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def known_variables(model: type[BaseModel], prefix: str = "OPOLYX_") -> set[str]:
    """Every environment variable `model` reads: OPOLYX_ prefix, nested sections joined by __."""
    names: set[str] = set()
    for field_name, info in model.model_fields.items():
        name = f"{prefix}{field_name.upper()}"
        section = _model_of(info.annotation)
        if section is None:
            names.add(name)
        else:
            names |= known_variables(section, f"{name}__")
    return names


def test_known_variables_walks_nested_sections() -> None:
    names = known_variables(ProgressionSettings)
    assert "OPOLYX_PROGRESSION__FARMING__MIN_GAMES" in names
    assert "OPOLYX_NATS__PASSWORD_FILE" in names
    assert "OPOLYX_PROGRESSION__FARMING" not in names


def test_every_service_directory_is_deployed_and_known(production_render: Rendered) -> None:
    deployments = production_render.deployments()
    for service in existing_services():
        assert service in SETTINGS, (
            f"services/{service}: add its settings model to deploy/helm/settings_schema.py"
        )
        assert service in deployments, f"services/{service} has no Deployment in the chart"


@pytest.mark.parametrize("values", ["default", "production"])
def test_every_variable_a_deployment_sets_is_a_setting_of_its_service(
    values: str, default_render: Rendered, production_render: Rendered
) -> None:
    rendered = production_render if values == "production" else default_render
    for service in existing_services():
        known = known_variables(SETTINGS[service])
        unknown = sorted(set(rendered.environment(service)) - known)
        # pydantic-settings ignores unknown variables silently: a typo would go unnoticed.
        assert unknown == [], f"{service} sets variables its settings do not read: {unknown}"


def test_the_schema_knows_exactly_the_settings_of_each_service() -> None:
    # Generated from the settings models; a field added, removed or retyped in a service
    # must be regenerated into the schema, else an SRE's values are checked against stale ones.
    assert schema_generator.main(["--check"]) == 0, "run deploy/helm/settings_schema.py"


def _container(rendered: Rendered, service: str) -> dict[str, Any]:
    container: dict[str, Any] = rendered.deployments()[service]["spec"]["template"]["spec"][
        "containers"
    ][0]
    return container


def test_every_command_is_an_entry_point_of_its_service(production_render: Rendered) -> None:
    for service in existing_services():
        project = tomllib.loads((SERVICES_DIR / service / "pyproject.toml").read_text())
        scripts = project["project"]["scripts"]
        (command,) = _container(production_render, service)["command"]
        assert command in scripts, f"{service}: {command} is not one of {sorted(scripts)}"


def _probe_paths(rendered: Rendered, service: str) -> set[str]:
    container = _container(rendered, service)
    return {
        container[probe]["httpGet"]["path"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe")
    }


async def test_probe_paths_exist_in_the_shared_health_server(
    production_render: Rendered,
) -> None:
    readiness = Readiness()
    readiness.add_check("always", lambda: True)
    server = HealthServer(CollectorRegistry(), port=0, readiness=readiness)
    await server.start()
    try:
        for service in existing_services():
            if service == "gateway":
                continue  # serves its own routes: next test
            for path in _probe_paths(production_render, service):
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                status_line = await reader.readline()
                writer.close()
                assert status_line.split()[1] == b"200", f"{service} {path}: {status_line!r}"
    finally:
        await server.stop()


def test_probe_paths_and_the_guest_sign_in_exist_in_the_gateway(
    production_render: Rendered,
) -> None:
    app = create_app(GatewaySettings())
    routes = {route.path: route for route in app.routes}
    for path in _probe_paths(production_render, "gateway"):
        assert path in routes and "GET" in routes[path].methods
    # What the helm test pod calls: sign in as a guest, then read the session back.
    assert {"GET", "POST"} <= routes["/api/session"].methods


def _resolved_environment(
    rendered: Rendered,
    service: str,
    nats: NatsServer | NatsCluster,
    postgres: PostgresServer,
    tmp_path: Path,
) -> dict[str, str]:
    """The chart's environment of `service` with what only the cluster provides swapped for
    this machine's: the NATS address and the role's password file (the mounted Secret), the
    database URL and keys (secretKeyRef), the pod name, the data folder, the ports, and
    JetStream replicas (kept for a `NatsCluster`, 1 for a single server)."""
    assert nats.auth is not None
    env: dict[str, str] = {}
    for name, value in rendered.environment(service).items():
        if isinstance(value, str):
            env[name] = value
            continue
        if "fieldRef" in value:
            env[name] = f"pod-{service}"
        elif name == "OPOLYX_GATEWAY__SIGNING_KEYS":
            env[name] = '{"k2": "second-key-0123456789abcdef", "k1": "first-key-0123456789abcdef"}'
        elif name == "OPOLYX_PROGRESSION__DATABASE_URL":
            env[name] = postgres.async_url
        elif name.endswith("__OPERATOR__TOKEN"):
            env[name] = "operator-token-for-the-test"
        else:
            raise AssertionError(f"{service}: no stand-in for {name} = {value}")
    role = env["OPOLYX_NATS__USER"]
    env["OPOLYX_NATS__URL"] = nats.plain_url
    env["OPOLYX_NATS__PASSWORD_FILE"] = str(nats.auth.password_file(role))
    if isinstance(nats, NatsServer):  # one server: more replicas need a NATS cluster
        env["OPOLYX_JETSTREAM__REPLICAS"] = "1"
        if "OPOLYX_TABLE__REPLICAS" in env:
            env["OPOLYX_TABLE__REPLICAS"] = "1"
    for local in ("OPOLYX_HTTP__PORT", "OPOLYX_HTTP__HOST"):
        del env[local]  # ServiceProcess gives each a free loopback port
    for name in [n for n in env if n.endswith("__OPERATOR__PORT") and env[n] != "-1"]:
        env[name] = str(free_port())
        env[name.replace("__PORT", "__HOST")] = "127.0.0.1"
    if "OPOLYX_PROGRESSION__DATA_DIR" in env:
        env["OPOLYX_PROGRESSION__DATA_DIR"] = str(tmp_path / "progression-data")
    # The OTLP exporter is in the image only (the `image` dependency group), not in the
    # development environment; the collector endpoint is checked by the render tests.
    env.pop("OPOLYX_TELEMETRY__TRACES", None)
    env.pop("OPOLYX_TELEMETRY__OTLP_ENDPOINT", None)
    return env


def test_the_settings_models_accept_the_rendered_values(
    production_render: Rendered, nats_server: NatsServer, tmp_path: Path
) -> None:
    postgres = PostgresServer("127.0.0.1", 5432, "u", "p", "d")  # parsed, never connected
    for service in existing_services():
        env = _resolved_environment(production_render, service, nats_server, postgres, tmp_path)
        saved = dict(os.environ)
        try:
            os.environ.update(env)
            settings = SETTINGS[service]()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        assert settings.nats.user == service
        assert settings.instance_id == f"pod-{service}"
        if isinstance(settings, TableSettings):
            assert settings.table.partitions == 64 and settings.table.lease_ttl == 2
        if isinstance(settings, GatewaySettings):
            assert settings.gateway.active_key_id == "k2"
        if isinstance(settings, ProgressionSettings):
            assert settings.progression.farming.min_games == 3
        if isinstance(settings, ChatSettings):
            assert settings.chat.blocked_words == ["spam-link.example"]
            assert settings.chat.operator.port > 0  # on: the chart gives it a port


async def test_services_started_with_the_rendered_configuration_serve_their_probes(
    production_render: Rendered,
    nats_server: NatsServer,
    chart_postgres: PostgresServer,
    tmp_path: Path,
) -> None:
    started: dict[str, ServiceProcess] = {}
    try:
        for service in existing_services():
            env = _resolved_environment(
                production_render, service, nats_server, chart_postgres, tmp_path
            )
            (command,) = _container(production_render, service)["command"]
            process = ServiceProcess([_script(command)], env, tmp_path, name=service)
            started[service] = process.start()
        for service, process in started.items():
            container = _container(production_render, service)
            ready_path = container["readinessProbe"]["httpGet"]["path"]
            # As long as the kubelet would wait before restarting it (the startup probe's).
            startup = container["startupProbe"]
            budget = startup["failureThreshold"] * startup["periodSeconds"]
            await _wait_for(process, ready_path, timeout=budget)
            for probe in ("startupProbe", "livenessProbe"):
                status, _ = await _get(process, container[probe]["httpGet"]["path"])
                assert status == 200, f"{service} {probe}"

        await _check_custom_metrics_are_exported(production_render, started)
        _run_helm_test_pod(production_render, started["gateway"].http_port)

        # What the kubelet does after the preStop sleep: SIGTERM, then the grace period.
        for process in started.values():
            process.send_signal(signal.SIGTERM)
        for service, process in started.items():
            pod = production_render.deployments()[service]["spec"]["template"]["spec"]
            code = process.wait(pod["terminationGracePeriodSeconds"])
            assert code == 0, f"{service} did not stop cleanly on SIGTERM:\n{process.log_tail()}"
    finally:
        for process in started.values():
            process.kill()


STORAGE: dict[str, set[str]] = {
    "table": {
        subjects.TABLE_EVENTS_STREAM,
        subjects.GAMES_STREAM,
        f"KV_{subjects.TABLES_BUCKET}",
        f"KV_{subjects.TABLE_LEASES_BUCKET}",
    },
    "lobby": {
        f"KV_{subjects.ROOMS_BUCKET}",
        f"KV_{subjects.ACTIVE_GAMES_BUCKET}",
        subjects.GAMES_STREAM,  # when the table has not made it yet
    },
    "bots": {subjects.BOTS_DECISIONS_STREAM},
    "chat": {
        subjects.CHAT_STREAM,
        f"KV_{subjects.CHAT_MUTES_BUCKET}",
        f"KV_{subjects.CHAT_REPORTS_BUCKET}",
        f"KV_{subjects.CHAT_ROOMS_BUCKET}",
        f"KV_{subjects.CHAT_BOT_MOMENTS_BUCKET}",
        f"KV_{subjects.CHAT_POST_IDS_BUCKET}",
    },
    "progression": {subjects.GAMES_STREAM},  # when the table has not made it yet
    "gateway": {f"KV_{subjects.GATEWAY_PLAYERS_BUCKET}"},
}
"""Streams (a bucket is the stream `KV_<bucket>`) each service creates at its start on an
empty JetStream."""


@pytest.fixture(scope="module")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    # About 2 s to start and elect a JetStream leader (2.1 s at load 5).
    with start_nats_cluster(tmp_path_factory.mktemp("nats-cluster")) as cluster:
        yield cluster


@pytest.mark.parametrize("service", sorted(STORAGE))
async def test_a_service_started_with_the_charts_replicas_creates_every_stream_and_bucket_with_them(
    service: str,
    production_render: Rendered,
    nats_cluster: NatsCluster,
    chart_postgres: PostgresServer,
    tmp_path: Path,
) -> None:
    """On a 3-node cluster, each service alone on an empty JetStream, with the rendered
    configuration (OPOLYX_JETSTREAM__REPLICAS from `nats.jetstream.replicas`): every stream
    and bucket it makes has that many replicas, placed on distinct nodes. A single server
    would refuse such a stream, so this is only provable on a cluster."""
    env = _resolved_environment(production_render, service, nats_cluster, chart_postgres, tmp_path)
    replicas = int(env["OPOLYX_JETSTREAM__REPLICAS"])
    assert replicas == 3 == len(nats_cluster.plain_urls)
    admin = await nats_cluster.connect()
    js = admin.jetstream()
    (command,) = _container(production_render, service)["command"]
    process = ServiceProcess([_script(command)], env, tmp_path, name=service).start()
    try:
        await _wait_for(process, "/readyz", timeout=120)
        streams = {str(info.config.name): info for info in await js.streams_info()}
        # At least these (a new stream or bucket is held to the same count below).
        assert STORAGE[service] <= set(streams), sorted(streams)
        for name, info in streams.items():
            assert info.config.num_replicas == replicas, f"{service}: {name}"
            assert info.cluster is not None and info.cluster.leader, name
            peers = [peer.name for peer in info.cluster.replicas or []]
            assert len({info.cluster.leader, *peers}) == replicas, f"{service}: {name} {peers}"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        process.kill()
        for info in await js.streams_info():
            assert info.config.name is not None
            await js.delete_stream(info.config.name)  # the next service finds none
        await admin.close()


def _script(command: str) -> str:
    path = Path(sys.executable).parent / command
    assert path.exists(), f"{command} is not installed in this environment"
    return str(path)


async def _wait_for(process: ServiceProcess, path: str, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if not process.running:
            raise AssertionError(f"{process.name} exited:\n{process.log_tail()}")
        try:
            status, body = await _get(process, path)
        except (OSError, httpx.HTTPError) as exc:
            status, body = 0, repr(exc).encode()
        if status == 200:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(
        f"{process.name} not ready on {path} ({status} {body!r}):\n{process.log_tail()}"
    )


CUSTOM_METRIC_SERIES = {
    "opolyx_bot_decisions_per_second": "opolyx_bot_decisions_total",
    "opolyx_gateway_sessions": "opolyx_gateway_sessions",
}
"""The series each autoscaler's custom metric comes from (the adapter rules in the chart
README)."""


async def _check_custom_metrics_are_exported(
    rendered: Rendered, started: dict[str, ServiceProcess]
) -> None:
    for hpa in rendered.of_kind("HorizontalPodAutoscaler"):
        component = hpa["metadata"]["labels"]["app.kubernetes.io/component"]
        for metric in hpa["spec"]["metrics"]:
            if metric["type"] != "Pods":
                continue
            series = CUSTOM_METRIC_SERIES[metric["pods"]["metric"]["name"]]
            status, body = await _get(started[component], "/metrics")
            assert status == 200 and f"# TYPE {series} " in body.decode(), (
                f"{component} does not export {series}"
            )


async def _get(process: ServiceProcess, path: str) -> tuple[int, bytes]:
    """GET on the process's HTTP port as a kubelet would (HTTP/1.1; the gateway keeps
    connections alive, so a read-until-close client would wait for nothing)."""
    async with httpx.AsyncClient(timeout=2.0) as client:
        response = await client.get(f"http://127.0.0.1:{process.http_port}{path}")
    return response.status_code, response.content


def _run_helm_test_pod(rendered: Rendered, gateway_port: int) -> None:
    """The `helm test` pod's own command, run against the gateway started above."""
    (pod,) = rendered.of_kind("Pod")
    container = pod["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    env["GATEWAY_URL"] = f"http://127.0.0.1:{gateway_port}"
    assert container["command"][0] == "python"
    result = subprocess.run(
        [sys.executable, *container["command"][1:], *container["args"]],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sign-in 201" in result.stdout or "sign-in 200" in result.stdout
