"""Shared runtime of opolyx services: settings, logs, tracing, metrics, probes, NATS."""

from opolyx_service.connection import connect_nats, ensure_kv, ensure_stream
from opolyx_service.health import HealthServer
from opolyx_service.logs import configure_logging, get_logger
from opolyx_service.runtime import ServiceRuntime, run_service
from opolyx_service.settings import (
    HttpSettings,
    LogSettings,
    NatsSettings,
    ServiceSettings,
    TelemetrySettings,
)
from opolyx_service.telemetry import configure_tracing, extracted_context, inject_headers

__all__ = [
    "HealthServer",
    "HttpSettings",
    "LogSettings",
    "NatsSettings",
    "ServiceRuntime",
    "ServiceSettings",
    "TelemetrySettings",
    "configure_logging",
    "configure_tracing",
    "connect_nats",
    "ensure_kv",
    "ensure_stream",
    "extracted_context",
    "get_logger",
    "inject_headers",
    "run_service",
]
