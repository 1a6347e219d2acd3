"""Why the rules refuse a command: a stable code and a message, as a cheap value.

Guards return a ``Refusal`` or None; ``decide`` raises ``refusal.error()`` and
``legal_commands`` only asks whether a guard passes. Most refusals are built once, per
square where the message names one, so checking every command of a seat allocates
nothing (``legal_commands`` runs on every decision of every game).
"""

from __future__ import annotations

from typing import NamedTuple

from .board import BOARD_SIZE, SQUARES
from .errors import RulesError


class Refusal(NamedTuple):
    code: str
    message: str

    def error(self) -> RulesError:
        return RulesError(self.code, self.message)


def per_square(code: str, template: str) -> tuple[Refusal, ...]:
    """One refusal per board square; the template may name ``{square}``, ``{group}``,
    ``{price}`` and ``{cost}`` (the building cost)."""
    return tuple(
        Refusal(
            code,
            template.format(square=i, group=sq.group, price=sq.price, cost=sq.building_cost),
        )
        for i, sq in enumerate(SQUARES[:BOARD_SIZE])
    )


def not_a_property(square: int) -> Refusal:
    return Refusal("property/unknown", f"square {square} is not a property")
