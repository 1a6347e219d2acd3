"""Connecting to NATS and declaring JetStream streams and KV buckets idempotently."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from opolyx_service.logs import get_logger
from opolyx_service.settings import NatsSettings

__all__ = ["connect_nats", "ensure_kv", "ensure_stream"]

log = get_logger("opolyx_service.nats")


async def connect_nats(
    settings: NatsSettings,
    name: str,
    on_disconnect: Callable[[], Awaitable[None]] | None = None,
    **options: Any,
) -> Client:
    """A nats-py connection that reconnects by itself and logs why it was lost."""

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", error=repr(exc))

    async def disconnected_cb() -> None:
        log.warning("nats_disconnected")
        if on_disconnect is not None:
            await on_disconnect()

    async def reconnected_cb() -> None:
        log.info("nats_reconnected")

    return await nats.connect(
        servers=settings.servers,
        name=name,
        connect_timeout=settings.connect_timeout,
        max_reconnect_attempts=settings.max_reconnect_attempts,
        reconnect_time_wait=settings.reconnect_time_wait,
        error_cb=error_cb,
        disconnected_cb=disconnected_cb,
        reconnected_cb=reconnected_cb,
        **options,
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
