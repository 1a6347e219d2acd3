"""`ServiceMetrics.handled` counts each message under its subject and outcome; every metric
is named `opolyx_*` and built through the helpers that check it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from opolyx_service import metrics
from opolyx_service.metrics import ServiceMetrics
from opolyx_testing.sources import python_sources, source_roots
from prometheus_client import CollectorRegistry


def test_handled_counts_and_times_each_subject_and_outcome_apart() -> None:
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry, "svc", "i-1")
    for outcome in ("ok", "ok", "error", "ok"):
        metrics.handled("a.>", outcome, 0.003)
    metrics.handled("b.*", "ok", 2.0)
    metrics.handled("b.*", "busy", None)  # answered before any handling: counted, not timed

    def total(subject: str, outcome: str) -> float | None:
        labels = {"subject": subject, "outcome": outcome}
        return registry.get_sample_value("opolyx_handled_total", labels)

    assert (total("a.>", "ok"), total("a.>", "error"), total("b.*", "ok")) == (3, 1, 1)
    assert total("b.*", "busy") == 1
    assert registry.get_sample_value("opolyx_handle_seconds_count", {"subject": "b.*"}) == 1
    assert total("b.*", "error") is None
    count = registry.get_sample_value("opolyx_handle_seconds_count", {"subject": "a.>"})
    assert count == 4
    assert registry.get_sample_value("opolyx_handle_seconds_sum", {"subject": "b.*"}) == 2.0
    under = registry.get_sample_value(
        "opolyx_handle_seconds_bucket", {"subject": "a.>", "le": "0.005"}
    )
    assert under == 4


@pytest.mark.parametrize("make", [metrics.counter, metrics.gauge, metrics.histogram])
def test_a_metric_without_the_opolyx_prefix_is_refused(make: Any) -> None:
    registry = CollectorRegistry()
    with pytest.raises(ValueError, match="opolyx_"):
        make(registry, "table_commands", "Commands")
    make(registry, "opolyx_table_commands", "Commands")
    assert [m.name for m in registry.collect()] == ["opolyx_table_commands"]


REPO = Path(__file__).resolve().parents[3]
BUILDS_A_METRIC = re.compile(r"\b(Counter|Gauge|Histogram|Summary|Info|Enum)\(\s*\"")


def test_every_service_builds_its_metrics_through_the_named_helpers() -> None:
    """A metric built with prometheus_client directly would skip the prefix check (the
    table's and the lobby's once were `table_*` and `lobby_*`)."""
    sources = [
        path
        for path in python_sources(*source_roots(REPO))
        if path.name != "metrics.py" or path.parent.name != "opolyx_service"
    ]
    assert len(sources) > 50
    direct = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in sources
        for match in BUILDS_A_METRIC.finditer(path.read_text(encoding="utf-8"))
    ]
    assert direct == []
