"""Table-service configuration: `OPOLYX_TABLE__<FIELD>` on top of the shared settings."""

from __future__ import annotations

from opolyx_contracts.subjects import DEFAULT_TABLE_PARTITIONS
from opolyx_service import ServiceSettings
from pydantic import BaseModel, Field, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["TableConfig", "TableSettings"]


class TableConfig(BaseModel):
    partitions: int = DEFAULT_TABLE_PARTITIONS
    """Number of partitions tables hash into; every instance and client must agree."""
    lease_ttl: float = Field(default=2.0, gt=0)
    """Seconds a partition lease lives without a heartbeat; a dead instance's partitions move
    to a live one within about this long. Short, because renewals run on a thread and
    connection of their own (`leases.py`) and never wait behind commands: at 6 s a takeover
    took 7.0-7.5 s in the chaos test."""
    heartbeat: float = 0.0
    """Seconds between lease heartbeats; 0 means lease_ttl / 3."""
    peer_check: float = Field(default=0.25, ge=0)
    """Seconds between asking the other instances whether they live (`leases.py`): a killed
    instance's partitions move within about this long, not the TTL. 0: wait for the TTL."""
    bot_reask: float = 3.0
    """Seconds to wait for a bot seat's command before asking the bots again."""
    bot_pace: float = Field(default=1.0, ge=0, le=10)
    """Scale of the bots' think time at a table with people (about 0.5-1.5 s per decision
    at 1, see `pace.py`); 0 asks bots at once (tests, simulations)."""
    presence_ttl: float = Field(default=90.0, gt=0)
    """Seconds a gateway's word that a player is connected holds; gateways repeat it every
    30 s (`SeatPresenceReports.REFRESH_SECONDS`), so one that died stops counting."""
    autopilot_grace: float = Field(default=30.0, ge=0)
    """Seconds a seated player's seat waits for them after their connection drops (its own
    clock runs meanwhile) before the autopilot plays it, where the room allows that."""
    recent_commands: int = 64
    """Command ids remembered per table (persisted) to answer resent commands."""
    replicas: int = Field(default=1, ge=1, le=5)
    """JetStream replicas of the table's streams and buckets. Unset, it is every service's
    `OPOLYX_JETSTREAM__REPLICAS` (`TableSettings` fills it in); this older, table-only name
    keeps working and wins when set."""
    duplicate_window: float = 120.0
    """Seconds JetStream remembers message ids to drop duplicates."""
    events_max_age: float = 7 * 24 * 3600.0
    """Seconds TABLE_EVENTS keeps events (far longer than any game; a finished game's
    commands also travel in its `opolyx.game.finished` message)."""
    max_in_flight: int = Field(default=256, ge=1)
    """Commands waiting or running in this instance beyond which a new one is answered
    `service/busy` (the sender retries with backoff) instead of queueing without bound."""
    snapshot_every: int = Field(default=64, ge=1)
    """Write a table's snapshot once this many events are stored after the last one (the
    events stream is the record; loading replays what the snapshot lacks)."""
    snapshot_idle: float = Field(default=2.0, gt=0)
    """Seconds without a change after which a table's snapshot is brought up to date."""
    gc_freeze_seconds: float = Field(default=0.5, ge=0)
    """Move the objects alive now out of the collector's full passes this often (0: never;
    see `opolyx_service.gc_policy` for the measurement)."""
    gc_reclaim_seconds: float = Field(default=600.0, gt=0)
    """Unfreeze and collect everything this often (frees cyclic garbage frozen meanwhile)."""
    clock_rate: float = Field(default=1.0, gt=0)
    """Game seconds per wall-clock second for new tables (1 in play; tests and demos speed
    timers up). Each table keeps the rate it was created with."""

    @property
    def heartbeat_interval(self) -> float:
        return self.heartbeat if self.heartbeat > 0 else self.lease_ttl / 3


class TableSettings(ServiceSettings):
    model_config = SettingsConfigDict(
        env_prefix="OPOLYX_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    service_name: str = "table"
    table: TableConfig = Field(default_factory=TableConfig)

    @model_validator(mode="after")
    def _replicas_from_the_shared_setting(self) -> TableSettings:
        """`table.replicas` unset: the shared `jetstream.replicas`, so the table's code keeps
        reading one field whichever name the deployment set."""
        if "replicas" not in self.table.model_fields_set:
            table = self.table.model_copy(update={"replicas": self.jetstream.replicas})
            object.__setattr__(self, "table", table)  # frozen: this is its construction
        return self
