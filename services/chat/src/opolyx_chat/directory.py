"""The lobby's rooms as chat needs them, kept current by a watch on the `rooms` bucket.

Read only (the chat role may not write it). The lobby creates the bucket; until it exists
the watch retries every second. A lookup that misses the index (a room created a moment
ago, seen by the lobby instance that wrote it but not yet by this watch) reads the bucket
itself once, so a player who just joined a room can chat there at once.
"""

from __future__ import annotations

import asyncio
import contextlib

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from opolyx_contracts.chat import RoomRecordView
from opolyx_contracts.subjects import ROOMS_BUCKET, is_valid_token
from opolyx_service.logs import get_logger
from pydantic import ValidationError

__all__ = ["RoomDirectory"]

log = get_logger("opolyx.chat")


class RoomDirectory:
    def __init__(self, js: JetStreamContext, bucket: str = ROOMS_BUCKET) -> None:
        self.js = js
        self.bucket = bucket
        self._kv: KeyValue | None = None
        self._rooms: dict[str, RoomRecordView] = {}
        self._revisions: dict[str, int] = {}
        self._by_table: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def known(self, room_id: str) -> RoomRecordView | None:
        return self._rooms.get(room_id)

    async def room(self, room_id: str) -> RoomRecordView | None:
        found = self._rooms.get(room_id)
        if found is not None or self._kv is None or not is_valid_token(room_id):
            return found
        try:
            entry = await self._kv.get(room_id)
        except (KeyNotFoundError, NotFoundError):
            return None
        view = self._parse(entry)
        if view is not None:
            self._note(room_id, view, entry.revision or 0)
        return view

    def revision_of(self, room_id: str) -> int:
        """The newest revision of the room's record seen here (0: none yet)."""
        return self._revisions.get(room_id, 0)

    def room_of_table(self, table_id: str) -> RoomRecordView | None:
        room_id = self._by_table.get(table_id)
        return None if room_id is None else self._rooms.get(room_id)

    def _note(self, room_id: str, view: RoomRecordView | None, revision: int) -> None:
        if revision <= self._revisions.get(room_id, 0):
            return  # never let a late watch update undo a newer read
        self._revisions[room_id] = revision
        old = self._rooms.pop(room_id, None)
        if old is not None and old.table_id is not None:
            self._by_table.pop(old.table_id, None)
        if view is not None:
            self._rooms[room_id] = view
            if view.table_id is not None:
                self._by_table[view.table_id] = room_id

    async def _follow(self) -> None:
        while True:
            try:
                self._kv = kv = await self.js.key_value(self.bucket)
                watcher = await kv.watchall()
                try:
                    async for entry in watcher:
                        if entry is None:  # end of the initial values
                            continue
                        self._note(entry.key, self._parse(entry), entry.revision or 0)
                finally:
                    with contextlib.suppress(Exception):
                        await watcher.stop()  # type: ignore[no-untyped-call]  # nats-py
            except asyncio.CancelledError:
                raise
            except BucketNotFoundError:
                log.info("rooms_bucket_missing_waiting_for_lobby")
            except Exception:
                log.exception("rooms_watch_failed_restarting")
            await asyncio.sleep(1.0)

    @staticmethod
    def _parse(entry: KeyValue.Entry) -> RoomRecordView | None:
        if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
            return None
        try:
            return RoomRecordView.model_validate_json(entry.value)
        except ValidationError:
            log.error("room_unreadable", room_id=entry.key)
            return None
