"""What a seat holds and what it is worth: group holding, rent (R6), net worth (R20),
and how much a seat could raise by selling and mortgaging everything (R11)."""

from __future__ import annotations

from .board import (
    DEALERSHIP_RENT,
    GROUP_SLOTS,
    GROUP_SQUARES,
    IS_STREET,
    PROPERTY_SLOT,
    SQUARES,
    STREET_GROUPS,
    UTILITY_MULTIPLIER,
)
from .holdings import GROUP_INDEX, holdings
from .modes import MAX_SEATS, ModeConfig
from .state import PropState, State


def prop(state: State, square: int) -> PropState:
    return state.props[PROPERTY_SLOT[square]]


def holds_group(state: State, seat: int, square: int) -> bool:
    props = state.props
    return all(props[slot].owner == seat for slot in GROUP_SLOTS[square])


def group_has_buildings(state: State, square: int) -> bool:
    props = state.props
    return any(props[slot].buildings for slot in GROUP_SLOTS[square])


def are_allies(state: State, a: int, b: int) -> bool:
    if not state.config.teams or a == b:
        return False
    return state.seats[a].team == state.seats[b].team


def opponents(state: State, seat: int) -> list[int]:
    """Active seats that are neither ``seat`` nor its allies."""
    return [
        s.seat
        for s in state.seats
        if not s.out and s.seat != seat and not are_allies(state, seat, s.seat)
    ]


def base_rent(state: State, square: int) -> int:
    """The rent before the card boost and the rent tax (0 when mortgaged or unowned)."""
    p = state.props[PROPERTY_SLOT[square]]
    if p.owner is None or p.mortgaged:
        return 0
    sq = SQUARES[square]
    if IS_STREET[square] and p.buildings:
        return sq.rents[p.buildings]
    group = GROUP_INDEX[square]
    derived = holdings(state.props)
    if IS_STREET[square]:
        full = derived.holder[group] == p.owner and not derived.built[group]
        return sq.rents[0] * 2 if full else sq.rents[0]
    held = derived.owners[group].count(p.owner)
    if sq.group == "dealer":
        return DEALERSHIP_RENT[held]
    dice_total = sum(state.dice) if state.dice else 0
    return dice_total * UTILITY_MULTIPLIER[held]


def rent_due(state: State, square: int, tenant: int) -> int:
    """What ``tenant`` owes for landing on ``square``, card boost included (R6, R20)."""
    owner = state.props[PROPERTY_SLOT[square]].owner
    if owner is None or owner == tenant:
        return 0
    if state.config.teams and are_allies(state, owner, tenant):
        return 0
    rent = base_rent(state, square)
    # The boosts a seat brings are capped when the game starts (new_game, R20).
    boost = state.boosts[owner].get(square, 0)
    return rent + rent * boost // 100


def rent_tax_withheld(config: ModeConfig, round_no: int, rent: int) -> int:
    """The part of ``rent`` that leaves the game instead of reaching the owner (R6).

    Share at round r = max * min(1, (r - start + 1) / (full - start + 1)), computed in
    integers so the floor is exact.
    """
    start, full = config.rent_tax_start, config.rent_tax_full
    if start is None or full is None or round_no < start:
        return 0
    span = full - start + 1
    progress = min(round_no - start + 1, span)
    return rent * config.rent_tax_max_num * progress // (config.rent_tax_max_den * span)


def unmortgage_cost(config: ModeConfig, square: int) -> int:
    value = SQUARES[square].mortgage_value
    return value + value * config.mortgage_interest_pct // 100


def net_worth(state: State, seat: int) -> int:
    """Cash + price of unmortgaged + half price of mortgaged + buildings at cost (R20)."""
    return net_worths(state)[seat]


def net_worths(state: State, *, property_values: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """`net_worth` of every seat, in seat order (what the table publishes beside the view
    after every command). ``property_values``: `property_values_of(state.props)`, for a
    caller that keeps it per ``props`` tuple (most commands leave ``props`` as it was)."""
    values = property_values_of(state.props) if property_values is None else property_values
    return tuple(seat.cash + values[i] for i, seat in enumerate(state.seats))


def property_values_of(props: tuple[PropState, ...]) -> tuple[int, ...]:
    """What each seat's properties and buildings add to its net worth (R20), for every seat
    a table can have (`MAX_SEATS`), from the properties alone: one pass for all seats (a
    pass per seat was 1.9x slower with 4 seats)."""
    values = [0] * MAX_SEATS
    for p in props:
        owner = p.owner
        if owner is not None:
            sq = SQUARES[p.square]
            values[owner] += (
                sq.mortgage_value if p.mortgaged else sq.price
            ) + p.buildings * sq.building_cost
    return tuple(values)


def liquidation_value(state: State, seat: int) -> int:
    """Cash after selling every building and mortgaging every property (R11)."""
    value = state.seats[seat].cash
    for p in state.props:
        if p.owner != seat:
            continue
        sq = SQUARES[p.square]
        value += p.buildings * (sq.building_cost // 2)
        if not p.mortgaged:
            value += sq.mortgage_value
    return value


def complete_groups(state: State, seat: int) -> int:
    """Colour groups wholly held by ``seat`` (XP, R20)."""
    return sum(1 for g in STREET_GROUPS if holds_group(state, seat, GROUP_SQUARES[g][0]))


def trade_side_value(state: State, cash: int, squares: tuple[int, ...]) -> int:
    """R10 fairness value: cash + price (unmortgaged) or half price (mortgaged)."""
    value = cash
    for square in squares:
        sq = SQUARES[square]
        value += sq.mortgage_value if prop(state, square).mortgaged else sq.price
    return value
