"""The table's streams and buckets take every service's `OPOLYX_JETSTREAM__REPLICAS`; the
table's older own name, `OPOLYX_TABLE__REPLICAS`, keeps working and wins when set."""

from __future__ import annotations

import pytest
from opolyx_service import JetStreamSettings
from opolyx_table.settings import TableConfig, TableSettings


def test_the_shared_setting_reaches_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPOLYX_JETSTREAM__REPLICAS", "3")
    monkeypatch.setenv("OPOLYX_TABLE__PARTITIONS", "8")
    settings = TableSettings()
    assert settings.jetstream.replicas == 3
    assert settings.table.replicas == 3
    assert settings.table.partitions == 8


def test_the_tables_own_name_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPOLYX_JETSTREAM__REPLICAS", "3")
    monkeypatch.setenv("OPOLYX_TABLE__REPLICAS", "1")
    assert TableSettings().table.replicas == 1
    monkeypatch.delenv("OPOLYX_JETSTREAM__REPLICAS")
    monkeypatch.setenv("OPOLYX_TABLE__REPLICAS", "3")
    assert TableSettings().table.replicas == 3


def test_neither_set_is_one_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPOLYX_JETSTREAM__REPLICAS", raising=False)
    monkeypatch.delenv("OPOLYX_TABLE__REPLICAS", raising=False)
    assert TableSettings().table.replicas == 1


def test_settings_built_in_code_follow_the_same_rule() -> None:
    shared = JetStreamSettings(replicas=3)
    assert TableSettings(jetstream=shared).table.replicas == 3
    assert TableSettings(jetstream=shared, table=TableConfig(partitions=4)).table.replicas == 3
    assert TableSettings(jetstream=shared, table=TableConfig(replicas=1)).table.replicas == 1


def test_a_replica_count_nats_refuses_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPOLYX_JETSTREAM__REPLICAS", "0")
    with pytest.raises(ValueError, match="replicas"):
        TableSettings()
