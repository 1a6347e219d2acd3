"""A command's reply sent in the same frame as the update it caused.

The table answers a command before it publishes the command's update (the reply is not
held back by the update's work), so the reply usually reaches the gateway first: by
1-8 ms, at most 40 ms, at saturation (`feed.RESYNC_DELAY`). Sent at once, the acting
player gets two frames per command, the reply and then the update. On a socket opened
with ``?batch=1`` (`opolyx_contracts.gateway.BATCH_PARAM`) the reply is kept back until
the update that brings the table to the reply's sequence reaches this socket, and the two
go out as one frame, ``[update, reply]``: one websocket send and one client read fewer per
command (of three sends: the actor's reply and update, the other seat's update), with the
update's text the same one every watcher gets.

Held at most `FOLD_WAIT`: an update lost on the way (core NATS) or slower than that only
costs the reply that wait, never the reply itself; one reply is held at a time per socket
(a client sends its next command on the state the update brings, so there is no second).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FOLD_WAIT", "HeldReply", "batch_frame"]

FOLD_WAIT = 0.1
"""Seconds a reply may wait for its update: over twice the longest reply-to-update gap
measured at saturation (40 ms), and short enough not to be seen when the update is lost."""


@dataclass(slots=True)
class HeldReply:
    table: str
    seq: int
    """The table's sequence after the command: the update reaching it carries the reply."""
    text: str
    timer: asyncio.TimerHandle

    @classmethod
    def start(cls, table: str, seq: int, text: str, release: Callable[[], None]) -> HeldReply:
        timer = asyncio.get_running_loop().call_later(FOLD_WAIT, release)
        return cls(table, seq, text, timer)

    def goes_with(self, table: str, seq: int) -> bool:
        """Whether a push bringing `table` to `seq` is the update this reply waits for."""
        return table == self.table and seq >= self.seq


def batch_frame(*texts: str) -> str:
    """One frame of encoded messages, read in order (the contract's `ServerFrame`)."""
    return "[" + ",".join(texts) + "]"
