"""One running table in memory and its snapshot format (what the KV bucket `tables` holds).

The snapshot holds the secret parts (seed, full state with RNG) and is never sent to
players. It is written every few batches and when a table goes idle, not per command:
the events stream is the record, and loading a table replays the events stored after its
snapshot (`stream_seq` says where they start).

Formats: 1 and 3 hold the recent command ids as an object (`{id: [seq, events]}`, oldest
first), 2 as a list of `[id, seq, events]`; every one is read. 3 went back to the object
because orjson writes the table's `OrderedDict` as it is, while building a list per entry
at every snapshot cost 1.6% of the service's CPU with 200 bot tables at full speed.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

import opolyx_rules
from opolyx_contracts.replay import ForkSource
from opolyx_contracts.table import SeatSpec
from opolyx_rules import PropState, State
from pydantic import TypeAdapter

__all__ = ["SNAPSHOT_FORMAT", "SeatIndex", "Table"]

SNAPSHOT_FORMAT = 3

_SEATS: TypeAdapter[list[SeatSpec]] = TypeAdapter(list[SeatSpec])
"""The seats dumped in one pydantic-core call (`model_dump` per seat took 2x as long)."""


@dataclass(frozen=True, eq=False)
class SeatIndex:
    """A table's seats by player and kind, looked up per command (the two scans of the
    seats were 1.0% and 0.4% of the service's samples with 200 bot tables at full speed);
    made again when `Table.seats` is replaced, which only tests do."""

    seats: list[SeatSpec]
    by_player: dict[str, tuple[int, ...]]
    humans: tuple[int, ...]

    @classmethod
    def of(cls, seats: list[SeatSpec]) -> SeatIndex:
        by_player: dict[str, tuple[int, ...]] = {}
        for index, seat in enumerate(seats):
            by_player[seat.player_id] = (*by_player.get(seat.player_id, ()), index)
        humans = tuple(index for index, seat in enumerate(seats) if not seat.bot)
        return cls(seats, by_player, humans)


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
    state: State
    clock_rate: float = 1.0
    """Game seconds per wall-clock second (1 in play; higher in tests and demos)."""
    seq: int = 0
    """Last per-table event sequence stored (also the public state version)."""
    stream_seq: int = 0
    """Stream sequence of the table's last stored events message (the write fence)."""
    write_id: str = ""
    """`write_id` of the last events message included in `state`."""
    revision: int = 0
    """KV revision of the snapshot (compare-and-set)."""
    snapshot_seq: int = 0
    """`seq` the stored snapshot covers; the batches after it are only in the stream."""
    recent: OrderedDict[str, tuple[int, int]] = field(default_factory=OrderedDict)
    """command id -> (seq, events) of accepted commands (in the snapshot and the events)."""
    rejected: OrderedDict[str, tuple[str, str]] = field(default_factory=OrderedDict)
    """command id -> (code, message) of refused commands (memory only: nothing changed)."""
    outs_announced: set[int] = field(default_factory=set)
    seed_revealed: bool = False
    finish_announced: bool = False
    autopilot_on_drop: bool = True
    """The room's choice: a bot plays a dropped player's seat after the grace period."""
    fork: ForkSource | None = None
    """The finished game and step this one continues: a practice game (no XP)."""
    autopilot: set[int] = field(default_factory=set)
    """Human seats a bot plays now (from the stored `autopilot` events)."""
    autopilot_chosen: set[int] = field(default_factory=set)
    """Of those, the seats whose player switched it on (kept on when they are back)."""
    # Memory only:
    jobs: deque[Any] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    armed_deadline: float | None = None
    bot_asked: dict[int, tuple[int, int]] = field(default_factory=dict)
    """seat -> (version, attempt) of the last decision request sent for that seat."""
    needs_reload: bool = False
    """A write's outcome is unknown: reload from storage before the next job."""
    dropped: bool = False
    """No longer served by this instance (fenced or partition handed over)."""
    quarantined: str | None = None
    """Why the stored table cannot be used (an unreadable event): every command refused."""
    idle_armed: bool = False
    away: dict[int, float] = field(default_factory=dict)
    """seat -> wall-clock time its player's last socket went (memory only: unknown is here)."""
    connected: dict[int, dict[str, float]] = field(default_factory=dict)
    """seat -> the gateways that report its player connected -> when they last said so."""
    _seat_index: SeatIndex | None = field(default=None, init=False, repr=False)
    kept_props: tuple[tuple[PropState, ...], Any] | None = field(
        default=None, init=False, repr=False
    )
    """(a `props` tuple, what `messages.props_parts` made of it), reused while the state's
    `props` is that very tuple: 98% of commands leave it so, and looking it up by value
    hashes every property (0.7 us, twice a command)."""

    @property
    def version(self) -> int:
        return self.seq

    @property
    def finished(self) -> bool:
        return self.state.finished

    def game_time(self, wall: float) -> float:
        return (wall - self.started_at) * self.clock_rate

    def wall_time(self, game_time: float) -> float:
        return self.started_at + game_time / self.clock_rate

    @property
    def seat_index(self) -> SeatIndex:
        index = self._seat_index
        if index is None or index.seats is not self.seats:
            index = self._seat_index = SeatIndex.of(self.seats)
        return index

    def seat_of(self, player_id: str) -> tuple[int, ...]:
        return self.seat_index.by_player.get(player_id, ())

    @property
    def human_seats(self) -> tuple[int, ...]:
        """The seats that are not bots' (a player's, on autopilot or not)."""
        return self.seat_index.humans

    def remember(self, command_id: str, seq: int, events: int, limit: int) -> None:
        self.recent[command_id] = (seq, events)
        while len(self.recent) > limit:
            self.recent.popitem(last=False)

    def remember_rejection(self, command_id: str, code: str, message: str, limit: int) -> None:
        self.rejected[command_id] = (code, message)
        while len(self.rejected) > limit:
            self.rejected.popitem(last=False)

    def to_snapshot(self, squares: Any = None) -> dict[str, Any]:
        """The stored form (the KV value, as JSON). ``squares``: the state's squares part
        already serialised (see `opolyx_rules.state_to_json`)."""
        return {
            "format": SNAPSHOT_FORMAT,
            "table_id": self.table_id,
            "partition": self.partition,
            "room_id": self.room_id,
            "mode": self.mode,
            "rules_version": self.rules_version,
            "seats": _SEATS.dump_python(self.seats),
            "seed": self.seed,
            "seed_commitment": self.seed_commitment,
            "started_at": self.started_at,
            "clock_rate": self.clock_rate,
            "state": opolyx_rules.state_to_json(self.state, squares=squares),
            "seq": self.seq,
            "stream_seq": self.stream_seq,
            "write_id": self.write_id,
            "recent": self.recent,  # written as it is (see the module docstring)
            "outs_announced": sorted(self.outs_announced),
            "finished": self.finished,
            "seed_revealed": self.seed_revealed,
            "finish_announced": self.finish_announced,
            "autopilot_on_drop": self.autopilot_on_drop,
            "fork": None if self.fork is None else self.fork.model_dump(),
            "autopilot": sorted(self.autopilot),
            "autopilot_chosen": sorted(self.autopilot_chosen),
        }

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any], key: str, revision: int) -> Table:
        """Raises KeyError/ValueError/TypeError (or the rules' StateVersionError) when the
        snapshot is not one this version wrote."""
        table = cls(
            table_id=str(snapshot["table_id"]),
            partition=int(snapshot["partition"]),
            key=key,
            room_id=snapshot.get("room_id"),
            mode=str(snapshot["mode"]),
            rules_version=str(snapshot["rules_version"]),
            seats=[SeatSpec.model_validate(seat) for seat in snapshot["seats"]],
            seed=int(snapshot["seed"]),
            seed_commitment=str(snapshot["seed_commitment"]),
            started_at=float(snapshot["started_at"]),
            state=opolyx_rules.state_from_json(snapshot["state"]),
            clock_rate=float(snapshot.get("clock_rate", 1.0)),
            seq=int(snapshot["seq"]),
            stream_seq=int(snapshot.get("stream_seq", 0)),
            write_id=str(snapshot.get("write_id", "")),
            revision=revision,
        )
        table.snapshot_seq = table.seq
        recent = snapshot.get("recent", [])
        if isinstance(recent, dict):  # formats 1 and 3
            recent = [[cid, seq, n] for cid, (seq, n) in recent.items()]
        for cid, seq, n in recent:
            table.recent[str(cid)] = (int(seq), int(n))
        table.outs_announced = {int(s) for s in snapshot.get("outs_announced", [])}
        table.seed_revealed = bool(snapshot.get("seed_revealed", False))
        table.finish_announced = bool(snapshot.get("finish_announced", False))
        table.autopilot_on_drop = bool(snapshot.get("autopilot_on_drop", True))
        fork = snapshot.get("fork")
        table.fork = None if fork is None else ForkSource.model_validate(fork)
        table.autopilot = {int(s) for s in snapshot.get("autopilot", [])}
        table.autopilot_chosen = {int(s) for s in snapshot.get("autopilot_chosen", [])}
        return table
