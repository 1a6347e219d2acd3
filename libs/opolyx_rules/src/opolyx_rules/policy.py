"""The simple policy: the one plain, legal, progress-making player of the library.

It is the baseline every bot must beat, the player of ``simulate`` and the benchmark,
and the stand-in player of the services' tests. Deliberately plain: buy what it can
afford, bid up to list price while it keeps a reserve, build when rich, raise funds
cheapest first, never trade (it turns down every offer) or gamble.
"""

from __future__ import annotations

from .assets import liquidation_value
from .board import GROUP_SQUARES, PROPERTY_SLOT, SQUARES, STREET_GROUPS
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

#: per colour group, in board order: its slots in ``State.props``, its squares, the cost
#: of one building
_GROUPS: tuple[tuple[tuple[int, ...], tuple[int, ...], int], ...] = tuple(
    (
        tuple(PROPERTY_SLOT[sq] for sq in GROUP_SQUARES[group]),
        GROUP_SQUARES[group],
        SQUARES[GROUP_SQUARES[group][0]].building_cost,
    )
    for group in STREET_GROUPS
)


def simple_policy(state: State, seat: int) -> Command:
    """The simple policy's command for ``seat``, which must be awaited (see module
    docstring); always one of ``legal_commands(state, seat)``."""
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
    if isinstance(pending, BuyPending):
        return Buy(seat) if cash >= SQUARES[pending.square].price else Decline(seat)
    if isinstance(pending, AuctionPending):
        minimum = pending.minimum
        worth_it = minimum <= SQUARES[pending.square].price and cash - minimum >= RESERVE
        return Bid(seat) if worth_it else Pass(seat)
    if isinstance(pending, PaymentPending):
        return _pay(state, seat, cash, pending.amount)
    if kind is JackpotPending:
        return JackpotDecline(seat)
    if kind is BusPending:
        return ChooseBus(seat, "sum")
    if kind is TeleportPending:
        unowned = [p.square for p in state.props if p.owner is None]
        return Teleport(seat, unowned[0] if unowned else 0)
    raise ValueError(f"unknown decision {pending!r}")


def _build_or_roll(state: State, seat: int, cash: int) -> Command:
    """Raise the first buildable street of a whole group while rich, else roll."""
    props = state.props
    for slots, squares, cost in _GROUPS:
        if cash - cost < RESERVE * 2:
            continue
        for slot in slots:
            if props[slot].owner != seat:
                break
        else:
            for square in squares:
                if check_build(state, seat, square) is None:
                    return Build(seat, square)
    return Roll(seat)


def _pay(state: State, seat: int, cash: int, amount: int) -> Command:
    if cash >= amount:
        return Pay(seat)
    if liquidation_value(state, seat) < amount:
        return DeclareBankruptcy(seat)
    sellable = sellable_squares(state, seat)
    if sellable:
        return Sell(seat, min(sellable, key=lambda q: SQUARES[q].building_cost))
    mortgageable = mortgageable_squares(state, seat)
    return Mortgage(seat, min(mortgageable, key=lambda q: SQUARES[q].price))
