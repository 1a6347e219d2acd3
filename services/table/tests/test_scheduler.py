"""The timer loop: fires what is due, and stops when asked, whatever it was doing."""

from __future__ import annotations

import asyncio
import time

from opolyx_table.scheduler import Scheduler


async def test_due_entries_fire_in_time_order() -> None:
    fired: list[str] = []
    scheduler = Scheduler(lambda table_id, job: fired.append(table_id))
    scheduler.start()
    now = time.time()
    scheduler.at(now + 0.02, "second", None)
    scheduler.at(now, "first", None)
    while len(fired) < 2:
        await asyncio.sleep(0.005)
    await scheduler.stop()
    assert fired == ["first", "second"]


async def test_stop_right_after_a_new_deadline_woke_the_loop_still_stops() -> None:
    # Arming a deadline wakes the loop; a stop in the same turn of the event loop used to be
    # swallowed (Python 3.11's `asyncio.wait_for` returns the finished wait's result instead
    # of raising the cancellation), so the loop ran on and `stop` waited forever: it held a
    # CI run of the table tests until the run's own limit.
    for _ in range(20):
        scheduler = Scheduler(lambda table_id, job: None)
        scheduler.start()
        await asyncio.sleep(0)  # the loop is now waiting for its wake-up or a deadline
        scheduler.at(time.time() + 60, "t", None)
        # `asyncio.wait` does not cancel what it waits for (a timeout's cancellation of the
        # stop itself would cancel the loop a second time and hide the bug).
        stopping = asyncio.ensure_future(scheduler.stop())
        done, _ = await asyncio.wait({stopping}, timeout=5)
        assert stopping in done, "the scheduler did not stop"
