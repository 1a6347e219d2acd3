"""The chart on its own: it lints, renders valid Kubernetes objects, and has the shape an SRE
expects (probes on named ports, non-root read-only pods, spread, drain, PDBs, HPAs only where
a service is stateless, secrets only from Secrets, a schema that refuses bad values)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
from opolyx_contracts.permissions import SERVICE_ROLES

from .conftest import CHART, COMPONENTS, Rendered, component_name, production_values

OLDEST_KUBERNETES = "1.30.0"
"""The chart's kubeVersion floor (the preStop sleep action is on by default from 1.30)."""
STATELESS = {"bots", "gateway", "lobby", "chat"}
"""Services that keep no state of their own (NATS holds it): the only ones an HPA may scale.
The table owns leased partitions; progression writes SQL and migrates at start."""
NOT_IN_KUBERNETES_SCHEMAS = {"ServiceMonitor"}
"""Custom resources (Prometheus Operator): checked by shape below instead."""


@pytest.mark.parametrize("values", ["default", "production"])
def test_the_chart_lints_without_warnings(values: str) -> None:
    report = helm_python.lint(
        CHART,
        production_values() if values == "production" else {},
        strict=True,
        kube_version=f"v{OLDEST_KUBERNETES}",
    )
    assert report["errors"] == []
    serious = [m for m in report["messages"] if m["severity"] >= 2]
    assert serious == []


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, kubernetes_validate.latest_version()])
@pytest.mark.parametrize("values", ["default", "production"])
def test_every_rendered_object_is_valid_kubernetes(
    values: str, version: str, default_render: Rendered, production_render: Rendered
) -> None:
    rendered = production_render if values == "production" else default_render
    checked = 0
    for obj in rendered.objects:
        if obj["kind"] in NOT_IN_KUBERNETES_SCHEMAS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 6 * 4  # a Deployment, ConfigMap, Service and PDB per service at least


def test_each_service_has_one_deployment(
    default_render: Rendered, production_render: Rendered
) -> None:
    assert set(production_render.deployments()) == set(COMPONENTS)
    assert set(default_render.deployments()) == set(COMPONENTS)


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def test_probes_use_named_ports_the_container_declares(production_render: Rendered) -> None:
    for component, deployment in production_render.deployments().items():
        container = _container(deployment)
        port_names = {port["name"] for port in container["ports"]}
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            http = container[probe]["httpGet"]
            assert isinstance(http["port"], str), f"{component} {probe} uses a port number"
            assert http["port"] in port_names, f"{component} {probe} port {http['port']}"
        assert (
            container["readinessProbe"]["httpGet"]["path"]
            != (container["livenessProbe"]["httpGet"]["path"])
        ), f"{component}: readiness must be able to fail while the process lives"


def test_pods_run_as_non_root_on_a_read_only_root(production_render: Rendered) -> None:
    pods = [d["spec"]["template"]["spec"] for d in production_render.of_kind("Deployment")]
    pods += [p["spec"] for p in production_render.of_kind("Pod")]  # the helm test pod
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            assert "limits" in container["resources"] and "requests" in container["resources"]


def test_pods_spread_and_drain_before_they_stop(production_render: Rendered) -> None:
    for component, deployment in production_render.deployments().items():
        pod = deployment["spec"]["template"]["spec"]
        spread = pod["topologySpreadConstraints"]
        assert spread and all(
            c["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == component
            for c in spread
        )
        container = _container(deployment)
        drain = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        grace = float(production_render.plain(component, "OPOLYX_SHUTDOWN_GRACE"))
        assert drain > 0
        assert pod["terminationGracePeriodSeconds"] > drain + grace


def test_a_grace_period_too_short_for_the_drain_is_refused(production_with: Any) -> None:
    values = production_with({"table": {"terminationGracePeriodSeconds": 12}})
    with (
        helm_python.Chart.load(CHART) as chart,
        pytest.raises(helm_python.HelmRenderError, match="terminationGracePeriodSeconds"),
    ):
        chart.render(values)


def test_a_configuration_change_rolls_only_that_service(
    render_chart: Any, production_with: Any, production_render: Rendered
) -> None:
    changed = render_chart(production_with({"table": {"settings": {"lease_ttl": 9}}}))

    def checksums(rendered: Rendered) -> dict[str, str]:
        return {
            name: d["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
            for name, d in rendered.deployments().items()
        }

    before, after = checksums(production_render), checksums(changed)
    assert before["table"] != after["table"]
    assert {k: v for k, v in before.items() if k != "table"} == {
        k: v for k, v in after.items() if k != "table"
    }


def test_autoscalers_scale_bots_and_gateway_only(production_render: Rendered) -> None:
    hpas = production_render.of_kind("HorizontalPodAutoscaler")
    targets = {h["spec"]["scaleTargetRef"]["name"]: h for h in hpas}
    assert set(targets) == {component_name("bots"), component_name("gateway")}
    deployments = production_render.deployments()
    for component in deployments:
        if component_name(component) in targets:
            assert component in STATELESS
            # The autoscaler owns the replica count; the Deployment must not fight it.
            assert "replicas" not in deployments[component]["spec"]
    bots_metrics = targets[component_name("bots")]["spec"]["metrics"]
    assert [m["type"] for m in bots_metrics] == ["Resource", "Pods"]
    assert bots_metrics[1]["pods"]["metric"]["name"] == "opolyx_bot_decisions_per_second"
    gateway_metrics = targets[component_name("gateway")]["spec"]["metrics"]
    assert gateway_metrics[1]["pods"]["metric"]["name"] == "opolyx_gateway_sessions"


def test_autoscaling_a_stateful_service_is_refused_even_without_the_schema(
    render_chart: Any, production_with: Any, tmp_path: Path
) -> None:
    values = production_with({"table": {"autoscaling": {"enabled": True}}})
    with pytest.raises(helm_python.HelmValuesError, match="must be false"):
        render_chart(values)
    # The template refuses too (a chart vendored without its schema, a schema edit gone wrong).
    unchecked = tmp_path / "opolyx"
    shutil.copytree(CHART, unchecked)
    (unchecked / "values.schema.json").unlink()
    with (
        helm_python.Chart.load(unchecked) as chart,
        pytest.raises(helm_python.HelmRenderError, match="cannot autoscale"),
    ):
        chart.render(values)


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ({"bots": {"replicas": "three"}}, "got string, want integer"),
        ({"bots": {"replica": 3}}, "replica"),
        ({"defaults": {"resources": {"request": {"cpu": "1"}}}}, "request"),
        ({"progression": {"autoscaling": {"enabled": True}}}, "must be false"),
        ({"nats": {"auth": {"mode": "open"}}}, "mode"),
        ({"nats": {"auth": {"roleSecrets": {"admin": "x"}}}}, "admin"),
        ({"gateway": {"extraEnv": {"PATH": "/bin"}}}, "PATH"),
        ({"table": {"settings": {"Partitions": 3}}}, "Partitions"),
        ({"table": {"settings": {"lease_tll": 6}}}, "lease_tll"),
        ({"table": {"settings": {"snapshot_every": 0}}}, "minimum"),
        ({"bots": {"settings": {"command_timeout_seconds": "soon"}}}, "want number"),
        ({"progression": {"settings": {"database_url": "postgresql://x"}}}, "database_url"),
        ({"progression": {"settings": {"farming": {"window_games": 1000}}}}, "maximum"),
        ({"unknownTopLevel": True}, "unknownTopLevel"),
        ({"defaults": {"settings": {"partitions": 3}}}, "maxProperties"),
    ],
)
def test_the_schema_refuses_bad_values(
    override: dict[str, Any], reason: str, production_with: Any
) -> None:
    with (
        helm_python.Chart.load(CHART) as chart,
        pytest.raises(helm_python.HelmValuesError, match=reason),
    ):
        chart.validate_schema(production_with(override))


def test_services_that_must_keep_a_replica_have_disruption_budgets(
    default_render: Rendered, production_render: Rendered
) -> None:
    def budgets(rendered: Rendered) -> set[str]:
        return {
            p["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"]
            for p in rendered.of_kind("PodDisruptionBudget")
        }

    assert budgets(production_render) == set(COMPONENTS)
    # SQLite progression runs one pod whose data dies with it: no budget to block a drain.
    assert budgets(default_render) == set(COMPONENTS) - {"progression"}


def test_each_service_connects_to_nats_as_its_own_role(production_render: Rendered) -> None:
    roles = {role.name for role in SERVICE_ROLES}
    for component, deployment in production_render.deployments().items():
        env = production_render.environment(component)
        assert env["OPOLYX_NATS__USER"] == component and component in roles
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        secret = volumes["nats-credentials"]["secret"]
        assert secret["secretName"] == "opolyx-nats-credentials"
        # Only the role's own key is mounted: a pod cannot read another role's password.
        assert secret["items"] == [{"key": component, "path": "password"}]


def test_creds_mode_mounts_a_creds_file_and_the_roles_inbox(
    render_chart: Any, production_with: Any
) -> None:
    rendered = render_chart(
        production_with({"nats": {"auth": {"mode": "creds", "roleSecrets": {"bots": "b"}}}})
    )
    env = rendered.environment("bots")
    assert env["OPOLYX_NATS__CREDS_FILE"].endswith("nats.creds")
    assert env["OPOLYX_NATS__INBOX_PREFIX"] == "_INBOX.bots"
    assert "OPOLYX_NATS__USER" not in env
    volumes = rendered.deployments()["bots"]["spec"]["template"]["spec"]["volumes"]
    secret = next(v["secret"] for v in volumes if v["name"] == "nats-credentials")
    assert secret["secretName"] == "b"


def test_secrets_reach_pods_only_as_secret_references(production_render: Rendered) -> None:
    gateway = production_render.environment("gateway")
    assert gateway["OPOLYX_GATEWAY__SIGNING_KEYS"] == {
        "secretKeyRef": {"name": "opolyx-signing-keys", "key": "signing-keys.json"}
    }
    assert gateway["OPOLYX_GATEWAY__ACTIVE_KEY_ID"] == "k2"
    progression = production_render.environment("progression")
    assert progression["OPOLYX_PROGRESSION__DATABASE_URL"] == {
        "secretKeyRef": {"name": "opolyx-progression-db", "key": "dsn"}
    }
    chat = production_render.environment("chat")
    assert chat["OPOLYX_CHAT__OPERATOR__TOKEN"] == {
        "secretKeyRef": {"name": "opolyx-chat-operator", "key": "token"}
    }
    assert not production_render.of_kind("Secret")  # every secret is an existing one
    for config_map in production_render.of_kind("ConfigMap"):
        for name in config_map["data"]:
            assert not name.endswith(("PASSWORD", "SIGNING_KEYS", "DATABASE_URL", "TOKEN"))


def test_without_an_existing_secret_the_chart_keeps_one_signing_key(
    default_render: Rendered,
) -> None:
    (secret,) = default_render.of_kind("Secret")
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert set(secret["data"]) == {"signing-keys.json"}


def test_the_gateway_is_published_with_websocket_friendly_settings(
    production_render: Rendered,
) -> None:
    (ingress,) = production_render.of_kind("Ingress")
    annotations = ingress["metadata"]["annotations"]
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    service = production_render.named("Service", backend["name"])
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    assert ingress["spec"]["tls"][0]["secretName"] == "opolyx-tls"


def test_the_service_monitor_scrapes_the_ports_the_services_expose(
    production_render: Rendered, default_render: Rendered
) -> None:
    assert not default_render.of_kind("ServiceMonitor")
    (monitor,) = production_render.of_kind("ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    scraped = {e["port"] for e in monitor["spec"]["endpoints"]}
    selector = monitor["spec"]["selector"]["matchLabels"]
    for service in production_render.of_kind("Service"):
        assert selector.items() <= service["metadata"]["labels"].items()
        assert scraped & {p["name"] for p in service["spec"]["ports"]}


def test_traces_go_to_the_collector_when_an_endpoint_is_set(
    production_render: Rendered, default_render: Rendered
) -> None:
    for component in production_render.deployments():
        assert production_render.plain(component, "OPOLYX_TELEMETRY__TRACES") == "otlp"
        endpoint = production_render.plain(component, "OPOLYX_TELEMETRY__OTLP_ENDPOINT")
        assert endpoint.startswith("http://otel-collector")
    assert "OPOLYX_TELEMETRY__TRACES" not in default_render.environment("table")


def test_every_service_gets_the_stream_and_bucket_replicas_of_the_jetstream_value(
    render_chart: Any, production_with: Any
) -> None:
    rendered = render_chart(production_with({"nats": {"jetstream": {"replicas": 5}}}))
    deployments = rendered.deployments()
    assert set(deployments) == set(COMPONENTS)
    for component in deployments:
        assert rendered.environment(component)["OPOLYX_JETSTREAM__REPLICAS"] == "5", component
    # The table's own older setting is no longer needed; given, it still reaches the table.
    assert "OPOLYX_TABLE__REPLICAS" not in rendered.environment("table")
    own = render_chart(production_with({"table": {"settings": {"replicas": 1}}}))
    assert own.environment("table")["OPOLYX_TABLE__REPLICAS"] == "1"
    assert own.environment("table")["OPOLYX_JETSTREAM__REPLICAS"] == "3"


def test_the_helm_test_pod_is_a_test_hook(production_render: Rendered) -> None:
    (pod,) = production_render.of_kind("Pod")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    service = production_render.named("Service", component_name("gateway"))
    assert env["GATEWAY_URL"] == f"http://{component_name('gateway')}:80"
    assert service["spec"]["ports"][0]["port"] == 80


KUBERNETES_OBJECTS = {"podSecurityContext", "containerSecurityContext", "resources", "annotations"}
"""Values passed to Kubernetes as they are: their fields are Kubernetes' own, documented there."""


def test_every_value_has_a_comment() -> None:
    lines = (CHART / "values.yaml").read_text().splitlines()
    parents: list[tuple[int, str]] = []  # (indent, key) of the mappings around a line
    undocumented = []
    for number, line in enumerate(lines):
        match = re.match(r"^( *)([A-Za-z0-9_./-]+):", line)
        if not match or line.lstrip().startswith("#"):
            continue
        indent, key = len(match.group(1)), match.group(2)
        while parents and parents[-1][0] >= indent:
            parents.pop()
        inside_kubernetes_object = any(k in KUBERNETES_OBJECTS for _, k in parents)
        previous = lines[number - 1].strip() if number else ""
        if not inside_kubernetes_object and not previous.startswith("#"):
            undocumented.append(f"line {number + 1}: {key}")
        parents.append((indent, key))
    assert undocumented == []
