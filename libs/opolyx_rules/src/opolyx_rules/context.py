"""The decision context: a private draft of the state plus the events decided so far.

Every change goes through ``emit``, which records the event and applies it with the same
handler ``evolve`` uses, so the events alone always rebuild the state. Guards run before
the first event, so a refused command leaves the draft untouched; ``result`` freezes the
draft into the next state.
"""

from __future__ import annotations

from .events import Event
from .evolve import HANDLERS
from .state import Draft, State, freeze, thaw


class Ctx:
    __slots__ = ("events", "now", "s")

    def __init__(self, state: State, now: float) -> None:
        self.s: Draft = thaw(state)
        self.events: list[Event] = []
        self.now = now

    def result(self) -> State:
        """The state the decision built, frozen (the context is done with it)."""
        return freeze(self.s)

    def emit(self, event: Event) -> None:
        self.events.append(event)
        HANDLERS[type(event)](self.s, event)
