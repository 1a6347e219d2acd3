"""Between the wire contract's typed models and the rules library's own values.

The table parses every command into its contract model (`opolyx_contracts.game`); the rules
take their NamedTuples. Both have the same fields, so converting is a field copy, never a
JSON round trip. Events go the other way, built without validation (the rules made them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import opolyx_rules
from opolyx_contracts import game
from opolyx_rules import Command, Event, State
from opolyx_rules.commands import COMMAND_TYPES
from opolyx_rules.events import EVENT_TYPES, event_type

__all__ = [
    "command_model",
    "event_model",
    "new_game",
    "rules_command",
    "rules_event",
]

_COMMAND_FIELDS: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    kind: (cls, tuple(cls._fields)) for kind, cls in COMMAND_TYPES.items()
}
_EVENT_FIELDS: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    kind: (cls, tuple(cls._fields)) for kind, cls in EVENT_TYPES.items()
}
_COMMAND_KIND = {cls: kind for kind, cls in COMMAND_TYPES.items()}


def rules_command(command: game.GameCommand, seat: int | None) -> Command:
    """The rules' command for a parsed one, acting for `seat` (the timeout has none)."""
    cls, fields = _COMMAND_FIELDS[command.type]
    values = [seat if name == "seat" else getattr(command, name) for name in fields]
    rules: Command = cls(*values)
    return rules


def command_model(command: Command) -> game.GameCommand:
    """The contract model of a rules command (legal commands sent to players and bots)."""
    kind = _COMMAND_KIND[type(command)]
    model = game.COMMAND_MODELS[kind]
    built: game.GameCommand = model.model_construct(  # type: ignore[assignment]
        **command._asdict()
    )
    return built


def event_model(event: Event) -> game.GameEvent:
    """The contract model of a rules event, built without validation (the rules made it)."""
    model = game.EVENT_MODELS[event_type(event)]
    built: game.GameEvent = model.model_construct(**event._asdict())  # type: ignore[assignment]
    return built


def rules_event(event: game.GameEvent) -> Event:
    cls, fields = _EVENT_FIELDS[event.type]
    rules: Event = cls(*(getattr(event, name) for name in fields))
    return rules


def new_game(mode: str, boosts: Sequence[dict[int, int]], seed: int) -> State:
    """A new game at game time 0; raises `RulesError` for a mode the rules do not know."""
    seats = [opolyx_rules.SeatSetup(boosts=dict(b)) for b in boosts]
    return opolyx_rules.new_game(mode, seats, seed, now=0.0)
