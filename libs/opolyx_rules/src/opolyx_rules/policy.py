"""The simple policy: the one plain, legal, progress-making player of the library.

It is the baseline every bot must beat, the player of ``simulate`` and the benchmark,
and the stand-in player of the services' tests. Deliberately plain: buy what it can
afford, bid up to list price while it keeps a reserve, build when rich, raise funds
cheapest first, never trade (it turns down every offer) or gamble.
"""

from __future__ import annotations

from .assets import liquidation_value
from .board import GROUP_SQUARES, SQUARES, STREET_GROUPS
from .commands import (
    Bid,
    Build,
    Buy,
    ChooseBus,
    Command,
    DeclareBankruptcy,
    Decline,
    JackpotDecline,
    Mortgage,
    Pass,
    Pay,
    RejectOffer,
    Roll,
    Sell,
    Teleport,
)
from .holdings import holdings
from .management import check_build, mortgageable_squares, sellable_squares
from .modes import MAX_SEATS
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

# The policy's fixed answers, built once per seat (it answers every decision of a
# simulated game, and building a command costs more than choosing it).
_SEATS = range(MAX_SEATS)
_ROLL = tuple(Roll(seat) for seat in _SEATS)
_BUY = tuple(Buy(seat) for seat in _SEATS)
_DECLINE = tuple(Decline(seat) for seat in _SEATS)
_BID = tuple(Bid(seat) for seat in _SEATS)
_PASS = tuple(Pass(seat) for seat in _SEATS)
_PAY = tuple(Pay(seat) for seat in _SEATS)
_BANKRUPT = tuple(DeclareBankruptcy(seat) for seat in _SEATS)
_JACKPOT_DECLINE = tuple(JackpotDecline(seat) for seat in _SEATS)
_BUS_SUM = tuple(ChooseBus(seat, "sum") for seat in _SEATS)


def simple_policy(state: State, seat: int) -> Command:
    """The simple policy's command for ``seat``, which must be awaited (see module
    docstring); always one of ``legal_commands(state, seat)``."""
    if state.offers:
        for offer in state.offers:
            if offer.to == seat:
                return RejectOffer(seat, offer.id)
    pending = state.pending
    if pending is None or pending.seat != seat:
        raise ValueError(f"no decision pending for seat {seat}")
    cash = state.seats[seat].cash
    kind = type(pending)
    if kind is RollPending:
        return _build_or_roll(state, seat, cash)
    if isinstance(pending, PaymentPending):
        return _pay(state, seat, cash, pending.amount)
    if isinstance(pending, BuyPending):
        return _BUY[seat] if cash >= SQUARES[pending.square].price else _DECLINE[seat]
    if isinstance(pending, AuctionPending):
        minimum = pending.minimum
        worth_it = minimum <= SQUARES[pending.square].price and cash - minimum >= RESERVE
        return _BID[seat] if worth_it else _PASS[seat]
    if kind is JackpotPending:
        return _JACKPOT_DECLINE[seat]
    if kind is BusPending:
        return _BUS_SUM[seat]
    if kind is TeleportPending:
        unowned = [p.square for p in state.props if p.owner is None]
        return Teleport(seat, unowned[0] if unowned else 0)
    raise ValueError(f"unknown decision {pending!r}")


def _build_or_roll(state: State, seat: int, cash: int) -> Command:
    """Raise the first buildable street of a whole group while rich, else roll."""
    if cash < _RICH:
        return _ROLL[seat]
    holders = holdings(state.props).holder
    if seat in holders:
        # The street groups come first in ``holder`` (then dealer and utility, not built on).
        for (squares, cost), holder in zip(_GROUPS, holders, strict=False):
            if holder == seat and cash - cost >= RESERVE * 2:
                for square in squares:
                    if check_build(state, seat, square) is None:
                        return Build(seat, square)
    return _ROLL[seat]


def _pay(state: State, seat: int, cash: int, amount: int) -> Command:
    if cash >= amount:
        return _PAY[seat]
    if liquidation_value(state, seat) < amount:
        return _BANKRUPT[seat]
    sellable = sellable_squares(state, seat)
    if sellable:
        return Sell(seat, min(sellable, key=lambda q: SQUARES[q].building_cost))
    mortgageable = mortgageable_squares(state, seat)
    return Mortgage(seat, min(mortgageable, key=lambda q: SQUARES[q].price))
