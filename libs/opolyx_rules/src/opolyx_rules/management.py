"""Managing holdings (R8, R9): build, sell buildings, mortgage, lift a mortgage.

Each ``check_*`` returns the rules error that forbids the action, or None; the engine
raises it and ``legal_commands`` uses the same checks, so the two never disagree.
"""

from __future__ import annotations

from .assets import group_props, holds_group, prop, unmortgage_cost
from .board import MAX_BUILDINGS, PROPERTY_SLOT, SQUARES, SquareKind
from .errors import RulesError
from .state import PaymentPending, RollPending, State


def window(state: State, seat: int) -> str | None:
    """Which management window ``seat`` has now: "turn" (before rolling), "payment"
    (during its own payment pause), or None."""
    pending = state.pending
    if isinstance(pending, RollPending) and pending.seat == seat:
        return "turn"
    if isinstance(pending, PaymentPending) and pending.seat == seat:
        return "payment"
    return None


def _own_property(state: State, seat: int, square: int) -> RulesError | None:
    if square not in PROPERTY_SLOT:
        return RulesError("property/unknown", f"square {square} is not a property")
    if prop(state, square).owner != seat:
        return RulesError("property/not_owned", f"you do not own square {square}")
    return None


def check_build(state: State, seat: int, square: int) -> RulesError | None:
    if window(state, seat) != "turn":
        return RulesError("manage/not_now", "you may build only on your turn, before rolling")
    error = _own_property(state, seat, square)
    if error:
        return error
    sq = SQUARES[square]
    if sq.kind is not SquareKind.STREET:
        return RulesError("build/not_street", "only streets can have buildings")
    if not holds_group(state, seat, square):
        return RulesError("build/group_incomplete", f"you need the whole {sq.group} group")
    group = group_props(state, square)
    if any(p.mortgaged for p in group):
        return RulesError("build/group_mortgaged", f"a street of the {sq.group} group is mortgaged")
    here = prop(state, square).buildings
    if here >= MAX_BUILDINGS:
        return RulesError("build/max", f"square {square} already has {MAX_BUILDINGS} buildings")
    if square in state.built:
        return RulesError("build/once_per_turn", f"square {square} was already raised this turn")
    if state.config.even_building and any(p.buildings < here for p in group):
        return RulesError(
            "build/uneven", "build evenly: raise the lowest street of the group first"
        )
    if state.seats[seat].cash < sq.building_cost:
        return RulesError("funds/insufficient", f"a building costs {sq.building_cost}")
    return None


def check_sell(state: State, seat: int, square: int) -> RulesError | None:
    if window(state, seat) is None:
        return RulesError("manage/not_now", "you may sell before rolling or in a payment pause")
    return _own_property(state, seat, square) or _sell_rule(state, square)


def _sell_rule(state: State, square: int) -> RulesError | None:
    """R8 for selling one building of an owned square, whenever it happens."""
    here = prop(state, square).buildings
    if here == 0:
        return RulesError("sell/no_buildings", f"square {square} has no buildings")
    if state.config.even_building and any(p.buildings > here for p in group_props(state, square)):
        return RulesError("sell/uneven", "sell evenly: sell from the highest street first")
    return None


def check_mortgage(state: State, seat: int, square: int) -> RulesError | None:
    if window(state, seat) is None:
        return RulesError("manage/not_now", "you may mortgage before rolling or in a payment pause")
    return _own_property(state, seat, square) or _mortgage_rule(state, square)


def _mortgage_rule(state: State, square: int) -> RulesError | None:
    """R9 for mortgaging an owned square, whenever it happens."""
    if prop(state, square).mortgaged:
        return RulesError("mortgage/already", f"square {square} is already mortgaged")
    if SQUARES[square].kind is SquareKind.STREET and any(
        p.buildings for p in group_props(state, square)
    ):
        return RulesError(
            "mortgage/group_has_buildings", "sell the group's buildings before mortgaging"
        )
    return None


def sellable_squares(state: State, seat: int) -> list[int]:
    """Squares of ``seat`` from which one building may be sold by the rules of R8,
    whatever the window (raising funds on a timeout, liquidating on going out)."""
    return [
        p.square
        for p in state.props
        if p.owner == seat and p.buildings and _sell_rule(state, p.square) is None
    ]


def mortgageable_squares(state: State, seat: int) -> list[int]:
    """Squares of ``seat`` that may be mortgaged by the rules of R9, whatever the window."""
    return [
        p.square for p in state.props if p.owner == seat and _mortgage_rule(state, p.square) is None
    ]


def check_unmortgage(state: State, seat: int, square: int) -> RulesError | None:
    if window(state, seat) != "turn":
        return RulesError("manage/not_now", "you may lift a mortgage only before rolling")
    error = _own_property(state, seat, square)
    if error:
        return error
    if not prop(state, square).mortgaged:
        return RulesError("mortgage/not_mortgaged", f"square {square} is not mortgaged")
    cost = unmortgage_cost(state.config, square)
    if state.seats[seat].cash < cost:
        return RulesError("funds/insufficient", f"lifting this mortgage costs {cost}")
    return None
