"""Prometheus metric helpers; every metric lives in the runtime's registry (no globals)."""

from __future__ import annotations

import weakref

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "LATENCY_BUCKETS",
    "PREFIX",
    "ServiceMetrics",
    "connect_attempts",
    "counter",
    "gauge",
    "handler_errors",
    "histogram",
]

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


PREFIX = "opolyx_"
"""Every opolyx metric starts with it (a service's own: ``opolyx_<service>_...``), so a
dashboard or an alert selects all of them with one pattern; FastStream's own are
``faststream_*``."""


def _named(name: str) -> str:
    if not name.startswith(PREFIX):
        raise ValueError(f"metric {name!r} must be named {PREFIX}<service>_...")
    return name


def counter(
    registry: CollectorRegistry, name: str, doc: str, labels: tuple[str, ...] = ()
) -> Counter:
    """A counter; Prometheus appends ``_total`` to `name` (give it without)."""
    return Counter(_named(name), doc, labels, registry=registry)


def gauge(registry: CollectorRegistry, name: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
    return Gauge(_named(name), doc, labels, registry=registry)


def histogram(
    registry: CollectorRegistry,
    name: str,
    doc: str,
    labels: tuple[str, ...] = (),
    buckets: tuple[float, ...] = LATENCY_BUCKETS,
) -> Histogram:
    return Histogram(_named(name), doc, labels, registry=registry, buckets=buckets)


_CONNECT_ATTEMPTS: weakref.WeakKeyDictionary[CollectorRegistry, Counter] = (
    weakref.WeakKeyDictionary()
)


def connect_attempts(registry: CollectorRegistry) -> Counter:
    """`opolyx_nats_connect_attempts_total{outcome}` of `registry` (one per registry: the
    runtime and every broker of a service count into the same one)."""
    found = _CONNECT_ATTEMPTS.get(registry)
    if found is None:
        found = _CONNECT_ATTEMPTS[registry] = counter(
            registry,
            "opolyx_nats_connect_attempts",
            "Attempts to reach NATS at start, by outcome (connected, failed)",
            ("outcome",),
        )
    return found


_HANDLER_ERRORS: weakref.WeakKeyDictionary[CollectorRegistry, Counter] = weakref.WeakKeyDictionary()


def handler_errors(registry: CollectorRegistry) -> Counter:
    """`opolyx_handler_errors_total{code}`: requests answered with an error reply (or, with
    no reply subject, dropped), by the error's code."""
    found = _HANDLER_ERRORS.get(registry)
    if found is None:
        found = _HANDLER_ERRORS[registry] = counter(
            registry,
            "opolyx_handler_errors",
            "Messages a handler refused or failed on, by error code",
            ("code",),
        )
    return found


class ServiceMetrics:
    """The metrics every service exports under the same names (labels say which service).

    - ``opolyx_service_info{service, instance}`` 1 while the process runs
    - ``opolyx_service_ready`` 1 when ``/readyz`` would answer 200 (updated on each probe)
    - ``opolyx_service_draining`` 1 once shutdown has begun
    - ``opolyx_nats_connect_attempts_total{outcome}`` connection attempts at start
    - ``opolyx_handler_errors_total{code}`` messages FastStream handlers refused or failed on
    - ``opolyx_handled_total{subject, outcome}`` and ``opolyx_handle_seconds{subject}`` for
      handlers on plain nats-py (``handled``); FastStream handlers are counted by its own
      Prometheus middleware as ``faststream_*{app_name=<service>}``.
    """

    def __init__(self, registry: CollectorRegistry, service: str, instance: str) -> None:
        self.info = gauge(
            registry, "opolyx_service_info", "This service process", ("service", "instance")
        )
        self.info.labels(service, instance).set(1)
        self.ready = gauge(registry, "opolyx_service_ready", "1 when the service is ready")
        self.draining = gauge(registry, "opolyx_service_draining", "1 once shutdown has begun")
        self.connect_attempts = connect_attempts(registry)
        self.handled_total = counter(
            registry,
            "opolyx_handled",
            "Messages handled, by subject and outcome",
            ("subject", "outcome"),
        )
        self.handle_seconds = histogram(
            registry, "opolyx_handle_seconds", "Time to handle one message", ("subject",)
        )
        self._handled_children: dict[tuple[str, str], tuple[Counter, Histogram]] = {}

    def handled(self, subject: str, outcome: str, seconds: float | None) -> None:
        """Count one message handled on a plain nats-py subscription (subject: its pattern),
        and the time it took; `seconds` None for one answered before any handling (shed as
        busy, refused unread): counted, but no made-up time in `opolyx_handle_seconds`.
        The labelled children are looked up once per (subject, outcome): `labels()` takes a
        lock and checks its values each time (two calls per table command)."""
        children = self._handled_children.get((subject, outcome))
        if children is None:
            children = self._handled_children[subject, outcome] = (
                self.handled_total.labels(subject, outcome),
                self.handle_seconds.labels(subject),
            )
        children[0].inc()
        if seconds is not None:
            children[1].observe(seconds)
