"""The gateway's metrics, in the service skeleton's registry and names.

Every websocket message is counted as a handled message of the skeleton
(`opolyx_handled_total{subject="ws.<type>", outcome}`, `opolyx_handle_seconds{subject}`);
the gateway adds its own gauges (sockets, watched tables) and the table refusals it retried.
"""

from __future__ import annotations

from collections.abc import Sized

from opolyx_service.metrics import ServiceMetrics, counter, gauge
from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["GatewayMetrics"]


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry, service: ServiceMetrics) -> None:
        self._service = service
        self._children: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self.sessions = gauge(registry, "opolyx_gateway_sessions", "Open websockets")
        self.table_feeds = gauge(
            registry, "opolyx_gateway_table_feeds", "Tables watched (one subscription each)"
        )
        self.table_retries = counter(
            registry,
            "opolyx_gateway_table_retries",
            "Table commands retried after service/busy or table/not_owner",
        )
        self.replay_reads = counter(
            registry,
            "opolyx_gateway_replay_reads",
            "Stored batches read from the stream to replay missed events (search reads included)",
        )

    def watch(self, sessions: Sized, feeds: Sized) -> None:
        """Report the sizes of these collections at each scrape (nothing to do per message)."""
        self.sessions.set_function(lambda: len(sessions))
        self.table_feeds.set_function(lambda: len(feeds))

    def observe(self, kind: str, outcome: str, seconds: float) -> None:
        """Count one websocket message (the labelled children are looked up once each)."""
        key = (kind, outcome)
        children = self._children.get(key)
        if children is None:
            subject = f"ws.{kind}"
            children = self._children[key] = (
                self._service.handled_total.labels(subject, outcome),
                self._service.handle_seconds.labels(subject),
            )
        children[0].inc()
        children[1].observe(seconds)
