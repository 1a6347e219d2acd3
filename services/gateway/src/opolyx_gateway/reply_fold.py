"""A command's reply sent in the same frame as the update it caused.

Per command of a two-seat table the gateway would send three frames: the acting player's
reply and update, and the other seat's update. On a socket opened with ``?batch=1``
(`opolyx_contracts.gateway.BATCH_PARAM`) the acting player's two go out as one frame,
``[update, reply]``: one websocket send and one client read fewer per command, with the
update's text the same one every watcher gets, and the client has the new state when the
reply resolves.

The table answers a command before it publishes the command's update, but which of the two
this socket has in hand first depends on how they were read (the feed applies an update as
it is read; the reply resumes this socket's task one loop turn later). So either one waits
for the other:
- a reply whose update has not reached this socket waits for the update that brings the
  table to the reply's sequence;
- an update of the table this socket has a command at waits for that command's reply
  (a later update, or any other push of that table, sends it first).

Either waits `FOLD_WAIT` at most (give or take `Holds`' half-wait sweep): an update lost on
the way (core NATS), or a reply that is slow, only costs the other that wait. One message
waits per socket at a time (a client sends its next command on the state the update
brings), and one timer per gateway (`Holds`) ends the waits that ran out, instead of one
timer per command.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

__all__ = ["FOLD_WAIT", "Held", "Holds", "batch_frame"]

FOLD_WAIT = 0.1
"""Seconds a reply may wait for its update (or an update for its reply): over twice the
longest reply-to-update gap measured at saturation (40 ms), and short enough not to be seen
when the other is lost. `Holds` looks every half of it, so a wait ends within 1.5 of it."""


@dataclass(slots=True)
class Held:
    """A message one socket keeps back for the other half of its frame."""

    table: str
    seq: int
    """A reply: the table's sequence after the command. An update: the sequence it brings."""
    text: str
    is_reply: bool

    def reply_goes_with(self, table: str, seq: int) -> bool:
        """A held reply: whether a push bringing `table` to `seq` is its update."""
        return self.is_reply and table == self.table and seq >= self.seq

    def update_goes_with(self, table: str, seq: int) -> bool:
        """A held update: whether the reply naming `table` at `seq` is the one it waits for."""
        return not self.is_reply and table == self.table and self.seq >= seq


class Holder(Protocol):
    def release_held(self) -> None:
        """Send what is held, alone (its wait ran out)."""


class Holds:
    """The sockets that hold a message, in the order they began (so in the order their wait
    runs out: every wait is `FOLD_WAIT` long); one timer for all of them, armed only while
    any holds. Per command that is a dictionary entry, where a timer of its own cost a
    `call_later` and its cancelling (1.3% of the gateway's samples at saturation)."""

    def __init__(self) -> None:
        self._until: dict[Holder, float] = {}
        self._sweep: asyncio.TimerHandle | None = None

    def add(self, holder: Holder) -> None:
        loop = asyncio.get_running_loop()
        self._until.pop(holder, None)  # a new wait goes to the end
        self._until[holder] = loop.time() + FOLD_WAIT
        if self._sweep is None:
            self._sweep = loop.call_later(FOLD_WAIT / 2, self._release_late)

    def discard(self, holder: Holder) -> None:
        self._until.pop(holder, None)

    def _release_late(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        until = self._until
        late = []
        for holder, deadline in until.items():
            if deadline > now:
                break
            late.append(holder)
        for holder in late:
            del until[holder]
            holder.release_held()
        self._sweep = loop.call_later(FOLD_WAIT / 2, self._release_late) if until else None


def batch_frame(*texts: str) -> str:
    """One frame of encoded messages, read in order (the contract's `ServerFrame`)."""
    return "[" + ",".join(texts) + "]"
