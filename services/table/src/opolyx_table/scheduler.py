"""One timer loop per instance: fires each table's next deadline (and bot re-asks).

Entries are only a cache of what the stored state says: every table re-arms its next
deadline from its state after each change and after being loaded, so nothing about a
timer exists only in memory. A firing never acts directly; it queues a job on its table,
where it is checked against the current state (stale entries do nothing).

Most timers are kept by key (`keep`): a table's turn deadline, and each bot seat's re-ask.
Nearly every command moves both, always later, and only the newest matters. Pushed to the
heap each time, they left two entries per command, each popped and dropped when due: at
4,000 commands/s and a 75 s turn, up to about 300,000 live ones. Keyed, the change measured
0.89x the table's CPU per command (200 bot tables, 6 interleaved rounds against the commit
before, load 0.8-2.0). A key has at most one entry: when it comes due and its timer was
moved later meanwhile, it is pushed again for the new time; only a timer moved earlier
needs a new entry at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Callable, Hashable
from typing import Any

from opolyx_service.tasks import cancel_and_wait

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self, fire: Callable[[str, Any], None]) -> None:
        self._fire = fire
        self._heap: list[tuple[float, int, Hashable | None, str, Any]] = []
        """(when, order, key or None, table id, job); a keyed entry's table and job are
        the ones kept under its key when it comes due."""
        self._counter = itertools.count()
        self._kept: dict[Hashable, tuple[float, str, Any]] = {}
        """key -> (when, table id, job): the newest `keep` of each key not fired yet."""
        self._entries: dict[Hashable, tuple[float, int]] = {}
        """key -> (when, order) of its one live heap entry (older ones are skipped)."""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        """Entries in the heap."""
        return len(self._heap)

    def at(self, when: float, table_id: str, job: Any) -> None:
        """Call `fire(table_id, job)` at wall-clock `when` (Unix seconds)."""
        self._push(when, None, table_id, job)

    def keep(self, key: Hashable, when: float, table_id: str, job: Any) -> None:
        """Call `fire(table_id, job)` at `when`, instead of whatever was kept under `key`
        and has not fired yet."""
        self._kept[key] = (when, table_id, job)
        entry = self._entries.get(key)
        if entry is None or when < entry[0]:
            self._entries[key] = (when, self._push(when, key, table_id, None))

    def _push(self, when: float, key: Hashable | None, table_id: str, job: Any) -> int:
        order = next(self._counter)
        earliest = self._heap[0][0] if self._heap else None
        heapq.heappush(self._heap, (when, order, key, table_id, job))
        if earliest is None or when < earliest:
            self._wake.set()
        return order

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="table-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    def fire_due(self, now: float) -> None:
        """Fire every entry due at `now` (the loop calls this; tests may too)."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, order, key, table_id, job = heapq.heappop(heap)
            if key is None:
                self._fire(table_id, job)
                continue
            entry = self._entries.get(key)
            if entry is None or entry[1] != order:
                continue  # replaced by an earlier entry of the key
            del self._entries[key]
            when, table_id, job = self._kept[key]
            if when > now:  # moved later since this entry was pushed
                self._entries[key] = (when, self._push(when, key, table_id, None))
                continue
            del self._kept[key]
            self._fire(table_id, job)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            now = time.time()
            self.fire_due(now)
            delay = (self._heap[0][0] - now) if self._heap else 3600.0
            # `asyncio.timeout`, not `wait_for`: on Python 3.11 a `wait_for` cancelled in the
            # turn its wait finished returns instead of raising, so a stop right after a new
            # deadline woke this loop was lost and `stop` waited forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(delay, 0.0)):
                    await self._wake.wait()
