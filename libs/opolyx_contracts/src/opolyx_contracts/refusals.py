"""The codes of the table's refusals, as they travel to clients.

The rules library refuses a command with a stable ``namespace/reason`` code (its
`RulesError` and `Refusal`), and the table adds a few of its own; clients branch on them
and show a text per code, so the contract lists them. The gateway's tests check the list
against every code the rules' and the table's source spell.
"""

from __future__ import annotations

from opolyx_contracts.table import SEAT_NOT_AUTOMATED

__all__ = [
    "COMMAND_NOT_ALLOWED",
    "OUT_OF_TURN",
    "RULES_ERROR_CODES",
    "SETUP_INVALID",
    "TABLE_ERROR_CODES",
    "TURN_NOT_YOURS",
    "TURN_WRONG_PHASE",
]

SETUP_INVALID = "setup/invalid"
"""A game that cannot be set up as asked (a scenario, or a position to continue from)."""
TURN_NOT_YOURS = "turn/not_your_turn"
TURN_WRONG_PHASE = "turn/wrong_phase"
OUT_OF_TURN = frozenset({TURN_NOT_YOURS, TURN_WRONG_PHASE})
"""Refusals of a command decided on a state the table is not in (or no longer in)."""

RULES_ERROR_CODES: tuple[str, ...] = (
    "bankrupt/can_pay",
    "build/group_incomplete",
    "build/group_mortgaged",
    "build/max",
    "build/not_street",
    "build/once_per_turn",
    "build/uneven",
    "bus/bad_move",
    "command/malformed",
    "command/unknown_type",
    "funds/insufficient",
    "game/finished",
    "jackpot/bad_numbers",
    "jail/not_in_jail",
    "manage/not_now",
    "mortgage/already",
    "mortgage/group_has_buildings",
    "mortgage/not_mortgaged",
    "property/not_owned",
    "property/unknown",
    "seat/out",
    "seat/unknown",
    "sell/no_buildings",
    "sell/uneven",
    "setup/card",
    "setup/first_seat",
    SETUP_INVALID,
    "setup/seats",
    "teleport/bad_square",
    "timeout/not_due",
    "trade/bad_receiver",
    "trade/cash_committed",
    "trade/duplicate_square",
    "trade/empty",
    "trade/has_buildings",
    "trade/insufficient_cash",
    "trade/negative_cash",
    "trade/not_now",
    "trade/not_open",
    "trade/not_owned",
    "trade/not_yours",
    "trade/too_many_offers",
    "trade/unfair",
    TURN_NOT_YOURS,
    TURN_WRONG_PHASE,
)
"""Every code the rules library refuses with (its errors keep their codes on the wire)."""

COMMAND_NOT_ALLOWED = "command/not_allowed"
"""The table's own: a command its sender may not send (a spectator, a seat not its)."""

TABLE_ERROR_CODES: tuple[str, ...] = (COMMAND_NOT_ALLOWED, SEAT_NOT_AUTOMATED)
"""Codes the table service adds to the rules'."""
