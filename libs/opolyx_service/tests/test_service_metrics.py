"""`ServiceMetrics.handled` counts each message under its subject and outcome."""

from __future__ import annotations

from opolyx_service.metrics import ServiceMetrics
from prometheus_client import CollectorRegistry


def test_handled_counts_and_times_each_subject_and_outcome_apart() -> None:
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry, "svc", "i-1")
    for outcome in ("ok", "ok", "error", "ok"):
        metrics.handled("a.>", outcome, 0.003)
    metrics.handled("b.*", "ok", 2.0)

    def total(subject: str, outcome: str) -> float | None:
        labels = {"subject": subject, "outcome": outcome}
        return registry.get_sample_value("opolyx_handled_total", labels)

    assert (total("a.>", "ok"), total("a.>", "error"), total("b.*", "ok")) == (3, 1, 1)
    assert total("b.*", "error") is None
    count = registry.get_sample_value("opolyx_handle_seconds_count", {"subject": "a.>"})
    assert count == 4
    assert registry.get_sample_value("opolyx_handle_seconds_sum", {"subject": "b.*"}) == 2.0
    under = registry.get_sample_value(
        "opolyx_handle_seconds_bucket", {"subject": "a.>", "le": "0.005"}
    )
    assert under == 4
