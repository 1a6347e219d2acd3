"""Gateway configuration from the environment: the shared service settings (``OPOLYX_NATS__URL``,
``OPOLYX_HTTP__PORT``, ``OPOLYX_LOG__LEVEL``, ...) plus a ``gateway`` section
(``OPOLYX_GATEWAY__SIGNING_KEYS``, ...).

Settings are passed into ``create_app``; nothing reads the environment at import time.
"""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path

from opolyx_contracts.gateway import RESEND_WINDOW_SECONDS
from opolyx_service.settings import HttpSettings, ServiceSettings
from pydantic import BaseModel, Field, model_validator

__all__ = ["GatewayOptions", "GatewaySettings"]


class GatewayOptions(BaseModel):
    """The gateway's own section; each field can be set as ``OPOLYX_GATEWAY__<NAME>``."""

    signing_keys: dict[str, str] = Field(default_factory=dict)
    """Session-token keys by key id, as JSON (``{"k2": "...", "k1": "..."}``). Tokens signed
    with any listed key are accepted; remove a key id to revoke its tokens. When empty, one
    random key is made at start (tokens then die with the process)."""
    active_key_id: str | None = None
    """The key id new tokens are signed with; defaults to the first listed key."""
    token_ttl_seconds: int = Field(default=7 * 24 * 3600, gt=0)
    """How long a session token stays valid."""
    max_session_seconds: int = Field(default=30 * 24 * 3600, ge=0)
    """Longest a session lives from its sign-in, renewals included: no token expires later,
    and a renewal past it is refused with ``auth/session_ended`` (the player signs in
    again). 0: no limit."""

    sign_ins_per_minute: int = Field(default=30, gt=0)
    """Guest sign-ins one client address may make per minute (burst of as many)."""
    rate_per_second: float = Field(default=20.0, gt=0)
    """Sustained websocket messages per second one client may send."""
    rate_burst: int = Field(default=40, gt=0)
    """Messages a client may send at once before the rate applies."""
    rate_violations_before_close: int = Field(default=200, gt=0)
    """Refused messages within `rate_violation_window_seconds` after which a flooding socket
    is closed (1008). A leaky count, not a count in a row: the accepted messages a flood
    still gets through do not reset it."""
    rate_violation_window_seconds: float = Field(default=60.0, gt=0)
    """The window of that count: it drains by ``rate_violations_before_close`` per window."""
    max_message_bytes: int = Field(default=16_384, gt=0)
    """Largest websocket message accepted; a larger one (up to `max_frame_bytes`) gets a
    ``request/invalid`` reply and the socket stays open."""
    max_frame_bytes: int = Field(default=1_048_576, gt=0)
    """Largest websocket message read at all (the server's frame limit): a larger one closes
    the socket with 1009 (message too big) before the gateway sees it, so a client cannot
    make the gateway buffer more than this per socket."""
    flood_cooldown_seconds: float = Field(default=60.0, ge=0)
    """After a socket is closed for flooding (1008), its address and its player are refused
    new sockets this long (closed with 1008 at once), so a flooder cannot reconnect and
    flood again straight away."""
    max_sockets_per_address: int = Field(default=32, gt=0)
    """Open sockets one client address may hold at a time on this instance (players behind
    one NAT share an address: not too few); the next is closed with 1008."""
    trusted_proxies: list[str] = Field(default_factory=list)
    """Addresses or networks (``["10.0.0.0/8"]``) of reverse proxies in front of the gateway:
    only from these is ``X-Forwarded-For`` believed for the client's address (sign-in limit,
    socket cap, cool-down). Empty: the peer's address, whatever the header says."""
    auth_timeout_seconds: float = Field(default=10.0, gt=0)
    """A socket that has not sent a valid ``hello`` by then is closed."""
    send_queue_size: int = Field(default=2048, gt=0)
    """Pushes buffered for one slow client before it is disconnected."""
    replay_limit: int = Field(default=256, gt=0)
    """Most missed events replayed to a reconnecting client; beyond, a snapshot only."""
    replay_events_per_second: float = Field(default=64.0, gt=0)
    """Replayed events one socket may ask for per second (a burst of `replay_limit`): past
    it a resume gets the snapshot instead, so re-watching in a loop costs the gateway no
    more than this."""
    max_spectators_per_table: int = Field(default=100, gt=0)
    """Spectators one gateway instance lets watch one table (players are always let in);
    the next one is refused with ``table/too_many_spectators``.

    Per instance on purpose, so the cluster-wide bound is this times the gateway instances.
    What a spectator costs is paid only by the gateway holding its socket: the table sends
    one update per batch to NATS however many watch, NATS delivers it once per gateway that
    follows the table (one feed per table per instance, `hub.py`), and the serialising,
    fan-out and socket writes happen in that gateway; a spectator's resume reads are
    budgeted per socket (`replay_events_per_second`). A shared counter (a KV key per table
    and instance, watched by every gateway) would make the number exact cluster-wide at
    a write per watch and unwatch and a watcher in every gateway, and protect nothing this
    cap does not. Private rooms are not a matter of this cap: watching their game needs
    membership or the invite."""
    recent_replies: int = Field(default=10_000, gt=0)
    """Replies to other changing messages (lobby, chat, autopilot) remembered by the
    player's message id (`idempotency.py`): a retry gets the same reply, runs once."""
    recent_replies_seconds: float = Field(default=120.0, gt=0)
    """How long such a reply is remembered: at least the contract's
    ``RESEND_WINDOW_SECONDS`` (30), for which a client resends a message cut short."""
    recent_commands: int = Field(default=10_000, gt=0)
    """Table commands remembered by the player's message id: a retry with the same id is
    answered from here (or joins the one still in flight) instead of running twice."""

    gc_freeze_seconds: float = Field(default=0.5, ge=0)
    """Move the objects alive now out of the collector's full passes this often (0: never;
    see `opolyx_service.gc_policy` for the measurement)."""
    gc_reclaim_seconds: float = Field(default=600.0, gt=0)
    """Unfreeze and collect everything this often (frees what closed sockets left)."""
    static_dir: Path = Path(__file__).parent / "static"
    """The web client's files."""

    @model_validator(mode="after")
    def _keys(self) -> GatewayOptions:
        if not self.signing_keys:
            self.signing_keys = {"ephemeral": secrets.token_urlsafe(32)}
        if self.active_key_id is None:
            self.active_key_id = next(iter(self.signing_keys))
        if self.active_key_id not in self.signing_keys:
            raise ValueError(
                f"active_key_id {self.active_key_id!r} is not one of the signing keys "
                f"({', '.join(self.signing_keys)})"
            )
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy.strip(), strict=False)
            except ValueError:
                raise ValueError(f"trusted proxy {proxy!r} is not an address or network") from None
        if self.max_frame_bytes < self.max_message_bytes:
            raise ValueError("max_frame_bytes must be at least max_message_bytes")
        if self.recent_replies_seconds < RESEND_WINDOW_SECONDS:
            # a client's resend after the reply was forgotten would run the message again
            raise ValueError(
                f"recent_replies_seconds must be at least {RESEND_WINDOW_SECONDS:g}"
                " (how long a client resends a message cut short by a lost connection)"
            )
        for kid, key in self.signing_keys.items():
            if len(key) < 16:
                raise ValueError(f"signing key {kid!r} is too short: use at least 16 characters")
        return self


class GatewaySettings(ServiceSettings):
    """Shared service settings; ``http`` is where the gateway itself serves (port 8000)."""

    service_name: str = "opolyx-gateway"
    http: HttpSettings = Field(default_factory=lambda: HttpSettings(port=8000))
    gateway: GatewayOptions = Field(default_factory=GatewayOptions)
