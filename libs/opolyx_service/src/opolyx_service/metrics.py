"""Prometheus metric helpers; every metric lives in the runtime's registry (no globals)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["LATENCY_BUCKETS", "counter", "gauge", "histogram"]

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def counter(
    registry: CollectorRegistry, name: str, doc: str, labels: tuple[str, ...] = ()
) -> Counter:
    return Counter(name, doc, labels, registry=registry)


def gauge(registry: CollectorRegistry, name: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
    return Gauge(name, doc, labels, registry=registry)


def histogram(
    registry: CollectorRegistry,
    name: str,
    doc: str,
    labels: tuple[str, ...] = (),
    buckets: tuple[float, ...] = LATENCY_BUCKETS,
) -> Histogram:
    return Histogram(name, doc, labels, registry=registry, buckets=buckets)
