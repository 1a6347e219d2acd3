"""Request-reply on a hot path: one reply inbox per connection, a future per request.

Used for the gateway's requests to the other services and for the table's JetStream
writes (a publish whose ack is the reply).

nats-py's `Client.request` makes a NUID and two random bytes (a `getrandom` syscall) per
request, adds a done-callback, and waits with `asyncio.wait_for`, which arms and cancels a
timer each time. Measured here (`bench/messaging.py`, its requester rows: the CPU time of
both ends of an echo in one process, 4 interleaved rounds, load 1.6): 421 us a round trip
with `Client.request`, 357 us with this one (0.85x), p50 587 against 509 us. The
difference, about 60 us, is the requester's bookkeeping alone; the gateway's command path
spends about 600 us of CPU per command, one request each.

`Requests.request` answers as `Client.request` does: the reply `Msg`, or
`nats.errors.NoRespondersError` when nobody listens on the subject, or
`nats.errors.TimeoutError` when no reply came in time. Timeouts are found by one sweep that
runs while requests wait (`granularity` apart), so a request gives up at most that much
after its deadline; a reply that comes later is dropped.

`Requests.send` is the same request for a caller that keeps many in flight and handles each
reply in a callback (no task or coroutine per request, as the table benchmark's bots do):
the reply, or the timeout, goes to a waiter it passes in place of the future.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Protocol

import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg

from opolyx_service.direct import subscribe_direct
from opolyx_service.publishing import publish, queue_publish

__all__ = ["ReplyWaiter", "Requests"]

_STATUS = "Status"
_NO_RESPONDERS = "503"


class ReplyWaiter(Protocol):
    """What waits for one request's reply: `request`'s future, or a waiter of `send`'s
    caller with the same three methods. It gets exactly one of the two calls."""

    def done(self) -> bool: ...

    def set_result(self, result: Msg, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...


class Requests:
    """Requests over `nc`, all answered on one wildcard subscription of its inbox."""

    def __init__(self, nc: Client, *, granularity: float = 0.05) -> None:
        self.nc = nc
        self.granularity = granularity
        self._prefix: str | None = None
        self._tokens = itertools.count(1)
        self._pending: dict[str, tuple[ReplyWaiter, float]] = {}
        """By reply token: what waits for the reply and the loop time it gives up at
        (`request`'s is a plain future: asyncio's C task awaits exactly a Future on its fast
        path, not a subclass)."""
        self._sweep: asyncio.TimerHandle | None = None
        self._publishing: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        """Requests waiting for their reply."""
        return len(self._pending)

    async def request(
        self,
        subject: str,
        payload: bytes,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> Msg:
        if self._prefix is None:
            await self.open()
        assert self._prefix is not None
        reply: asyncio.Future[Msg] = asyncio.get_running_loop().create_future()
        token = self._expect(reply, timeout)
        try:
            await publish(self.nc, subject, payload, reply=self._prefix + token, headers=headers)
            msg = await reply
        finally:
            self._pending.pop(token, None)
        if msg.headers and msg.headers.get(_STATUS) == _NO_RESPONDERS:
            raise nats.errors.NoRespondersError
        return msg

    async def open(self) -> None:
        """Subscribe the reply inbox: the first `request` does it, `send` needs it done."""
        if self._prefix is None:
            # `subscribe` queues the SUB before it first yields: no request can overtake it.
            prefix = self.nc.new_inbox() + "."
            await subscribe_direct(self.nc, prefix + "*", self._on_reply)
            self._prefix = prefix

    def send(
        self,
        subject: str,
        payload: bytes,
        waiter: ReplyWaiter,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send a request and return at once: `waiter.set_result` gets the reply `Msg` as it
        came (a no-responders status reply included), or `waiter.set_exception` a
        `nats.errors.TimeoutError`. A request that cannot be queued on the connection at once
        is published by a task; one that fails to go out times out."""
        if self._prefix is None:
            raise RuntimeError("Requests.send before Requests.open")
        reply = self._prefix + self._expect(waiter, timeout)
        if not queue_publish(self.nc, subject, payload, reply=reply, headers=headers):
            task = asyncio.get_running_loop().create_task(
                self._publish(subject, payload, reply, headers)
            )
            self._publishing.add(task)
            task.add_done_callback(self._publishing.discard)

    def _expect(self, waiter: ReplyWaiter, timeout: float) -> str:
        """Register `waiter` for a reply within `timeout` seconds; its reply token."""
        loop = asyncio.get_running_loop()
        token = str(next(self._tokens))
        self._pending[token] = (waiter, loop.time() + timeout)
        if self._sweep is None:
            self._sweep = loop.call_later(self.granularity, self._give_up_late)
        return token

    async def _publish(
        self, subject: str, payload: bytes, reply: str, headers: dict[str, str] | None
    ) -> None:
        with contextlib.suppress(Exception):  # not sent: the request times out
            await self.nc.publish(subject, payload, reply=reply, headers=headers)

    def _on_reply(self, msg: Msg) -> None:
        assert self._prefix is not None
        pending = self._pending.pop(msg.subject[len(self._prefix) :], None)
        if pending is not None and not pending[0].done():
            pending[0].set_result(msg)

    def _give_up_late(self) -> None:
        """Fail every request past its deadline; runs again while any is waiting."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for token, (reply, deadline) in list(self._pending.items()):
            if deadline <= now:
                del self._pending[token]
                if not reply.done():
                    reply.set_exception(nats.errors.TimeoutError())
        self._sweep = (
            loop.call_later(self.granularity, self._give_up_late) if self._pending else None
        )
