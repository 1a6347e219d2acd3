"""Configuration from the environment (pydantic-settings), one nested class per concern.

Every variable starts with `OPOLYX_`; nested fields use `__`, e.g. `OPOLYX_NATS__URL`,
`OPOLYX_HTTP__PORT`, `OPOLYX_LOG__LEVEL`. A service subclasses `ServiceSettings` and adds
its own section (`OPOLYX_TABLE__PARTITIONS`). Settings are built once in `main()` and passed
in; nothing reads the environment at import time.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "HttpSettings",
    "LogSettings",
    "NatsSettings",
    "ServiceSettings",
    "TelemetrySettings",
]


class NatsSettings(BaseModel):
    url: str = "nats://127.0.0.1:4222"
    """NATS server URL(s), comma-separated for a cluster."""
    connect_timeout: float = 2.0
    """Seconds to wait for one connection attempt."""
    max_reconnect_attempts: int = -1
    """-1 reconnects forever: a service rides out a NATS restart."""
    reconnect_time_wait: float = 0.5
    """Seconds between reconnect attempts."""
    request_timeout: float = 5.0
    """Default timeout for requests a service makes."""

    @property
    def servers(self) -> list[str]:
        return [part.strip() for part in self.url.split(",") if part.strip()]


class HttpSettings(BaseModel):
    host: str = "127.0.0.1"
    """Interface of the health/metrics HTTP endpoint (0.0.0.0 in a container)."""
    port: int = 0
    """Port of /livez, /readyz and /metrics; 0 picks a free one (logged at start); -1 disables."""


class LogSettings(BaseModel):
    level: str = "INFO"
    """Root log level."""
    format: Literal["json", "console"] = "json"
    """json for machines; console for a developer's terminal."""


class TelemetrySettings(BaseModel):
    traces: Literal["none", "console", "otlp"] = "none"
    """Where spans go. Context is propagated through NATS headers whatever this says."""
    otlp_endpoint: str | None = None
    """OTLP/HTTP endpoint when traces=otlp (needs opentelemetry-exporter-otlp installed)."""


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OPOLYX_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    service_name: str = "opolyx"
    """Name in logs, traces and metrics."""
    instance_id: str = ""
    """Identity of this process among replicas; empty means hostname-pid."""
    shutdown_grace: float = 10.0
    """Seconds allowed to finish in-flight work after SIGTERM."""
    event_loop: Literal["auto", "asyncio", "uvloop"] = "auto"
    """auto uses uvloop when installed (much less overhead per message), else asyncio."""
    nats: NatsSettings = Field(default_factory=NatsSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)

    def resolved_instance_id(self) -> str:
        if self.instance_id:
            return self.instance_id
        import os
        import socket

        return f"{socket.gethostname()}-{os.getpid()}"
