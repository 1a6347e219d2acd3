"""The timer loop: fires what is due, and stops when asked, whatever it was doing."""

from __future__ import annotations

import asyncio
import time

import opolyx_rules
from opolyx_contracts.table import SeatSpec
from opolyx_table.jobs import Deadline
from opolyx_table.scheduler import Scheduler
from opolyx_table.table import Table


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


def test_a_kept_timer_fires_once_at_its_newest_time_from_one_heap_entry() -> None:
    """Nearly every command moves a table's deadline and its bot's re-ask later: each key
    keeps one heap entry, which is pushed again when it comes due early; a timer moved
    earlier fires then; plain entries and other keys are not affected."""
    fired: list[tuple[str, object]] = []
    scheduler = Scheduler(lambda table_id, job: fired.append((table_id, job)))
    for n in range(1000):  # moved later 1,000 times
        scheduler.keep(("t1", "deadline"), 100.0 + n, "t1", f"deadline {n}")
    scheduler.keep(("t1", 0), 50.0, "t1", "re-ask")
    scheduler.at(100.5, "t2", "plain")
    assert len(scheduler) == 3
    scheduler.fire_due(100.5)  # the first entry's time: the timer is now due at 1099
    assert fired == [("t1", "re-ask"), ("t2", "plain")]
    assert len(scheduler) == 1
    scheduler.fire_due(1098.9)
    assert len(fired) == 2
    scheduler.fire_due(1099.0)
    assert fired[2:] == [("t1", "deadline 999")]
    assert len(scheduler) == 0

    scheduler.keep(("t1", 1), 200.0, "t1", "late")
    scheduler.keep(("t1", 1), 150.0, "t1", "earlier")  # moved earlier: a new entry
    scheduler.fire_due(150.0)
    assert fired[3:] == [("t1", "earlier")]
    scheduler.fire_due(300.0)  # the replaced entry is skipped
    assert fired[3:] == [("t1", "earlier")]
    assert len(scheduler) == 0


async def test_a_kept_timer_wakes_the_loop_when_it_is_the_earliest() -> None:
    fired: list[str] = []
    scheduler = Scheduler(lambda table_id, job: fired.append(job))
    scheduler.start()
    await asyncio.sleep(0)
    scheduler.at(time.time() + 3600, "t", "later")
    scheduler.keep(("t", 0), time.time(), "t", "now")
    async with asyncio.timeout(5):
        while not fired:
            await asyncio.sleep(0.005)
    await scheduler.stop()
    assert fired == ["now"]


def test_a_deadline_entry_is_dropped_once_the_table_armed_another() -> None:
    """Nearly every command moves the turn's deadline: the entries left behind are dropped
    when due, the one armed now and a retry (no time) are worked, and a table waiting to
    reload lets every entry in (what was armed belonged to the state it drops)."""
    table = Table(
        table_id="t-dl", partition=0, key="0.t-dl", room_id=None, mode="classic",
        rules_version=opolyx_rules.RULES_VERSION,
        seats=[SeatSpec(player_id=f"p{i}", bot=True) for i in range(2)],
        seed=1, seed_commitment=opolyx_rules.seed_commitment(1), started_at=0.0,
        state=opolyx_rules.new_game("classic", 2, 1),
    )  # fmt: skip
    table.armed_deadline = 130.0
    assert Deadline(120.0).superseded(table)
    assert not Deadline(130.0).superseded(table)
    assert not Deadline().superseded(table)
    table.needs_reload = True
    assert not Deadline(120.0).superseded(table)
