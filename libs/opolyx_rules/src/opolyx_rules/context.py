"""The decision context: a scratch copy of the state plus the events decided so far.

Every change goes through ``emit``, which records the event and applies it with the same
``apply_in_place`` that ``evolve`` uses, so the events alone always rebuild the state.
A rejected command raises before anything escapes: the scratch copy is simply dropped.
"""

from __future__ import annotations

from .events import Event
from .evolve import HANDLERS
from .state import Draft, State, _thaw, freeze


class Ctx:
    __slots__ = ("events", "now", "s")

    def __init__(self, state: State, now: float) -> None:
        self.s: Draft = _thaw(state)
        self.events: list[Event] = []
        self.now = now

    def result(self) -> State:
        """The state the decision built, frozen (the context is done with it)."""
        return freeze(self.s)

    def emit(self, event: Event) -> None:
        self.events.append(event)
        HANDLERS[type(event)](self.s, event)
