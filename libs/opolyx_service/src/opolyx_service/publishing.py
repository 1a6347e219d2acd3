"""Publishing on a hot path: the message queued on the connection's write buffer at once.

nats-py's `Client.publish` runs a chain of three coroutines per message, checks the subject
with a regular expression and builds the header block key by key (a regular expression
and a string translation per header). `publish` here queues the PUB or HPUB command itself
while the connection is up and its buffer has room (`queue_publish`, which a handler that
must not wait calls itself), and hands every other case to `Client.publish`, which knows
what to do while reconnecting (its own buffer, or `OutboundBufferLimitError`), draining or
closed. Header keys are checked as nats-py checks them (once per key); a value with a line
break goes the slow way, where nats-py strips it.

Measured (`bench/messaging.py`, its sending rows: CPU per message, 15,000 in a row, 4
interleaved rounds, load 2.2): 1.69 -> 1.20 us without headers (0.71x), 4.43 -> 1.96 us
with a JetStream write's three headers (0.44x). A table command publishes four messages
(the events write with its headers, the reply, the update, the bots' request): on the table
service, 200 bot tables at full speed, 4 interleaved rounds against the commit before
(load 0.8-2.3), CPU per command 167 -> 157 us (0.94x).

It relies on nats-py internals (pinned in uv.lock): the write buffer (`_pending`,
`_pending_data_size`, `_max_pending_size`), the flusher (`_flush_queue`, `_flusher_task`),
`_max_payload`, `stats` and its header-key pattern (`_HEADER_KEY_RE`).
`tests/test_publishing.py` checks the bytes a real nats-server delivers, headers included,
so an upgrade that changes them fails there.
"""

from __future__ import annotations

import asyncio

from nats.aio.client import _HEADER_KEY_RE, Client

__all__ = ["publish", "queue_publish"]

_checked_keys: set[str] = set()
_CHECKED_KEYS_LIMIT = 256


def _header_block(headers: dict[str, str]) -> bytes | None:
    """`NATS/1.0`, one line per header and a blank line; None for a header nats-py would
    have to clean up (it strips a value's line breaks) or refuse (a bad key)."""
    parts = [b"NATS/1.0\r\n"]
    for key, value in headers.items():
        if key not in _checked_keys:
            if not _HEADER_KEY_RE.fullmatch(key):  # nats-py's own check, once per key
                return None
            if len(_checked_keys) < _CHECKED_KEYS_LIMIT:
                _checked_keys.add(key)
        if "\r" in value or "\n" in value or value != value.strip():
            return None
        parts.append(f"{key}: {value}\r\n".encode())
    parts.append(b"\r\n")
    return b"".join(parts)


def queue_publish(
    nc: Client,
    subject: str,
    payload: bytes,
    *,
    reply: str = "",
    headers: dict[str, str] | None = None,
) -> bool:
    """Queue the message on `nc`'s write buffer now; False when it is not queued (the
    connection is not up, draining or full, the payload too large, a header needs nats-py's
    cleaning): then send it with `Client.publish`. The subject and reply must be subjects
    this service made or checked (no spaces or line breaks: not checked again here)."""
    flusher = nc._flusher_task
    if (
        not nc.is_connected
        or nc.is_draining_pubs
        or flusher is None
        or flusher.done()
        or len(payload) > nc._max_payload
    ):
        return False
    if headers:
        block = _header_block(headers)
        if block is None:
            return False
        size = len(block)
        command = b"".join(
            (
                f"HPUB {subject} {reply} {size} {size + len(payload)}\r\n".encode(),
                block,
                payload,
                b"\r\n",
            )
        )
    else:
        command = b"".join((f"PUB {subject} {reply} {len(payload)}\r\n".encode(), payload, b"\r\n"))
    limit = nc._max_pending_size
    if limit > 0 and nc._pending_data_size + len(command) > limit:
        return False
    nc._pending.append(command)
    nc._pending_data_size += len(command)
    nc.stats["out_msgs"] += 1
    nc.stats["out_bytes"] += len(payload)
    queue = nc._flush_queue
    if queue is not None and queue.empty():
        # What nats-py's `_flush_pending` does: wake the flusher, which writes everything
        # queued by then in one go and resolves the future.
        queue.put_nowait(asyncio.get_running_loop().create_future())
    return True


async def publish(
    nc: Client,
    subject: str,
    payload: bytes,
    *,
    reply: str = "",
    headers: dict[str, str] | None = None,
) -> None:
    """`nc.publish(subject, payload, reply=reply, headers=headers)`, cheaper (see
    `queue_publish` for what the subject and reply must be)."""
    if not queue_publish(nc, subject, payload, reply=reply, headers=headers):
        await nc.publish(subject, payload, reply=reply, headers=headers)
