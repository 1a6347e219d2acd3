"""Every live room, kept current in memory by a watch on the ``rooms`` bucket.

The room list and the background sweeps read this index instead of listing the bucket:
listing with nats-py's ``KeyValue.keys()`` was seen to answer "no keys" for a bucket full
of rooms when the server delivered the watch's messages before the client had read the
consumer's pending count (the end-of-initial-values marker then comes first), so the list
came back empty now and then. The index is also cheaper: a sweep every second costs no
NATS request at all. Commands still read and compare-and-set the bucket itself; the index
only answers "which rooms exist", at most a few milliseconds behind other instances and
never behind this instance's own writes (they are noted at once).
"""

from __future__ import annotations

import asyncio
import contextlib

from nats.js import JetStreamContext
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from opolyx_service.logs import get_logger
from pydantic import ValidationError

from opolyx_lobby.rooms import Room

__all__ = ["RoomIndex"]

log = get_logger("opolyx.lobby")


class RoomIndex:
    def __init__(self, js: JetStreamContext, kv: KeyValue, bucket: str) -> None:
        self.js = js
        self.kv = kv
        self.stream = f"KV_{bucket}"
        self._rooms: dict[str, Room] = {}
        #: newest revision applied per key (deleted keys too), so a late watch update can
        #: never undo a newer write noted by this instance
        self._revisions: dict[str, int] = {}
        self._seen = 0
        self._task: asyncio.Task[None] | None = None
        self._caught_up = asyncio.Event()
        self._initial_last = 0

    async def start(self, timeout: float = 10.0) -> None:
        """Follow the bucket; returns once every room stored before the call is indexed."""
        info = await self.js.stream_info(self.stream)
        self._initial_last = info.state.last_seq
        self._task = asyncio.create_task(self._follow())
        if self._initial_last == 0:
            self._caught_up.set()
        await asyncio.wait_for(self._caught_up.wait(), timeout)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def rooms(self) -> list[Room]:
        return list(self._rooms.values())

    def note(self, room_id: str, room: Room | None, revision: int) -> None:
        """Apply a change at ``revision`` (this instance's own write, or the watch's)."""
        if revision <= self._revisions.get(room_id, 0):
            return
        self._revisions[room_id] = revision
        if room is None:
            self._rooms.pop(room_id, None)
        else:
            self._rooms[room_id] = room

    async def _follow(self) -> None:
        while True:
            try:
                watcher = await self.kv.watchall()
                try:
                    async for entry in watcher:
                        if entry is None:  # the end-of-initial-values marker (see above)
                            continue
                        revision = entry.revision or 0
                        self._seen = max(self._seen, revision)
                        self.note(entry.key, self._parse(entry), revision)
                        if self._seen >= self._initial_last:
                            self._caught_up.set()
                finally:
                    with contextlib.suppress(Exception):
                        await watcher.stop()  # type: ignore[no-untyped-call]  # nats-py
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("room_index_watch_failed_restarting")
            await asyncio.sleep(1.0)

    @staticmethod
    def _parse(entry: KeyValue.Entry) -> Room | None:
        if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
            return None
        try:
            return Room.model_validate_json(entry.value)
        except ValidationError:
            log.error("room_unreadable_in_index", room_id=entry.key)
            return None
