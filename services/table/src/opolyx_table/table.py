"""One running table in memory and its snapshot format (what the KV bucket `tables` holds).

The snapshot holds the secret parts (seed, full state with RNG) and is never sent to
players; what players see is built from `Engine.public_view`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from opolyx_contracts.table import SeatSpec

__all__ = ["SNAPSHOT_FORMAT", "Job", "Table"]

SNAPSHOT_FORMAT = 1


Job = tuple[str, Any]
"""("command", (msg, received)) | ("deadline", game_time) | ("bot", (version, seat, attempt))
| ("announce", None)"""


@dataclass(eq=False)
class Table:
    table_id: str
    partition: int
    key: str
    room_id: str | None
    mode: str
    rules_version: str
    seats: list[SeatSpec]
    seed: int
    seed_commitment: str
    started_at: float
    """Wall-clock (Unix seconds) of game time 0; game time = now - started_at."""
    state: Any
    clock_rate: float = 1.0
    """Game seconds per wall-clock second (1 in play; higher in tests and demos)."""
    seq: int = 0
    """Last per-table event sequence stored (also the public state version)."""
    stream_seq: int = 0
    """Stream sequence of the table's last stored events message (the write fence); not
    in the snapshot: read from the stream when the table is loaded."""
    write_id: str = ""
    """`write_id` of the last events message included in `state`."""
    revision: int = 0
    """KV revision of the snapshot (compare-and-set)."""
    recent: OrderedDict[str, list[int]] = field(default_factory=OrderedDict)
    """command id -> [seq, events] of accepted commands, persisted (as is: no conversion
    on the hot path)."""
    rejected: OrderedDict[str, tuple[str, str]] = field(default_factory=OrderedDict)
    """command id -> (code, message) of refused commands (memory only: nothing changed)."""
    outs_announced: set[int] = field(default_factory=set)
    finished: bool = False
    seed_revealed: bool = False
    finish_announced: bool = False
    jobs: deque[Job] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    armed_deadline: float | None = None
    bot_asked: dict[int, tuple[int, int]] = field(default_factory=dict)
    """seat -> (version, attempt) of the last decision request sent for that seat."""
    changed: bool = False
    """The state moved on: re-arm the timer and ask bots once the current job is done."""
    needs_reload: bool = False
    """A write's outcome is unknown: reload from storage before the next job."""
    seats_json: list[dict[str, Any]] | None = None
    """The seats as JSON, made once (they never change)."""
    dropped: bool = False
    """No longer served by this instance (fenced or partition handed over)."""

    @property
    def version(self) -> int:
        return self.seq

    def game_time(self, wall: float) -> float:
        return (wall - self.started_at) * self.clock_rate

    def wall_time(self, game_time: float) -> float:
        return self.started_at + game_time / self.clock_rate

    def remember(self, command_id: str, seq: int, events: int, limit: int) -> None:
        self.recent[command_id] = [seq, events]
        while len(self.recent) > limit:
            self.recent.popitem(last=False)

    def remember_rejection(self, command_id: str, code: str, message: str, limit: int) -> None:
        self.rejected[command_id] = (code, message)
        while len(self.rejected) > limit:
            self.rejected.popitem(last=False)

    def seat_of(self, player_id: str) -> list[int]:
        return [index for index, seat in enumerate(self.seats) if seat.player_id == player_id]

    def _seats_json(self) -> list[dict[str, Any]]:
        if self.seats_json is None:
            self.seats_json = [seat.model_dump() for seat in self.seats]
        return self.seats_json

    def to_snapshot(self, state_json: dict[str, Any]) -> dict[str, Any]:
        return {
            "format": SNAPSHOT_FORMAT,
            "table_id": self.table_id,
            "partition": self.partition,
            "room_id": self.room_id,
            "mode": self.mode,
            "rules_version": self.rules_version,
            "seats": self._seats_json(),
            "seed": self.seed,
            "seed_commitment": self.seed_commitment,
            "started_at": self.started_at,
            "clock_rate": self.clock_rate,
            "state": state_json,
            "seq": self.seq,
            "write_id": self.write_id,
            "recent": self.recent,
            "outs_announced": sorted(self.outs_announced),
            "finished": self.finished,
            "seed_revealed": self.seed_revealed,
            "finish_announced": self.finish_announced,
        }

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any], key: str, revision: int, state: Any) -> Table:
        table = cls(
            table_id=snapshot["table_id"],
            partition=int(snapshot["partition"]),
            key=key,
            room_id=snapshot.get("room_id"),
            mode=snapshot["mode"],
            rules_version=snapshot["rules_version"],
            seats=[SeatSpec.model_validate(seat) for seat in snapshot["seats"]],
            seed=int(snapshot["seed"]),
            seed_commitment=snapshot["seed_commitment"],
            started_at=float(snapshot["started_at"]),
            state=state,
            clock_rate=float(snapshot.get("clock_rate", 1.0)),
            seq=int(snapshot["seq"]),
            write_id=str(snapshot.get("write_id", "")),
            revision=revision,
        )
        for cid, (seq, n) in snapshot.get("recent", {}).items():
            table.recent[cid] = [int(seq), int(n)]
        table.outs_announced = set(snapshot.get("outs_announced", []))
        table.finished = bool(snapshot.get("finished", False))
        table.seed_revealed = bool(snapshot.get("seed_revealed", False))
        table.finish_announced = bool(snapshot.get("finish_announced", False))
        return table
