"""``legal_commands(state, seat)``: every command the seat may send now.

Built on the commands' own guards (``guards``, ``management``, ``trade``): a command is
listed exactly when its guard passes, so ``legal_commands`` and ``decide`` never disagree.
Trade *offers* are open-ended and not enumerated (``trade.can_offer`` tells whether the
seat may propose now); accepting, rejecting and cancelling open offers are listed.
Resigning is always possible for a seat still in the game and is listed last.
"""

from __future__ import annotations

from . import guards
from .board import BOARD_SIZE
from .commands import (
    SEAT_COMMANDS,
    AcceptOffer,
    CancelOffer,
    Command,
    RejectOffer,
)
from .management import check_build, check_mortgage, check_sell, check_unmortgage, window
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
from .trade import check_answer, check_cancel


def legal_commands(state: State, seat: int) -> list[Command]:
    if state.finished or not 0 <= seat < len(state.seats) or state.seats[seat].out:
        return []
    out: list[Command] = []
    # The lists share prebuilt commands (``commands.SEAT_COMMANDS``).
    mine = SEAT_COMMANDS[seat]
    pending = state.pending
    kind = type(pending) if pending is not None and pending.seat == seat else None
    if kind is RollPending:
        out.append(mine.roll)
        if guards.check_pay_bail(state, seat) is None:
            out.append(mine.pay_bail)
    elif kind is BuyPending:
        if guards.check_buy(state, seat) is None:
            out.append(mine.buy)
        out.append(mine.decline)
    elif kind is AuctionPending:
        if guards.check_bid(state, seat) is None:
            out.append(mine.bid)
        out.append(mine.pass_)
    elif kind is PaymentPending:
        if guards.check_pay(state, seat) is None:
            out.append(mine.pay)
        elif guards.check_bankrupt(state, seat) is None:
            out.append(mine.bankrupt)
    elif kind is JackpotPending:
        out.extend(mine.jackpot)
    elif kind is BusPending:
        out.extend(mine.bus)
    elif kind is TeleportPending:
        # Options run forward from the square the player stands on; the first is the
        # one a timeout takes (R16, R23.5).
        here = state.seats[seat].position
        teleport = mine.teleport
        out.extend(teleport[(here + k) % BOARD_SIZE] for k in range(BOARD_SIZE))
    if window(state, seat) is not None:
        build, sell, mortgage, unmortgage = mine.build, mine.sell, mine.mortgage, mine.unmortgage
        for p in state.props:
            if p.owner != seat:
                continue
            square = p.square
            if check_build(state, seat, square) is None:
                out.append(build[square])
            if p.buildings and check_sell(state, seat, square) is None:
                out.append(sell[square])
            if check_mortgage(state, seat, square) is None:
                out.append(mortgage[square])
            if p.mortgaged and check_unmortgage(state, seat, square) is None:
                out.append(unmortgage[square])
    for offer in state.offers:
        if offer.to == seat:
            if check_answer(state, seat, offer.id, accepting=True) is None:
                out.append(AcceptOffer(seat, offer.id))
            out.append(RejectOffer(seat, offer.id))
        elif offer.frm == seat and check_cancel(state, seat, offer.id) is None:
            out.append(CancelOffer(seat, offer.id))
    out.append(mine.resign)
    return out
