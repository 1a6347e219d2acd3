"""Configuration from the environment (pydantic-settings), one nested class per concern.

Every variable starts with `OPOLYX_`; nested fields use `__`, e.g. `OPOLYX_NATS__URL`,
`OPOLYX_HTTP__PORT`, `OPOLYX_LOG__LEVEL`, `OPOLYX_JETSTREAM__REPLICAS`. A service subclasses
`ServiceSettings` and adds its own section (`OPOLYX_TABLE__PARTITIONS`). Settings are built
once in `main()` and passed in; nothing reads the environment at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "HttpSettings",
    "JetStreamSettings",
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
    connect_backoff_initial: float = Field(default=0.2, gt=0)
    """Seconds before the second attempt when NATS is unreachable at start (then doubled)."""
    connect_backoff_max: float = Field(default=5.0, gt=0)
    """Longest wait between attempts to reach NATS at start."""
    # Credentials (docs/NATS_PERMISSIONS.md): one of user + password (or password_file),
    # creds_file, nkey_seed_file; or `user:password@` in the URL (the test harness does that).
    user: str | None = None
    """The service's NATS user, named after its role (table, gateway, lobby, bots, ...)."""
    password: SecretStr | None = None
    """Password of `user` (from a Secret); `password_file` is read when this is unset."""
    password_file: Path | None = None
    """File holding the password of `user` (`make run` writes one per role)."""
    creds_file: Path | None = None
    """A NATS .creds file (JWT + nkey seed, decentralised auth; needs the nkeys package)."""
    nkey_seed_file: Path | None = None
    """A file with an nkey seed (needs the nkeys package)."""
    inbox_prefix: str | None = None
    """Reply-inbox prefix; unset: `_INBOX.<user>` when a user is known (the server allows each
    role only its own inbox), else `_INBOX`. Set it (`_INBOX.<role>`) with creds or nkeys."""
    tls_ca_file: Path | None = None
    """CA bundle to verify the server with; setting any tls_* field turns TLS on."""
    tls_cert_file: Path | None = None
    """Client certificate (mutual TLS), with `tls_key_file`."""
    tls_key_file: Path | None = None
    tls_hostname: str | None = None
    """Server name to verify when it differs from the URL's host."""

    @property
    def servers(self) -> list[str]:
        return [part.strip() for part in self.url.split(",") if part.strip()]


class JetStreamSettings(BaseModel):
    replicas: int = Field(default=1, ge=1, le=5)
    """Replicas of every stream and bucket the service creates (`OPOLYX_JETSTREAM__REPLICAS`;
    3 on a 3-node cluster, so losing a node loses nothing; a single server accepts 1 only).
    Every `ensure_stream` / `ensure_kv` call of a service passes it."""


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
    jetstream: JetStreamSettings = Field(default_factory=JetStreamSettings)

    def resolved_instance_id(self) -> str:
        if self.instance_id:
            return self.instance_id
        import os
        import socket

        return f"{socket.gethostname()}-{os.getpid()}"
