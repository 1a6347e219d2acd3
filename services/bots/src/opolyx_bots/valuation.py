"""What things are worth to one seat: properties (with group completion and blocking),
a whole position, and a trade. Pure functions of the rules library's state."""

from __future__ import annotations

from opolyx_rules import (
    GROUP_SQUARES,
    PROPERTY_SLOT,
    SQUARES,
    STREET_GROUPS,
    SquareKind,
    State,
    are_allies,
    base_rent,
    property_state,
    with_fields,
)

from opolyx_bots.styles import Style

__all__ = [
    "completed_groups",
    "danger",
    "friendly",
    "liquidity",
    "monopoly_value",
    "position_value",
    "reserve",
    "square_value",
    "trade_gain",
    "with_transfer",
]

#: value of a complete unbuilt colour group on top of its list prices, per unit of price
MONOPOLY_BONUS = 0.8
#: typical white-dice total for utility rent estimates
TYPICAL_DICE = 7


def friendly(state: State, a: int | None, b: int) -> bool:
    """Same seat or Team allies."""
    return a is not None and (a == b or are_allies(state, a, b))


def danger(state: State, seat: int) -> int:
    """The biggest rent an opponent could charge the seat on one landing."""
    worst = 0
    for p in state.props:
        if p.owner is None or friendly(state, p.owner, seat) or p.mortgaged:
            continue
        sq = SQUARES[p.square]
        if sq.kind is SquareKind.UTILITY:
            held = sum(
                1 for q in GROUP_SQUARES["utility"] if property_state(state, q).owner == p.owner
            )
            worst = max(worst, TYPICAL_DICE * (40 if held == 1 else 100))
        else:
            worst = max(worst, base_rent(state, p.square))
    return worst


def reserve(state: State, seat: int, style: Style) -> int:
    """Cash the seat keeps back when spending by choice."""
    return style.reserve + int(style.danger_weight * danger(state, seat))


def liquidity(state: State, seat: int) -> int:
    """Cash plus what mortgaging loose, unbuilt properties would raise (the safety net)."""
    groups = completed_groups(state, seat)
    value = state.seats[seat].cash
    for p in state.props:
        if p.owner == seat and not p.mortgaged and p.buildings == 0:
            sq = SQUARES[p.square]
            if sq.group not in groups:
                value += sq.mortgage_value
    return value


def square_value(state: State, seat: int, square: int, style: Style) -> int:
    """What owning ``square`` (unbuilt, unmortgaged) is worth to ``seat``, in money."""
    sq = SQUARES[square]
    price = sq.price
    others = [property_state(state, q) for q in GROUP_SQUARES[sq.group] if q != square]
    mine = sum(1 for p in others if friendly(state, p.owner, seat))
    foreign = [
        p.owner for p in others if p.owner is not None and not friendly(state, p.owner, seat)
    ]
    if sq.kind is SquareKind.STREET:
        group_price = sum(SQUARES[q].price for q in GROUP_SQUARES[sq.group])
        value = float(price)
        if mine == len(others):
            value += style.group_weight * MONOPOLY_BONUS * group_price
        elif not foreign:
            value += 0.25 * mine * price
        if foreign and len(foreign) == len(others) and len(set(foreign)) == 1:
            # the last piece of an opponent's group: owning it blocks them
            value += 0.5 * style.group_weight * price
        elif foreign and not mine:
            # keeps an opponent from getting closer to a group
            value += 0.15 * style.group_weight * price
        return int(value)
    if sq.kind is SquareKind.DEALERSHIP:
        return int(price * (1.0 + 0.2 * mine))
    # utility
    return int(price * (0.75 + 0.15 * mine))


def completed_groups(state: State, seat: int) -> set[str]:
    """Colour groups wholly held by the seat (or by the seat's side in Team mode)."""
    return {
        g
        for g in STREET_GROUPS
        if all(friendly(state, property_state(state, q).owner, seat) for q in GROUP_SQUARES[g])
    }


def position_value(state: State, seat: int, style: Style) -> int:
    """Cash plus holdings, counting complete groups above their list prices."""
    value = state.seats[seat].cash
    for p in state.props:
        if p.owner != seat:
            continue
        sq = SQUARES[p.square]
        value += sq.price - (sq.mortgage_value // 2 if p.mortgaged else 0)
        value += p.buildings * sq.building_cost
    for g in completed_groups(state, seat):
        group_price = sum(SQUARES[q].price for q in GROUP_SQUARES[g])
        value += int(style.group_weight * MONOPOLY_BONUS * group_price)
    # partial groups without a foreign owner are halfway to a monopoly
    for g in STREET_GROUPS:
        owners = {property_state(state, q).owner for q in GROUP_SQUARES[g]}
        if seat in owners and owners <= {seat, None} and None in owners:
            value += int(0.1 * sum(SQUARES[q].price for q in GROUP_SQUARES[g]))
    return value


def with_transfer(
    state: State,
    frm: int,
    to: int,
    give_cash: int,
    give_squares: tuple[int, ...],
    take_cash: int,
    take_squares: tuple[int, ...],
) -> State:
    """The state as it would be after the trade (ownership and cash only)."""
    props = list(state.props)
    for square in give_squares:
        slot = PROPERTY_SLOT[square]
        props[slot] = props[slot]._replace(owner=to)
    for square in take_squares:
        slot = PROPERTY_SLOT[square]
        props[slot] = props[slot]._replace(owner=frm)
    seats = list(state.seats)
    seats[frm] = seats[frm]._replace(cash=seats[frm].cash - give_cash + take_cash)
    seats[to] = seats[to]._replace(cash=seats[to].cash + give_cash - take_cash)
    return with_fields(state, props=tuple(props), seats=tuple(seats))


def monopoly_value(state: State, seat: int, style: Style) -> int:
    """The part of ``position_value`` that comes from complete colour groups."""
    return sum(
        int(style.group_weight * MONOPOLY_BONUS * sum(SQUARES[q].price for q in GROUP_SQUARES[g]))
        for g in completed_groups(state, seat)
    )


#: how much of an opponent's new monopoly counts as a loss for us
OPPONENT_GROUP_WEIGHT = 0.6


def trade_gain(state: State, after: State, me: int, other: int, style: Style) -> int:
    """What a trade is worth to ``me``: my gain, minus part of the other side's gain in
    groups (their monopoly is my danger). An ally's gain counts as mine."""
    mine = position_value(after, me, style) - position_value(state, me, style)
    if friendly(state, other, me):
        return mine + position_value(after, other, style) - position_value(state, other, style)
    theirs = monopoly_value(after, other, style) - monopoly_value(state, other, style)
    return mine - int(OPPONENT_GROUP_WEIGHT * max(0, theirs))
