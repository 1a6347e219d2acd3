"""A FastStream NATS broker wired to the shared runtime (for FastStream-based services).

Trace context travels in headers (`NatsTelemetryMiddleware`), per-handler counters go to
the service's Prometheus registry, FastStream's own logger goes through structlog.
"""

from __future__ import annotations

import logging
from typing import Any

from faststream.nats import NatsBroker
from faststream.nats.opentelemetry import NatsTelemetryMiddleware
from faststream.nats.prometheus import NatsPrometheusMiddleware
from prometheus_client import CollectorRegistry

from opolyx_service.settings import ServiceSettings

__all__ = ["create_broker"]


def create_broker(
    settings: ServiceSettings, registry: CollectorRegistry, **options: Any
) -> NatsBroker:
    return NatsBroker(
        settings.nats.servers,
        name=f"{settings.service_name}-{settings.resolved_instance_id()}",
        connect_timeout=int(max(1, settings.nats.connect_timeout)),
        max_reconnect_attempts=settings.nats.max_reconnect_attempts,
        middlewares=(
            NatsTelemetryMiddleware(),
            NatsPrometheusMiddleware(registry=registry, app_name=settings.service_name),
        ),
        logger=logging.getLogger(f"{settings.service_name}.broker"),
        **options,
    )
