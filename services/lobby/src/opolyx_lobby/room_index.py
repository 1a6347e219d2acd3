"""Every live room, kept current in memory by a watch on the ``rooms`` bucket.

The room list and the background sweeps read this index instead of listing the bucket (see
`opolyx_service.kv_index` for why listing is unreliable), and a sweep every second costs no
NATS request at all. Commands still read and compare-and-set the bucket itself; the index
only answers "which rooms exist", at most a few milliseconds behind other instances and
never behind this instance's own writes (the store notes them at once).
"""

from __future__ import annotations

from nats.js import JetStreamContext
from opolyx_service.kv_index import KeyValueIndex

from opolyx_lobby.rooms import Room

__all__ = ["RoomIndex"]


class RoomIndex(KeyValueIndex[Room]):
    def __init__(self, js: JetStreamContext, bucket: str) -> None:
        super().__init__(js, bucket, Room)

    async def start(self, wait_seconds: float | None = 10.0) -> None:
        """Follow the bucket; returns once every room stored before the call is indexed."""
        await super().start(wait_seconds)

    def rooms(self) -> list[Room]:
        return self.values()
