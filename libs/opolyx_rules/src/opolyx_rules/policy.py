"""The simple policy: the one plain, legal, progress-making player of the library.

It is the baseline every bot must beat, the player of ``simulate`` and the benchmark,
and the stand-in player of the services' tests. Deliberately plain: buy what it can
afford, bid up to list price while it keeps a reserve, build when rich, raise funds
cheapest first, never trade (it turns down every offer) or gamble.
"""

from __future__ import annotations

from .assets import liquidation_value
from .board import GROUP_SQUARES, SQUARES, STREET_GROUPS
from .commands import SEAT_COMMANDS, Build, Mortgage, RejectOffer, SeatCommand, Sell, Teleport
from .holdings import holdings
from .management import check_build, mortgageable_squares, sellable_squares
from .state import (
    AuctionPending,
    BusPending,
    BuyPending,
    JackpotPending,
    PaymentPending,
    RollPending,
    State,
    TeleportPending,
)

__all__ = ["RESERVE", "simple_policy"]

#: cash the simple policy keeps in hand before building or bidding
RESERVE = 2000

#: per street group, in ``STREET_GROUPS`` order: its squares and the cost of one building
_GROUPS: tuple[tuple[tuple[int, ...], int], ...] = tuple(
    (GROUP_SQUARES[group], SQUARES[GROUP_SQUARES[group][0]].building_cost)
    for group in STREET_GROUPS
)
#: below this cash the policy builds nowhere (the cheapest building, plus twice the reserve)
_RICH = RESERVE * 2 + min(cost for _, cost in _GROUPS)


def simple_policy(state: State, seat: int) -> SeatCommand:
    """The simple policy's command for ``seat``, which must be awaited (see module
    docstring); always one of ``legal_commands(state, seat)``. Its fixed answers are the
    prebuilt commands (``commands.SEAT_COMMANDS``): it answers every decision of a
    simulated game, and building a command costs more than choosing it."""
    if state.offers:
        for offer in state.offers:
            if offer.to == seat:
                return RejectOffer(seat, offer.id)
    pending = state.pending
    if pending is None or pending.seat != seat:
        raise ValueError(f"no decision pending for seat {seat}")
    cash = state.seats[seat].cash
    kind = type(pending)
    # The two most common decisions first, their usual answer without a call.
    if kind is RollPending:
        if cash < _RICH:
            return SEAT_COMMANDS[seat].roll
        return _build_or_roll(state, seat, cash)
    if isinstance(pending, PaymentPending):
        if cash >= pending.amount:
            return SEAT_COMMANDS[seat].pay
        return _raise_or_give_up(state, seat, pending.amount)
    if isinstance(pending, BuyPending):
        buy = cash >= SQUARES[pending.square].price
        return SEAT_COMMANDS[seat].buy if buy else SEAT_COMMANDS[seat].decline
    if isinstance(pending, AuctionPending):
        minimum = pending.minimum
        worth_it = minimum <= SQUARES[pending.square].price and cash - minimum >= RESERVE
        return SEAT_COMMANDS[seat].bid if worth_it else SEAT_COMMANDS[seat].pass_
    if kind is JackpotPending:
        return SEAT_COMMANDS[seat].jackpot_decline
    if kind is BusPending:
        return SEAT_COMMANDS[seat].bus[0]  # the sum of the dice
    if kind is TeleportPending:
        unowned = [p.square for p in state.props if p.owner is None]
        return Teleport(seat, unowned[0] if unowned else 0)
    raise ValueError(f"unknown decision {pending!r}")


def _build_or_roll(state: State, seat: int, cash: int) -> SeatCommand:
    """Raise the first buildable street of a whole group while rich, else roll."""
    holders = holdings(state.props).holder
    if seat in holders:
        # The street groups come first in ``holder`` (then dealer and utility, not built on).
        for (squares, cost), holder in zip(_GROUPS, holders, strict=False):
            if holder == seat and cash - cost >= RESERVE * 2:
                for square in squares:
                    if check_build(state, seat, square) is None:
                        return Build(seat, square)
    return SEAT_COMMANDS[seat].roll


def _raise_or_give_up(state: State, seat: int, amount: int) -> SeatCommand:
    """Short of cash for a payment: sell or mortgage the cheapest first, or go bankrupt
    when everything would not cover it."""
    if liquidation_value(state, seat) < amount:
        return SEAT_COMMANDS[seat].bankrupt
    sellable = sellable_squares(state, seat)
    if sellable:
        return Sell(seat, min(sellable, key=lambda q: SQUARES[q].building_cost))
    mortgageable = mortgageable_squares(state, seat)
    return Mortgage(seat, min(mortgageable, key=lambda q: SQUARES[q].price))
