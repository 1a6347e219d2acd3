"""Watch every message on a nats-server and keep the largest of each kind.

    monitor = await PayloadMonitor.start(admin_nc)   # subscribes to ">"
    ...                                               # run the system
    await monitor.stop()
    print(monitor.report())
    assert monitor.largest("table update").size < monitor.max_payload // 8

Sizes are what the server counts against its `max_payload`: the body plus the encoded
headers. Kinds come from the subject (`message_kind`): one per contract message
("table events", "decision request", "game finished", ...), JetStream and KV traffic by
stream or bucket, replies as "reply".
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    GAME_FINISHED,
    GAME_SEAT_OUT,
    LOBBY_CMD,
    LOBBY_EVENTS,
    PREFIX,
    TABLE_CREATE,
)
from opolyx_service import flush_in_order

__all__ = ["Largest", "PayloadMonitor", "message_kind"]

_FIXED = {
    BOTS_DECIDE: "decision request",
    GAME_FINISHED: "game finished",
    GAME_SEAT_OUT: "seat out",
    LOBBY_CMD: "lobby command",
    LOBBY_EVENTS: "lobby events",
    TABLE_CREATE: "table create",
}
_TABLE_SUFFIXES = {
    "events": "table events",
    "update": "table update",
    "cmd": "table command",
    "view": "table view request",
    "create": "table create",
}


def message_kind(subject: str) -> str:
    """What a subject carries, named after its contract message."""
    fixed = _FIXED.get(subject)
    if fixed is not None:
        return fixed
    tokens = subject.split(".")
    if tokens[0] == "_INBOX":
        return "reply"
    if tokens[0] == "$KV" and len(tokens) > 1:
        return f"kv {tokens[1]}"
    if tokens[0] == "$JS" and len(tokens) > 1:
        return "jetstream ack" if tokens[1] == "ACK" else "jetstream api"
    if tokens[0] == PREFIX and len(tokens) > 2:
        if tokens[1] == "table" and tokens[-1] in _TABLE_SUFFIXES:
            return _TABLE_SUFFIXES[tokens[-1]]
        if tokens[1] == "lobby" and tokens[2] == "player":
            return "lobby member events"
        return f"{tokens[1]} {tokens[-1]}"
    return tokens[0]


@dataclass(frozen=True, slots=True)
class Largest:
    size: int
    subject: str


@dataclass
class PayloadMonitor:
    nc: Client
    largest_by_kind: dict[str, Largest] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    _sub: Subscription | None = None

    @classmethod
    async def start(cls, nc: Client) -> PayloadMonitor:
        """Subscribe `nc` (it must be allowed to: the admin's) to every subject."""
        monitor = cls(nc)
        # Unbounded pending limits: a slow test process must not drop what it measures.
        monitor._sub = await nc.subscribe(
            ">", cb=monitor._on_message, pending_msgs_limit=0, pending_bytes_limit=0
        )
        await flush_in_order(nc)
        return monitor

    @property
    def max_payload(self) -> int:
        """The server's limit on one message (body and headers)."""
        return self.nc.max_payload

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _on_message(self, msg: Msg) -> None:
        size = len(msg.data)
        if msg.headers:
            # NATS/1.0\r\n, then "key: value\r\n" per header, then \r\n
            size += 12 + sum(len(k) + len(v) + 4 for k, v in msg.headers.items())
        kind = message_kind(msg.subject)
        self.counts[kind] += 1
        known = self.largest_by_kind.get(kind)
        if known is None or size > known.size:
            self.largest_by_kind[kind] = Largest(size, msg.subject)

    def largest(self, kind: str) -> Largest:
        """The largest message seen of `kind` (size 0 when none was seen)."""
        return self.largest_by_kind.get(kind, Largest(0, ""))

    def report(self) -> str:
        """One line per kind, largest first: size, count and the largest's subject."""
        rows = sorted(self.largest_by_kind.items(), key=lambda item: -item[1].size)
        return "\n".join(
            f"  {kind:<22} largest {largest.size:>8,} B of {self.counts[kind]:>7,} "
            f"({largest.subject})"
            for kind, largest in rows
        )
