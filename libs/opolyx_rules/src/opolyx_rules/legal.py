"""``legal_commands(state, seat)``: every command the seat may send now.

Built on the commands' own guards (``guards``, ``management``, ``trade``): a command is
listed exactly when its guard passes, so ``legal_commands`` and ``decide`` never disagree.
Trade *offers* are open-ended and not enumerated (``trade.can_offer`` tells whether the
seat may propose now); accepting, rejecting and cancelling open offers are listed.
Resigning is always possible for a seat still in the game and is listed last.
"""

from __future__ import annotations

from itertools import combinations

from . import guards
from .board import BOARD_SIZE
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
from .management import check_build, check_mortgage, check_sell, check_unmortgage, window
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
from .trade import check_answer, check_cancel

JACKPOT_CHOICES: tuple[tuple[int, ...], ...] = tuple(
    combo for size in (1, 2, 3) for combo in combinations(range(1, 7), size)
)

# Commands are immutable values, so the lists share prebuilt ones: building a command
# costs more than checking its guard, and this runs on every decision of every game.
_SEATS = range(MAX_SEATS)
_ROLL = tuple(Roll(seat) for seat in _SEATS)
_PAY_BAIL = tuple(PayBail(seat) for seat in _SEATS)
_BUY = tuple(Buy(seat) for seat in _SEATS)
_DECLINE = tuple(Decline(seat) for seat in _SEATS)
_BID = tuple(Bid(seat) for seat in _SEATS)
_PASS = tuple(Pass(seat) for seat in _SEATS)
_PAY = tuple(Pay(seat) for seat in _SEATS)
_BANKRUPT = tuple(DeclareBankruptcy(seat) for seat in _SEATS)
_RESIGN = tuple(Resign(seat) for seat in _SEATS)
_JACKPOT: tuple[tuple[Command, ...], ...] = tuple(
    (*(JackpotBet(seat, numbers) for numbers in JACKPOT_CHOICES), JackpotDecline(seat))
    for seat in _SEATS
)
_BUS = tuple(tuple(ChooseBus(seat, move) for move in guards.BUS_MOVES) for seat in _SEATS)
_BUILD = tuple(tuple(Build(seat, sq) for sq in range(BOARD_SIZE)) for seat in _SEATS)
_SELL = tuple(tuple(Sell(seat, sq) for sq in range(BOARD_SIZE)) for seat in _SEATS)
_MORTGAGE = tuple(tuple(Mortgage(seat, sq) for sq in range(BOARD_SIZE)) for seat in _SEATS)
_UNMORTGAGE = tuple(tuple(Unmortgage(seat, sq) for sq in range(BOARD_SIZE)) for seat in _SEATS)


def legal_commands(state: State, seat: int) -> list[Command]:
    if state.finished or not 0 <= seat < len(state.seats) or state.seats[seat].out:
        return []
    out: list[Command] = []
    pending = state.pending
    kind = type(pending) if pending is not None and pending.seat == seat else None
    if kind is RollPending:
        out.append(_ROLL[seat])
        if guards.check_pay_bail(state, seat) is None:
            out.append(_PAY_BAIL[seat])
    elif kind is BuyPending:
        if guards.check_buy(state, seat) is None:
            out.append(_BUY[seat])
        out.append(_DECLINE[seat])
    elif kind is AuctionPending:
        if guards.check_bid(state, seat) is None:
            out.append(_BID[seat])
        out.append(_PASS[seat])
    elif kind is PaymentPending:
        if guards.check_pay(state, seat) is None:
            out.append(_PAY[seat])
        elif guards.check_bankrupt(state, seat) is None:
            out.append(_BANKRUPT[seat])
    elif kind is JackpotPending:
        out.extend(_JACKPOT[seat])
    elif kind is BusPending:
        out.extend(_BUS[seat])
    elif kind is TeleportPending:
        # Options run forward from the square the player stands on; the first is the
        # one a timeout takes (R16, R23.5).
        here = state.seats[seat].position
        out.extend(Teleport(seat, (here + k) % BOARD_SIZE) for k in range(BOARD_SIZE))
    if window(state, seat) is not None:
        build, sell, mortgage, unmortgage = (
            _BUILD[seat],
            _SELL[seat],
            _MORTGAGE[seat],
            _UNMORTGAGE[seat],
        )
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
    out.append(_RESIGN[seat])
    return out
