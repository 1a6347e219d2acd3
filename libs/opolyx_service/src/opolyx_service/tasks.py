"""Stopping a background task so that the stop is never lost.

On Python 3.11 (our floor) `asyncio.wait_for` returns the result of a wait that finished in
the same turn of the event loop as its task's cancellation, and the cancellation is gone
(CPython gh-86296, fixed in 3.12). A loop around such a wait (ours, or nats-py's
`next_msg` and KV `updates`, which use `wait_for` inside) then simply goes round again, and
the usual `task.cancel(); await task` waits forever: the table's timer loop did exactly that
after a deadline was armed just before a stop, and held a CI run until its limit.
`cancel_and_wait` cancels again while the task runs on, and gives up after a bound, so a
service always stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from opolyx_service.logs import get_logger

__all__ = ["cancel_and_wait"]

log = get_logger("opolyx_service.tasks")

RECANCEL_SECONDS = 0.5
"""How long a cancelled task may take to end before it is cancelled again (a swallowed
cancellation is the only reason a plain loop task outlives one turn of the loop)."""


async def cancel_and_wait(task: asyncio.Future[Any], limit: float = 10.0) -> None:
    """Cancel `task` and wait until it has ended, at most `limit` seconds.

    The caller's own cancellation is not swallowed (unlike `suppress(CancelledError)`
    around `await task`); what the task raised other than its cancellation is logged.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not task.done():
        task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            log.error("task_did_not_stop", task=_name(task), limit=limit)
            return
        # `asyncio.wait` neither cancels `task` on its timeout nor hides our cancellation.
        await asyncio.wait({task}, timeout=min(RECANCEL_SECONDS, left))
        if not task.done():
            log.warning("task_cancellation_swallowed", task=_name(task))
    if not task.cancelled():
        with contextlib.suppress(asyncio.CancelledError):
            error = task.exception()
            if error is not None:
                log.error("task_failed", task=_name(task), error=repr(error))


def _name(task: asyncio.Future[Any]) -> str:
    return task.get_name() if isinstance(task, asyncio.Task) else repr(task)
