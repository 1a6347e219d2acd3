"""A flush that the server has read everything sent before it when it returns.

nats-py's `Client.flush` sends a PING and waits for the PONG, but it writes the PING
straight to the socket (`_send_ping`, nats-py 2.16) while the commands queued before it (a
SUB, a PUB) still wait in the connection's buffer for its flusher task. The PING can then
reach the server first, and the PONG come back before the server has read the SUB: a
message published from another connection right after `subscribe(); flush()` found no
subscriber and was dropped (STACK.md trap 1).
Measured here: `test_direct`'s 500 messages after `subscribe(); flush()` lost the first
8-500 of them in 3 of 60 runs with two busy-looping processes beside it; none in 60 with
this flush.

Where it matters in the services: a table instance must hold a partition's subscription
before it says it serves the partition, and its liveness subscription before peers can
see its presence key (else a peer's "alive?" meets no responders); a gateway's chat
channel must be live before the history is read (nothing falls between). The earlier
remedy ("yield, then flush twice") worked by timing; this one by order.

`flush_in_order` moves the queued commands onto the socket first, as the flusher itself
would (the same three internals: `_pending`, `_pending_data_size`, `_transport`; pinned in
uv.lock, and `tests/test_flushing.py` fails if an upgrade changes them). A connection that
is not up keeps its queue for nats-py's reconnect, and `Client.flush` answers as usual.
"""

from __future__ import annotations

from nats.aio.client import Client

__all__ = ["flush_in_order"]


async def flush_in_order(nc: Client, timeout: int = 10) -> None:
    """Return once the server has read everything sent on `nc` so far (raises as
    `Client.flush` after `timeout` seconds: `FlushTimeoutError`, or
    `ConnectionClosedError`)."""
    if nc.is_connected and nc._pending and nc._transport is not None:
        nc._transport.writelines(nc._pending[:])
        nc._pending = []
        nc._pending_data_size = 0
    await nc.flush(timeout)
