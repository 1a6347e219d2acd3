"""Between the wire contract's typed models and the rules library's own values.

The table parses every command into its contract model (`opolyx_contracts.game`); the rules
take their NamedTuples. Both have the same fields, so converting is a field copy, never a
JSON round trip on the command path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import opolyx_rules
from opolyx_contracts import game
from opolyx_rules import Command, Event, State
from opolyx_rules.commands import COMMAND_TYPES

__all__ = ["new_game", "rules_command", "rules_event"]

_COMMAND_FIELDS: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    kind: (cls, tuple(cls._fields)) for kind, cls in COMMAND_TYPES.items()
}


def rules_command(command: game.GameCommand, seat: int | None) -> Command:
    """The rules' command for a parsed one, acting for `seat` (the timeout has none)."""
    cls, fields = _COMMAND_FIELDS[command.type]
    values = [seat if name == "seat" else getattr(command, name) for name in fields]
    rules: Command = cls(*values)
    return rules


def rules_event(event: game.GameEvent) -> Event:
    """The rules' event for a stored one (through the rules' own parser: it restores their
    enum values; loading a table is not the hot path)."""
    return opolyx_rules.event_from_json(event.model_dump(mode="json"))


def new_game(mode: str, boosts: Sequence[dict[int, int]], seed: int) -> State:
    """A new game at game time 0; raises `RulesError` for a mode the rules do not know."""
    seats = [opolyx_rules.SeatSetup(boosts=dict(b)) for b in boosts]
    return opolyx_rules.new_game(mode, seats, seed, now=0.0)
