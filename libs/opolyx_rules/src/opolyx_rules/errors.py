"""Rules errors: a stable, namespaced code plus a message a player can read.

Codes travel unchanged to clients (``"turn/not_your_turn"``); never rename one.
"""

from __future__ import annotations


class RulesError(Exception):
    """A command the rules refuse. The state it was checked against is unchanged."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class StateVersionError(ValueError):
    """A stored state from a rules or schema version this library cannot continue."""
