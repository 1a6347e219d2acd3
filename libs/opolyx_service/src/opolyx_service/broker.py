"""A FastStream NATS broker wired to the shared runtime: the default way to handle messages.

Handlers are typed (`async def on_x(body: SomeModel) -> Reply`): FastStream validates the
body and the AsyncAPI document (`asyncapi.py`) shows its schema. Every broker made here
- connects with the service's NATS settings (the same options as `connect_nats`);
- propagates trace context in headers (`NatsTelemetryMiddleware`) when the service exports
  traces (`OPOLYX_TELEMETRY__TRACES`), and does no tracing work otherwise;
- counts per handler into the service's Prometheus registry (`faststream_*{app_name}`);
- answers a request whose handler raised with the contract's error reply: a coded error
  (`ContractError`, a rules error) keeps its code, an invalid body is `request/invalid`,
  anything else is logged and answered `internal/error` (`errors.error_reply_for`);
- drops a request whose reply subject is not an inbox (`_INBOX.`), logged and counted,
  so no requester can make a handler publish elsewhere with its rights (`replies.py`);
- logs through structlog (FastStream's own logger would not propagate).

FastStream costs about 4x plain nats-py per request (STACK.md); a measured hot path may use
`broker.connection` directly, with the figure in a comment.
"""

from __future__ import annotations

import logging
from typing import Any

from faststream import ExceptionMiddleware
from faststream.nats import NatsBroker
from faststream.nats.opentelemetry import NatsTelemetryMiddleware
from faststream.nats.prometheus import NatsPrometheusMiddleware
from nats.aio.client import Client
from opolyx_contracts.envelope import ErrorReply
from opolyx_contracts.errors import INTERNAL
from prometheus_client import CollectorRegistry

from opolyx_service.connection import nats_connect_options, wait_until_reachable
from opolyx_service.errors import error_body
from opolyx_service.flushing import flush_in_order
from opolyx_service.logs import get_logger
from opolyx_service.metrics import connect_attempts, handler_errors
from opolyx_service.nats_auth import CLIENT_AUTH_OPTIONS, broker_options
from opolyx_service.replies import inbox_replies_only
from opolyx_service.settings import ServiceSettings

__all__ = ["ServiceBroker", "coded_error_replies", "create_broker", "start_broker"]


def coded_error_replies(
    service_name: str, registry: CollectorRegistry | None = None
) -> ExceptionMiddleware:
    """Turn an exception in a handler into the contract's error reply (sent when the message
    has a reply subject), logged and counted in `opolyx_handler_errors_total{code}`: nothing
    is dropped silently, not even a message nobody waits an answer for."""
    log = get_logger(f"{service_name}.handlers")
    errors = handler_errors(registry) if registry is not None else None

    async def reply_with_error(exc: Exception) -> bytes:
        body = error_body(exc, log)  # an uncoded exception is logged there, with traceback
        if body.code != INTERNAL:
            # Bad input is worth a warning; a refusal by the rules of the service is routine.
            level = log.warning if body.code.startswith("request/") else log.info
            level("message_refused", code=body.code, error=body.message)
        if errors is not None:
            errors.labels(body.code).inc()
        return ErrorReply(error=body).model_dump_json().encode()

    return ExceptionMiddleware(publish_handlers={Exception: reply_with_error})


class ServiceBroker(NatsBroker):
    """A NatsBroker that first waits until NATS is reachable, with the service's backoff
    (cancellable, counted in `opolyx_nats_connect_attempts_total`): connecting, starting
    and the first request all go through `_connect`."""

    def __init__(
        self, *args: Any, settings: ServiceSettings, registry: CollectorRegistry, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._opolyx_settings = settings
        self._opolyx_attempts = connect_attempts(registry)

    async def _connect(self) -> Client:
        settings = self._opolyx_settings
        await wait_until_reachable(
            settings.nats,
            f"{settings.service_name}-{settings.resolved_instance_id()}",
            on_attempt=self._count_attempt,
        )
        return await super()._connect()

    def _count_attempt(self, ok: bool) -> None:
        self._opolyx_attempts.labels("connected" if ok else "failed").inc()


def create_broker(
    settings: ServiceSettings, registry: CollectorRegistry, **options: Any
) -> NatsBroker:
    # Credentials, inbox and TLS go to FastStream as its own `security=` object instead.
    connect = {
        key: value
        for key, value in nats_connect_options(settings.nats).items()
        if key not in CLIENT_AUTH_OPTIONS
    }
    return ServiceBroker(
        connect.pop("servers"),
        **{
            **connect,
            # FastStream types these as int; it passes them on to nats-py unchanged.
            "connect_timeout": int(max(1, settings.nats.connect_timeout)),
            "reconnect_time_wait": settings.nats.reconnect_time_wait,
        },
        **broker_options(settings.nats),
        settings=settings,
        registry=registry,
        name=f"{settings.service_name}-{settings.resolved_instance_id()}",
        middlewares=(
            # A reply subject outside `_INBOX.` is refused before anything else (replies.py).
            inbox_replies_only(registry),
            coded_error_replies(settings.service_name, registry),
            # Spans cost about 30-40 us a message even with nothing exporting them (STACK.md):
            # no tracing middleware unless this service exports traces.
            *([NatsTelemetryMiddleware()] if settings.telemetry.traces != "none" else []),
            NatsPrometheusMiddleware(registry=registry, app_name=settings.service_name),
        ),
        logger=logging.getLogger(f"{settings.service_name}.broker"),
        **options,
    )


async def start_broker(broker: NatsBroker) -> None:
    """Start the handlers (waiting for NATS first, see `ServiceBroker`) and make sure the
    server knows every subscription before returning (`flush_in_order`: nats-py's own flush
    can return before the server has read the SUBs)."""
    await broker.start()
    await flush_in_order(broker.connection)
