"""``legal_commands(state, seat)``: every command the seat may send now.

Trade *offers* are open-ended and not enumerated (``trade.can_offer`` tells whether the
seat may propose now); accepting, rejecting and cancelling open offers are listed.
Resigning is always possible for a seat still in the game and is listed last.
"""

from __future__ import annotations

from itertools import combinations

from . import management
from .assets import liquidation_value
from .board import BOARD_SIZE, PROPERTY_SLOT, PROPERTY_SQUARES, SQUARES
from .commands import (
    AcceptOffer,
    Bid,
    Build,
    Buy,
    CancelOffer,
    ChooseBus,
    Command,
    DeclareBankruptcy,
    Decline,
    JackpotBet,
    JackpotDecline,
    Mortgage,
    Pass,
    Pay,
    PayBail,
    RejectOffer,
    Resign,
    Roll,
    Sell,
    Teleport,
    Unmortgage,
)
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
from .trade import check_offer_terms

JACKPOT_CHOICES: tuple[tuple[int, ...], ...] = tuple(
    combo for size in (1, 2, 3) for combo in combinations(range(1, 7), size)
)


def legal_commands(state: State, seat: int) -> list[Command]:
    if state.finished or not 0 <= seat < len(state.seats) or state.seats[seat].out:
        return []
    out: list[Command] = []
    pending = state.pending
    mine = pending is not None and pending.seat == seat
    cash = state.seats[seat].cash
    if mine and isinstance(pending, RollPending):
        out.append(Roll(seat))
        if state.seats[seat].in_jail and cash >= state.config.bail:
            out.append(PayBail(seat))
    elif mine and isinstance(pending, BuyPending):
        if cash >= SQUARES[pending.square].price:
            out.append(Buy(seat))
        out.append(Decline(seat))
    elif mine and isinstance(pending, AuctionPending):
        if cash >= pending.minimum:
            out.append(Bid(seat))
        out.append(Pass(seat))
    elif mine and isinstance(pending, PaymentPending):
        if cash >= pending.amount:
            out.append(Pay(seat))
        elif liquidation_value(state, seat) < pending.amount:
            out.append(DeclareBankruptcy(seat))
    elif mine and isinstance(pending, JackpotPending):
        out.extend(JackpotBet(seat, numbers) for numbers in JACKPOT_CHOICES)
        out.append(JackpotDecline(seat))
    elif mine and isinstance(pending, BusPending):
        out.extend(ChooseBus(seat, move) for move in ("sum", "first", "second"))
    elif mine and isinstance(pending, TeleportPending):
        # Options run forward from the square the player stands on; the first is the
        # one a timeout takes (R16).
        here = state.seats[seat].position
        out.extend(Teleport(seat, (here + k) % BOARD_SIZE) for k in range(BOARD_SIZE))
    if management.window(state, seat) is not None:
        owned = [sq for sq in PROPERTY_SQUARES if state.props[PROPERTY_SLOT[sq]].owner == seat]
        for square in owned:
            if management.check_build(state, seat, square) is None:
                out.append(Build(seat, square))
            if management.check_sell(state, seat, square) is None:
                out.append(Sell(seat, square))
            if management.check_mortgage(state, seat, square) is None:
                out.append(Mortgage(seat, square))
            if management.check_unmortgage(state, seat, square) is None:
                out.append(Unmortgage(seat, square))
    for offer in state.offers:
        if offer.to == seat:
            terms = (offer.give_cash, offer.give_squares, offer.take_cash, offer.take_squares)
            if check_offer_terms(state, offer.frm, offer.to, *terms) is None:
                out.append(AcceptOffer(seat, offer.id))
            out.append(RejectOffer(seat, offer.id))
        elif offer.frm == seat:
            out.append(CancelOffer(seat, offer.id))
    out.append(Resign(seat))
    return out
