"""Subscriptions whose messages are handled as they are read, without a task hop.

nats-py hands each message of a callback subscription to an `asyncio.Queue`, and a task of
the subscription's takes it from there and awaits the callback: per message a queue put, a
wake-up, a task step and a queue get. On a hot path whose handler does no I/O of its own
(it resolves a future, or queues the message on a worker), that hop is pure cost.
`subscribe_direct` calls a plain function instead, from nats-py's read loop, as nats-py
itself resolves the future of an old-style request.

Measured (`bench/messaging.py`, its receiving rows: this process's CPU per message, the
publisher's share included, 4 interleaved rounds, load 1.0): 5.4 us with a callback
subscription, 4.7 us direct (0.87x). On the table service (200 bot tables at full speed)
its command and ack subscriptions together took CPU per command from 177 to 171 us. The
handler must not block and should not raise for a message it cannot use (an exception is
logged and the message dropped, as nats-py's own error callback would).

It relies on two nats-py internals (pinned in uv.lock): the subscription's `_pending_queue`,
which `_process_msg` fills with `put_nowait`, and `_pending_size`, the bytes it counts as
waiting there. `tests/test_direct.py` runs it against a real nats-server, so an upgrade that
changes either fails there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from opolyx_service.logs import get_logger

__all__ = ["subscribe_direct"]

log = get_logger("opolyx_service.direct")


class _HandOver(asyncio.Queue[Msg]):
    """Stands in for a subscription's pending queue: a message put is handled at once."""

    def __init__(self, sub: Subscription, handler: Callable[[Msg], None]) -> None:
        super().__init__()
        self._sub = sub
        self._handler = handler

    def put_nowait(self, item: Msg) -> None:
        # `_process_msg` counted the payload as waiting; nothing waits here.
        self._sub._pending_size -= len(item.data)
        try:
            self._handler(item)
        except Exception:
            log.exception("direct_handler_failed", subject=item.subject)


async def _never_called(msg: Msg) -> None:  # pragma: no cover - messages go to _HandOver
    raise AssertionError("a direct subscription's messages never reach its callback")


async def subscribe_direct(
    nc: Client, subject: str, handler: Callable[[Msg], None], *, queue: str = ""
) -> Subscription:
    """Subscribe to `subject` (in `queue`, if given) with `handler` called per message as it
    is read. Unsubscribe and drain as any subscription."""
    sub = await nc.subscribe(subject, queue=queue, cb=_never_called)
    # The subscription's own task waits on the queue being replaced: it would never wake.
    task = sub._wait_for_msgs_task
    if task is not None:
        task.cancel()
        sub._wait_for_msgs_task = None
    waiting, sub._pending_queue = sub._pending_queue, _HandOver(sub, handler)
    while not waiting.empty():  # none in practice: the SUB is not even on the wire yet
        sub._pending_queue.put_nowait(waiting.get_nowait())
    return sub
