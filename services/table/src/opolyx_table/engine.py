"""The table service's view of the rules library: the few calls it makes, in one place.

The service never interprets the rules; it stores, orders, times and publishes. What it
reads from a state is the public JSON (`pending`, `finished`, `seats[].out`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import opolyx_rules

__all__ = ["Engine", "RulesEngine", "RulesFailure"]

JsonDict = dict[str, Any]


class RulesFailure(Exception):
    """A command the rules refuse: `code` and `message` go to the sender unchanged."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Engine(Protocol):
    rules_version: str

    def new_game(self, mode: str, boosts: Sequence[dict[int, int]], seed: int) -> Any: ...

    def apply(self, state: Any, command: JsonDict, now: float) -> tuple[Any, list[JsonDict]]: ...

    def timeout(self, state: Any, now: float) -> tuple[Any, list[JsonDict]]: ...

    def evolve(self, state: Any, event: JsonDict) -> Any: ...

    def next_deadline(self, state: Any) -> float | None: ...

    def awaiting(self, state: Any) -> list[int]: ...

    def legal(self, state: Any, seat: int) -> list[JsonDict]: ...

    def public_view(self, state: Any) -> JsonDict: ...

    def to_json(self, state: Any) -> JsonDict: ...

    def from_json(self, data: JsonDict) -> Any: ...


class RulesEngine:
    """`Engine` backed by `opolyx_rules` (libs/opolyx_rules/API.md)."""

    def __init__(self) -> None:
        self.rules_version: str = str(opolyx_rules.RULES_VERSION)
        # The last state serialised and its JSON: a command's new state is stored and then
        # shown to players and bots; serialise it once (states are never mutated, so the
        # object itself identifies the JSON; holding it keeps its id from being reused).
        self._last: tuple[Any, JsonDict] | None = None

    def new_game(self, mode: str, boosts: Sequence[dict[int, int]], seed: int) -> Any:
        seats = [opolyx_rules.SeatSetup(boosts=dict(b)) for b in boosts]
        try:
            return opolyx_rules.new_game(mode, seats, seed, now=0.0)
        except opolyx_rules.RulesError as exc:
            raise RulesFailure(exc.code, exc.message) from None

    def apply(self, state: Any, command: JsonDict, now: float) -> tuple[Any, list[JsonDict]]:
        try:
            parsed = opolyx_rules.command_from_json(command)
            new_state, events = opolyx_rules.apply(state, parsed, now)
        except opolyx_rules.RulesError as exc:
            raise RulesFailure(exc.code, exc.message) from None
        return new_state, [opolyx_rules.event_to_json(event) for event in events]

    def timeout(self, state: Any, now: float) -> tuple[Any, list[JsonDict]]:
        return self.apply(state, {"type": "timeout"}, now)

    def evolve(self, state: Any, event: JsonDict) -> Any:
        return opolyx_rules.evolve(state, opolyx_rules.event_from_json(event))

    def next_deadline(self, state: Any) -> float | None:
        deadline = opolyx_rules.next_deadline(state)
        return None if deadline is None else float(deadline)

    def awaiting(self, state: Any) -> list[int]:
        return [int(seat) for seat in opolyx_rules.awaiting(state)]

    def legal(self, state: Any, seat: int) -> list[JsonDict]:
        return [
            opolyx_rules.command_to_json(command)
            for command in opolyx_rules.legal_commands(state, seat)
        ]

    def public_view(self, state: Any) -> JsonDict:
        return opolyx_rules.public_from_stored(self.to_json(state))

    def to_json(self, state: Any) -> JsonDict:
        """The stored form; callers treat it as read-only (it is shared with the cache)."""
        if self._last is not None and self._last[0] is state:
            return self._last[1]
        data = dict(opolyx_rules.state_to_json(state))
        self._last = (state, data)
        return data

    def from_json(self, data: JsonDict) -> Any:
        return opolyx_rules.state_from_json(data)
