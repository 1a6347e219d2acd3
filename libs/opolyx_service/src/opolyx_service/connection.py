"""Connecting to NATS and declaring JetStream streams and KV buckets idempotently.

A service that starts while NATS is unreachable waits in `wait_until_reachable`: one short
probe connection per attempt, exponential backoff with jitter up to
`NatsSettings.connect_backoff_max`, one log line per attempt. The wait is an ordinary await,
so a shutdown signal cancels it at once (see `runtime.run_service`).

Refused credentials are not "not yet": retrying cannot fix them, and a service retrying
forever looks alive while it never serves. An authorization violation at connect is logged
once (naming the user, never the password) and raised as `NatsAuthorizationFailed`; the
runtime exits non-zero on it (`runtime.ServiceRuntime.run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.aio.client import Client
from nats.errors import AuthorizationError
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from opolyx_service.logs import get_logger
from opolyx_service.nats_auth import connect_options, nats_user, redacted_servers
from opolyx_service.settings import NatsSettings

__all__ = [
    "NatsAuthorizationFailed",
    "connect_nats",
    "ensure_kv",
    "ensure_stream",
    "nats_connect_options",
    "wait_until_reachable",
]

log = get_logger("opolyx_service.nats")


class NatsAuthorizationFailed(Exception):
    """The server refused this service's credentials: fatal, not retried."""

    def __init__(self, user: str | None, servers: list[str]) -> None:
        super().__init__(f"NATS refused the credentials of user {user!r} at {servers}")
        self.user = user
        self.servers = servers


def is_authorization_failure(exc: BaseException) -> bool:
    """nats-py raises the server's `-ERR 'Authorization Violation'` at connect as a plain
    `nats.errors.Error`; `AuthorizationError` where it does recognise it."""
    return isinstance(exc, AuthorizationError) or "authorization violation" in str(exc).lower()


def nats_connect_options(settings: NatsSettings) -> dict[str, Any]:
    """The nats-py connect options every connection of a service shares: the probe, plain
    nats-py connections and FastStream's broker (`broker.create_broker`)."""
    return {
        "servers": settings.servers,
        "connect_timeout": settings.connect_timeout,
        "max_reconnect_attempts": settings.max_reconnect_attempts,
        "reconnect_time_wait": settings.reconnect_time_wait,
        # Credentials, the role's reply inbox and TLS (docs/NATS_PERMISSIONS.md).
        **connect_options(settings),
    }


async def wait_until_reachable(
    settings: NatsSettings,
    name: str,
    on_attempt: Callable[[bool], None] | None = None,
    **options: Any,
) -> None:
    """Return once NATS accepts a connection with these settings; retry with backoff forever
    while it is unreachable. Refused credentials raise `NatsAuthorizationFailed` at once.

    `on_attempt(ok)` is told every attempt's outcome (metrics). Cancel the awaiting task to
    give up (a shutdown signal does).
    """
    delay = settings.connect_backoff_initial
    attempt = 0
    while True:
        attempt += 1
        probe_options = {
            **nats_connect_options(settings),
            **options,
            # One quick pass over the servers per attempt; the backoff below is ours.
            "allow_reconnect": False,
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": 0,
        }
        try:
            probe = await nats.connect(name=f"{name}-probe", error_cb=_quiet, **probe_options)
        except Exception as exc:  # every other failure means "not yet": refused, timeout
            if on_attempt is not None:
                on_attempt(False)
            if is_authorization_failure(exc):
                user, servers = nats_user(settings), redacted_servers(settings)
                log.error(
                    "nats_authorization_failed",
                    user=user,
                    servers=servers,  # never a password in a log
                    hint="check OPOLYX_NATS__USER and the password (or creds) of this role",
                )
                raise NatsAuthorizationFailed(user, servers) from None
            wait = delay * random.uniform(0.8, 1.2)  # jitter: replicas do not retry in step
            log.warning(
                "nats_unreachable",
                attempt=attempt,
                servers=redacted_servers(settings),  # never a password in a log
                error=repr(exc),
                retry_in=round(wait, 2),
            )
            await asyncio.sleep(wait)
            delay = min(delay * 2, settings.connect_backoff_max)
            continue
        await probe.close()
        if on_attempt is not None:
            on_attempt(True)
        if attempt > 1:
            log.info("nats_reachable", attempt=attempt)
        return


async def _quiet(exc: Exception) -> None:
    """The probe's failures are logged once per attempt by `wait_until_reachable`."""


async def connect_nats(
    settings: NatsSettings,
    name: str,
    on_disconnect: Callable[[], Awaitable[None]] | None = None,
    on_attempt: Callable[[bool], None] | None = None,
    **options: Any,
) -> Client:
    """A nats-py connection that reconnects by itself and logs why it was lost.

    Waits (with backoff, cancellable) until NATS is reachable first; `on_attempt` is told
    each attempt's outcome.
    """
    await wait_until_reachable(settings, name, on_attempt=on_attempt, **options)

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", error=repr(exc))

    async def disconnected_cb() -> None:
        log.warning("nats_disconnected")
        if on_disconnect is not None:
            await on_disconnect()

    async def reconnected_cb() -> None:
        log.info("nats_reconnected")

    return await nats.connect(
        **{**nats_connect_options(settings), **options},
        name=name,
        error_cb=error_cb,
        disconnected_cb=disconnected_cb,
        reconnected_cb=reconnected_cb,
    )


async def ensure_stream(
    js: JetStreamContext,
    name: str,
    subjects: list[str],
    *,
    duplicate_window: float = 120.0,
    max_age: float | None = None,
    max_msgs_per_subject: int = -1,
    storage: StorageType = StorageType.FILE,
    replicas: int = 1,
) -> None:
    """Create the stream, or bring an existing one to this configuration.

    Every instance calls this at start; concurrent creation by several instances is fine.
    """
    config = StreamConfig(
        name=name,
        subjects=subjects,
        storage=storage,
        duplicate_window=duplicate_window,
        max_age=max_age,
        max_msgs_per_subject=max_msgs_per_subject,
        num_replicas=replicas,
    )
    try:
        await js.stream_info(name)
    except NotFoundError:
        try:
            await js.add_stream(config)
            return
        except BadRequestError:
            pass  # created by another instance in between: update below
    await js.update_stream(config)


async def create_stream_if_missing(
    js: JetStreamContext, name: str, subjects: list[str], *, replicas: int = 1
) -> None:
    """Create a stream another service owns when it is not there yet, never reconfiguring
    one that is (its owner's `ensure_stream` settles the configuration): a consumer that
    starts before the stream's owner still has a stream to bind to."""
    try:
        await js.stream_info(name)
    except NotFoundError:
        config = StreamConfig(name=name, subjects=subjects, num_replicas=replicas)
        with contextlib.suppress(BadRequestError):  # created meanwhile by another process
            await js.add_stream(config)


async def ensure_kv(
    js: JetStreamContext,
    bucket: str,
    *,
    ttl: float | None = None,
    history: int = 1,
    storage: StorageType = StorageType.FILE,
    replicas: int = 1,
) -> KeyValue:
    """Open the bucket, creating it with this configuration when it does not exist."""
    try:
        return await js.key_value(bucket)
    except BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(
            KeyValueConfig(
                bucket=bucket, ttl=ttl, history=history, storage=storage, replicas=replicas
            )
        )
    except BadRequestError:
        return await js.key_value(bucket)
