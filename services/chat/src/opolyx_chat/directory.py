"""The lobby's rooms as chat needs them, kept current by a watch on the `rooms` bucket.

Read only (the chat role may not write it). The lobby creates the bucket; until it exists
the watch retries every second (`opolyx_service.kv_index`). A lookup that misses the index
(a room created a moment ago, seen by the lobby instance that wrote it but not yet by this
watch) reads the bucket itself once, so a player who just joined a room can chat there at
once. Rooms are also indexed by their table, for the table channels; the bucket is keyed
by room, so a table's room is found only through the index, and chat starts (and reports
ready) only once the rooms that existed at its start are in it.

The lobby deletes a room when its game finishes, at the moment a bot may say goodbye in the
table's chat: the last record of the most recent finished tables (`ENDED_REMEMBERED`) is
kept, so an end-of-game sticker can still be checked against who sat there.
"""

from __future__ import annotations

from collections import OrderedDict

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, NotFoundError
from opolyx_contracts.chat import RoomRecordView
from opolyx_contracts.subjects import ROOMS_BUCKET, is_valid_token
from opolyx_service.kv_index import KeyValueIndex
from opolyx_service.logs import get_logger

__all__ = ["CATCH_UP_SECONDS", "ENDED_REMEMBERED", "RoomDirectory"]

log = get_logger("opolyx.chat.directory")

CATCH_UP_SECONDS = 10.0
"""At most this long at start for the rooms that exist already to be indexed."""

ENDED_REMEMBERED = 2000
"""Rooms whose game ended (record deleted) still known by table; the oldest go first."""


class RoomDirectory:
    def __init__(self, js: JetStreamContext, bucket: str = ROOMS_BUCKET) -> None:
        self._index = KeyValueIndex(js, bucket, RoomRecordView, on_change=self._changed)
        self._by_table: dict[str, str] = {}
        self._ended: OrderedDict[str, RoomRecordView] = OrderedDict()

    async def start(self, wait_seconds: float = CATCH_UP_SECONDS) -> None:
        """Follow the bucket; return once the rooms stored before the call are known, so a
        chat that reports ready never calls a table's seated bot a stranger. Chat may start
        before the lobby made the bucket (no rooms yet: no wait). A watch slower than
        ``wait_seconds`` is logged and chat starts anyway (the watch goes on)."""
        try:
            await self._index.start(wait_seconds)
        except TimeoutError:
            log.warning("rooms_not_caught_up_starting_anyway", seconds=wait_seconds)

    async def stop(self) -> None:
        await self._index.stop()

    def known(self, room_id: str) -> RoomRecordView | None:
        return self._index.get(room_id)

    async def room(self, room_id: str) -> RoomRecordView | None:
        found = self._index.get(room_id)
        kv = self._index.kv
        if found is not None or kv is None or not is_valid_token(room_id):
            return found
        try:
            entry = await kv.get(room_id)
        except (KeyNotFoundError, NotFoundError):
            return None
        view = self._index.parse(entry)
        if view is not None:
            self._index.note(room_id, view, entry.revision or 0)
        return view

    def revision_of(self, room_id: str) -> int:
        """The newest revision of the room's record seen here (0: none yet)."""
        return self._index.revision_of(room_id)

    def room_of_table(self, table_id: str) -> RoomRecordView | None:
        room_id = self._by_table.get(table_id)
        return None if room_id is None else self._index.get(room_id)

    def ended_room_of_table(self, table_id: str) -> RoomRecordView | None:
        """The last record of the room whose game on this table ended (room deleted)."""
        return self._ended.get(table_id)

    def _changed(
        self, room_id: str, old: RoomRecordView | None, new: RoomRecordView | None
    ) -> None:
        if old is not None and old.table_id is not None:
            self._by_table.pop(old.table_id, None)
        if new is not None and new.table_id is not None:
            self._by_table[new.table_id] = room_id
        if new is None and old is not None and old.table_id is not None and old.status == "started":
            self._ended[old.table_id] = old
            if len(self._ended) > ENDED_REMEMBERED:
                self._ended.popitem(last=False)
