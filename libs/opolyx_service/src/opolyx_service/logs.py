"""structlog JSON logs for the service and every stdlib logger (FastStream, uvicorn, nats).

One handler on the root logger with `structlog.stdlib.ProcessorFormatter`, so structlog
and stdlib records share one format; trace and span ids come from the current
OpenTelemetry span. Loggers that install their own handlers or do not propagate
(FastStream, uvicorn) are reset to propagate to the root.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog
from opentelemetry import trace

__all__ = ["THIRD_PARTY_LOGGERS", "configure_logging", "get_logger"]

THIRD_PARTY_LOGGERS = (
    "faststream",
    "faststream.access",
    "faststream.access.nats",
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "nats",
    "nats.aio.client",
    "litestar",
    "alembic",
    "sqlalchemy",
)


def _add_trace_ids(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event_dict["trace_id"] = format(context.trace_id, "032x")
        event_dict["span_id"] = format(context.span_id, "016x")
    return event_dict


def configure_logging(
    service_name: str,
    level: str = "INFO",
    fmt: str = "json",
    stream: Any = None,
) -> None:
    """Route every log record of the process through structlog's formatter."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_trace_ids,
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in THIRD_PARTY_LOGGERS:
        third_party = logging.getLogger(name)
        for old in list(third_party.handlers):
            third_party.removeHandler(old)
        third_party.propagate = True
    structlog.contextvars.bind_contextvars(service=service_name)


def get_logger(name: str) -> Any:
    return structlog.stdlib.get_logger(name)
