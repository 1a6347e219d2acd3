"""Managing holdings (R8, R9): build, sell buildings, mortgage, lift a mortgage.

Each ``check_*`` is the one guard of its command: it returns the ``Refusal`` that forbids
the action, or None. ``decide`` raises it and ``legal_commands`` lists what passes, so the
two never disagree. The R8/R9 rules proper (``sell_rule``, ``mortgage_rule``) also serve
raising funds, whatever the window.
"""

from __future__ import annotations

from .assets import unmortgage_cost
from .board import GROUP_SLOTS, IS_STREET, MAX_BUILDINGS, PROPERTY_SLOT, SQUARES
from .refusal import Refusal, not_a_property, per_square
from .state import PaymentPending, RollPending, State

_BUILD_NOT_NOW = Refusal("manage/not_now", "you may build only on your turn, before rolling")
_SELL_NOT_NOW = Refusal("manage/not_now", "you may sell before rolling or in a payment pause")
_MORTGAGE_NOT_NOW = Refusal(
    "manage/not_now", "you may mortgage before rolling or in a payment pause"
)
_UNMORTGAGE_NOT_NOW = Refusal("manage/not_now", "you may lift a mortgage only before rolling")
_NOT_OWNED = per_square("property/not_owned", "you do not own square {square}")
_NOT_STREET = Refusal("build/not_street", "only streets can have buildings")
_GROUP_INCOMPLETE = per_square("build/group_incomplete", "you need the whole {group} group")
_GROUP_MORTGAGED = per_square("build/group_mortgaged", "a street of the {group} group is mortgaged")
_MAX = per_square("build/max", f"square {{square}} already has {MAX_BUILDINGS} buildings")
_ONCE = per_square("build/once_per_turn", "square {square} was already raised this turn")
_UNEVEN_BUILD = Refusal("build/uneven", "build evenly: raise the lowest street of the group first")
_BUILD_FUNDS = per_square("funds/insufficient", "a building costs {cost}")
_NO_BUILDINGS = per_square("sell/no_buildings", "square {square} has no buildings")
_UNEVEN_SELL = Refusal("sell/uneven", "sell evenly: sell from the highest street first")
_ALREADY = per_square("mortgage/already", "square {square} is already mortgaged")
_GROUP_BUILT = Refusal(
    "mortgage/group_has_buildings", "sell the group's buildings before mortgaging"
)
_NOT_MORTGAGED = per_square("mortgage/not_mortgaged", "square {square} is not mortgaged")


def window(state: State, seat: int) -> str | None:
    """Which management window ``seat`` has now: "turn" (before rolling), "payment"
    (during its own payment pause), or None."""
    pending = state.pending
    if pending is None or pending.seat != seat:
        return None
    kind = type(pending)
    if kind is RollPending:
        return "turn"
    if kind is PaymentPending:
        return "payment"
    return None


# The guards below are called for every owned square on every decision (legal_commands):
# they read the state directly rather than through helpers, for speed.
_ANY_WINDOW = (RollPending, PaymentPending)


def check_build(state: State, seat: int, square: int) -> Refusal | None:
    pending = state.pending
    if type(pending) is not RollPending or pending.seat != seat:
        return _BUILD_NOT_NOW
    slot = PROPERTY_SLOT.get(square)
    if slot is None:
        return not_a_property(square)
    props = state.props
    here = props[slot]
    if here.owner != seat:
        return _NOT_OWNED[square]
    if not IS_STREET[square]:
        return _NOT_STREET
    group = GROUP_SLOTS[square]
    for other in group:
        if props[other].owner != seat:
            return _GROUP_INCOMPLETE[square]
    for other in group:
        if props[other].mortgaged:
            return _GROUP_MORTGAGED[square]
    level = here.buildings
    if level >= MAX_BUILDINGS:
        return _MAX[square]
    if square in state.built:
        return _ONCE[square]
    if state.config.even_building:
        for other in group:
            if props[other].buildings < level:
                return _UNEVEN_BUILD
    if state.seats[seat].cash < SQUARES[square].building_cost:
        return _BUILD_FUNDS[square]
    return None


def check_sell(state: State, seat: int, square: int) -> Refusal | None:
    pending = state.pending
    if type(pending) not in _ANY_WINDOW or pending.seat != seat:  # type: ignore[union-attr]
        return _SELL_NOT_NOW
    slot = PROPERTY_SLOT.get(square)
    if slot is None:
        return not_a_property(square)
    if state.props[slot].owner != seat:
        return _NOT_OWNED[square]
    return sell_rule(state, square)


def check_mortgage(state: State, seat: int, square: int) -> Refusal | None:
    pending = state.pending
    if type(pending) not in _ANY_WINDOW or pending.seat != seat:  # type: ignore[union-attr]
        return _MORTGAGE_NOT_NOW
    slot = PROPERTY_SLOT.get(square)
    if slot is None:
        return not_a_property(square)
    if state.props[slot].owner != seat:
        return _NOT_OWNED[square]
    return mortgage_rule(state, square)


def check_unmortgage(state: State, seat: int, square: int) -> Refusal | None:
    pending = state.pending
    if type(pending) is not RollPending or pending.seat != seat:
        return _UNMORTGAGE_NOT_NOW
    slot = PROPERTY_SLOT.get(square)
    if slot is None:
        return not_a_property(square)
    here = state.props[slot]
    if here.owner != seat:
        return _NOT_OWNED[square]
    if not here.mortgaged:
        return _NOT_MORTGAGED[square]
    cost = unmortgage_cost(state.config, square)
    if state.seats[seat].cash < cost:
        return Refusal("funds/insufficient", f"lifting this mortgage costs {cost}")
    return None


def sell_rule(state: State, square: int) -> Refusal | None:
    """R8 for selling one building of an owned square, whenever it happens."""
    props = state.props
    here = props[PROPERTY_SLOT[square]].buildings
    if here == 0:
        return _NO_BUILDINGS[square]
    if state.config.even_building:
        for other in GROUP_SLOTS[square]:
            if props[other].buildings > here:
                return _UNEVEN_SELL
    return None


def mortgage_rule(state: State, square: int) -> Refusal | None:
    """R9 for mortgaging an owned square, whenever it happens."""
    props = state.props
    if props[PROPERTY_SLOT[square]].mortgaged:
        return _ALREADY[square]
    if IS_STREET[square]:
        for other in GROUP_SLOTS[square]:
            if props[other].buildings:
                return _GROUP_BUILT
    return None


def sellable_squares(state: State, seat: int) -> list[int]:
    """Squares of ``seat`` from which one building may be sold by the rules of R8,
    whatever the window (raising funds on a timeout, liquidating on going out)."""
    return [
        p.square
        for p in state.props
        if p.owner == seat and p.buildings and sell_rule(state, p.square) is None
    ]


def mortgageable_squares(state: State, seat: int) -> list[int]:
    """Squares of ``seat`` that may be mortgaged by the rules of R9, whatever the window."""
    return [
        p.square for p in state.props if p.owner == seat and mortgage_rule(state, p.square) is None
    ]
