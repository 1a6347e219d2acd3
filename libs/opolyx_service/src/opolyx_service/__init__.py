"""The one service skeleton: settings, logs, tracing, metrics, probes, NATS, errors, shutdown.

See README.md ("How to write a service") for the shape every service follows.
"""

from opolyx_service.asyncapi import Interface, asyncapi_document
from opolyx_service.broker import coded_error_replies, create_broker
from opolyx_service.connection import (
    NatsAuthorizationFailed,
    connect_nats,
    create_stream_if_missing,
    ensure_kv,
    ensure_stream,
    nats_connect_options,
    wait_until_reachable,
)
from opolyx_service.direct import subscribe_direct
from opolyx_service.errors import ContractError, error_body, error_reply_for
from opolyx_service.flushing import flush_in_order
from opolyx_service.health import (
    LIVENESS_PATH,
    METRICS_PATH,
    READINESS_PATH,
    HealthServer,
    Readiness,
    ReadinessReport,
    readiness_response,
)
from opolyx_service.logs import configure_logging, get_logger
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.replies import safe_reply_subject
from opolyx_service.runtime import ServiceRuntime, run_service
from opolyx_service.settings import (
    HttpSettings,
    JetStreamSettings,
    LogSettings,
    NatsSettings,
    ServiceSettings,
    TelemetrySettings,
)
from opolyx_service.tasks import cancel_and_wait
from opolyx_service.telemetry import (
    configure_tracing,
    extracted_context,
    inject_headers,
    traced_headers,
)

__all__ = [
    "LIVENESS_PATH",
    "METRICS_PATH",
    "READINESS_PATH",
    "ContractError",
    "HealthServer",
    "HttpSettings",
    "Interface",
    "JetStreamSettings",
    "LogSettings",
    "NatsAuthorizationFailed",
    "NatsSettings",
    "Readiness",
    "ReadinessReport",
    "ServiceMetrics",
    "ServiceRuntime",
    "ServiceSettings",
    "TelemetrySettings",
    "asyncapi_document",
    "cancel_and_wait",
    "coded_error_replies",
    "configure_logging",
    "configure_tracing",
    "connect_nats",
    "create_broker",
    "create_stream_if_missing",
    "ensure_kv",
    "ensure_stream",
    "error_body",
    "error_reply_for",
    "extracted_context",
    "flush_in_order",
    "get_logger",
    "inject_headers",
    "nats_connect_options",
    "readiness_response",
    "run_service",
    "safe_reply_subject",
    "subscribe_direct",
    "traced_headers",
    "wait_until_reachable",
]
