"""One timer loop per instance: fires each table's next deadline (and bot re-asks).

Entries are only a cache of what the stored state says: every table re-arms its next
deadline from its state after each change and after being loaded, so nothing about a
timer exists only in memory. A firing never acts directly; it queues a job on its table,
where it is checked against the current state (stale entries do nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Any

from opolyx_service.tasks import cancel_and_wait

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self, fire: Callable[[str, Any], None]) -> None:
        self._fire = fire
        self._heap: list[tuple[float, int, str, Any]] = []
        self._counter = itertools.count()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._heap)

    def at(self, when: float, table_id: str, job: Any) -> None:
        """Call `fire(table_id, job)` at wall-clock `when` (Unix seconds)."""
        earliest = self._heap[0][0] if self._heap else None
        heapq.heappush(self._heap, (when, next(self._counter), table_id, job))
        if earliest is None or when < earliest:
            self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="table-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            now = time.time()
            while self._heap and self._heap[0][0] <= now:
                _, _, table_id, job = heapq.heappop(self._heap)
                self._fire(table_id, job)
            delay = (self._heap[0][0] - now) if self._heap else 3600.0
            # `asyncio.timeout`, not `wait_for`: on Python 3.11 a `wait_for` cancelled in the
            # turn its wait finished returns instead of raising, so a stop right after a new
            # deadline woke this loop was lost and `stop` waited forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(delay, 0.0)):
                    await self._wake.wait()
