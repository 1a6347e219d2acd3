"""Every entry of a KV bucket, parsed and kept current in memory by a watch on the bucket.

For services that must answer "which entries exist" often (the lobby's sweeps and room
list, chat's membership checks) without a NATS request each time. Listing with nats-py's
``KeyValue.keys()`` was seen to answer "no keys" for a bucket full of rooms: when the server
delivered the watch's messages before the client had read the consumer's pending count, the
end-of-initial-values marker came first. A watch that counts revisions up to the stream's
last sequence at start has no such race.

Writers and readers may be different instances: the index is at most a few milliseconds
behind other instances' writes, and never behind the writes an instance notes itself
(``note``), because every update carries its revision and an older one never undoes a
newer one. An entry that does not parse as the model is logged and treated as absent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Generic, TypeVar

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from pydantic import BaseModel, ValidationError

from opolyx_service.logs import get_logger
from opolyx_service.tasks import cancel_and_wait

__all__ = ["KeyValueIndex"]

log = get_logger("opolyx.kv_index")

T = TypeVar("T", bound=BaseModel)

RETRY_SECONDS = 1.0
"""Pause before the watch is made again after it failed or the bucket did not exist yet."""


class KeyValueIndex(Generic[T]):
    """``bucket``'s entries as ``model`` instances, by key."""

    def __init__(
        self,
        js: JetStreamContext,
        bucket: str,
        model: type[T],
        on_change: Callable[[str, T | None, T | None], None] | None = None,
    ) -> None:
        self.js = js
        self.bucket = bucket
        self.model = model
        self._on_change = on_change
        """Called with (key, old, new) after each applied change (derived indexes)."""
        self.kv: KeyValue | None = None
        """The bucket, once the watch has found it (None while it does not exist)."""
        self._entries: dict[str, T] = {}
        self._revisions: dict[str, int] = {}
        """Newest revision applied per key, deleted keys included."""
        self._task: asyncio.Task[None] | None = None
        self._caught_up = asyncio.Event()
        self._initial_last = 0

    async def start(self, wait_seconds: float | None = None) -> None:
        """Follow the bucket. With ``wait_seconds``, return only once every entry stored
        before the call is indexed (a bucket not made yet holds none: no wait); raises
        TimeoutError if that takes longer (the watch goes on)."""
        if wait_seconds is not None:
            try:
                info = await self.js.stream_info(f"KV_{self.bucket}")
            except NotFoundError:
                self._initial_last = 0
            else:
                self._initial_last = info.state.last_seq
            if self._initial_last == 0:
                self._caught_up.set()
        self._task = asyncio.create_task(self._follow())
        if wait_seconds is not None:
            await asyncio.wait_for(self._caught_up.wait(), wait_seconds)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    def get(self, key: str) -> T | None:
        return self._entries.get(key)

    def values(self) -> list[T]:
        return list(self._entries.values())

    def revision_of(self, key: str) -> int:
        """The newest revision of ``key`` applied here (0: none yet)."""
        return self._revisions.get(key, 0)

    def note(self, key: str, value: T | None, revision: int) -> None:
        """Apply a change at ``revision`` (an own write, a read, or the watch's update)."""
        if revision <= self._revisions.get(key, 0):
            return
        self._revisions[key] = revision
        old = self._entries.pop(key, None)
        if value is not None:
            self._entries[key] = value
        if self._on_change is not None:
            self._on_change(key, old, value)

    def parse(self, entry: KeyValue.Entry) -> T | None:
        if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
            return None
        try:
            return self.model.model_validate_json(entry.value)
        except ValidationError:
            log.error("kv_entry_unreadable", bucket=self.bucket, key=entry.key)
            return None

    async def _follow(self) -> None:
        while True:
            try:
                self.kv = kv = await self.js.key_value(self.bucket)
                watcher = await kv.watchall()
                try:
                    async for entry in watcher:
                        if entry is None:  # the end-of-initial-values marker (see above)
                            continue
                        revision = entry.revision or 0
                        self.note(entry.key, self.parse(entry), revision)
                        if revision >= self._initial_last:
                            self._caught_up.set()
                finally:
                    with contextlib.suppress(Exception):
                        await watcher.stop()  # type: ignore[no-untyped-call]  # nats-py
            except asyncio.CancelledError:
                raise
            except BucketNotFoundError:
                log.info("kv_bucket_missing_waiting", bucket=self.bucket)
            except Exception:
                log.exception("kv_watch_failed_restarting", bucket=self.bucket)
            await asyncio.sleep(RETRY_SECONDS)
