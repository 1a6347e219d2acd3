"""One guard per command: the ``Refusal`` that forbids it now, or None.

A guard takes the state and the command's fields (``guard(state, *command)``), so
``legal_commands`` can ask about a command without building it. ``decide`` raises what
the guard returns; the seat-level checks (game over, unknown seat, seat out) come before
any guard and are the engine's. ``GUARDS`` maps every seat command to its guard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import management, trade
from .assets import liquidation_value
from .board import BOARD_SIZE, SQUARES
from .commands import (
    BUS_MOVES,
    AcceptOffer,
    Bid,
    Build,
    Buy,
    CancelOffer,
    ChooseBus,
    DeclareBankruptcy,
    Decline,
    JackpotBet,
    JackpotDecline,
    Mortgage,
    OfferTrade,
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
from .refusal import Refusal, per_square
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

Guard = Callable[..., Refusal | None]

_PRICE = per_square("funds/insufficient", "the price is {price}")
_NOT_IN_JAIL = Refusal("jail/not_in_jail", "you are not in jail")
_BAD_NUMBERS = Refusal(
    "jackpot/bad_numbers", "choose one, two or three distinct numbers from 1 to 6"
)
_BAD_MOVE = Refusal("bus/bad_move", "move must be 'sum', 'first' or 'second'")
_BAD_SQUARE = Refusal("teleport/bad_square", f"square must be 0-{BOARD_SIZE - 1}")
_CAN_PAY = Refusal(
    "bankrupt/can_pay",
    "bankruptcy is offered only when selling and mortgaging everything would not cover the debt",
)


def _phase(state: State, seat: int, kind: type[Any], what: str) -> Refusal | None:
    """None when the game waits for ``seat``'s decision of this kind."""
    pending = state.pending
    if type(pending) is kind and pending.seat == seat:  # type: ignore[union-attr]
        return None
    if pending is None or pending.seat != seat:
        return Refusal("turn/not_your_turn", f"it is not your decision: cannot {what} now")
    return Refusal(
        "turn/wrong_phase", f"cannot {what} now: the game waits for your {pending.kind} decision"
    )


def check_roll(state: State, seat: int) -> Refusal | None:
    pending = state.pending
    if type(pending) is RollPending and pending.seat == seat:
        return None  # first, without a call: the guard of about every other command
    return _phase(state, seat, RollPending, "roll")


def check_pay_bail(state: State, seat: int) -> Refusal | None:
    refusal = _phase(state, seat, RollPending, "pay bail")
    if refusal is not None:
        return refusal
    if not state.seats[seat].in_jail:
        return _NOT_IN_JAIL
    bail = state.config.bail
    if state.seats[seat].cash < bail:
        # R23.3: voluntary bail needs the cash; sell or mortgage first.
        return Refusal("funds/insufficient", f"bail is {bail}; roll for doubles")
    return None


def check_buy(state: State, seat: int) -> Refusal | None:
    refusal = _phase(state, seat, BuyPending, "buy")
    if refusal is not None:
        return refusal
    square: int = state.pending.square  # type: ignore[union-attr]
    if state.seats[seat].cash < SQUARES[square].price:
        return _PRICE[square]
    return None


def check_decline(state: State, seat: int) -> Refusal | None:
    return _phase(state, seat, BuyPending, "decline")


def check_bid(state: State, seat: int) -> Refusal | None:
    refusal = _phase(state, seat, AuctionPending, "bid")
    if refusal is not None:
        return refusal
    minimum: int = state.pending.minimum  # type: ignore[union-attr]
    if state.seats[seat].cash < minimum:
        return Refusal("funds/insufficient", f"the minimum bid is {minimum}")
    return None


def check_pass(state: State, seat: int) -> Refusal | None:
    return _phase(state, seat, AuctionPending, "pass")


def check_pay(state: State, seat: int) -> Refusal | None:
    pending = state.pending
    if type(pending) is not PaymentPending or pending.seat != seat:
        return _phase(state, seat, PaymentPending, "pay")
    amount = pending.amount
    cash = state.seats[seat].cash
    if cash < amount:
        return Refusal(
            "funds/insufficient",
            f"you owe {amount} but hold {cash}: sell buildings, mortgage or trade first",
        )
    return None


def check_bankrupt(state: State, seat: int) -> Refusal | None:
    refusal = _phase(state, seat, PaymentPending, "declare bankruptcy")
    if refusal is not None:
        return refusal
    if liquidation_value(state, seat) >= state.pending.amount:  # type: ignore[union-attr]
        return _CAN_PAY
    return None


def check_resign(state: State, seat: int) -> Refusal | None:
    return None


def check_jackpot(state: State, seat: int, numbers: tuple[int, ...]) -> Refusal | None:
    refusal = _phase(state, seat, JackpotPending, "bet at the Jackpot")
    if refusal is not None:
        return refusal
    if (
        not 1 <= len(numbers) <= 3
        or len(set(numbers)) != len(numbers)
        or any(not 1 <= n <= 6 for n in numbers)
    ):
        return _BAD_NUMBERS
    return None


def check_jackpot_decline(state: State, seat: int) -> Refusal | None:
    return _phase(state, seat, JackpotPending, "decline the Jackpot")


def check_bus(state: State, seat: int, move: str) -> Refusal | None:
    refusal = _phase(state, seat, BusPending, "choose the Bus move")
    if refusal is not None:
        return refusal
    return None if move in BUS_MOVES else _BAD_MOVE


def check_teleport(state: State, seat: int, square: int) -> Refusal | None:
    refusal = _phase(state, seat, TeleportPending, "teleport")
    if refusal is not None:
        return refusal
    return None if 0 <= square < BOARD_SIZE else _BAD_SQUARE


def check_offer(state: State, *fields: Any) -> Refusal | None:
    return trade.check_offer(state, OfferTrade(*fields))


def check_accept(state: State, seat: int, offer: str) -> Refusal | None:
    return trade.check_answer(state, seat, offer, accepting=True)


def check_reject(state: State, seat: int, offer: str) -> Refusal | None:
    return trade.check_answer(state, seat, offer, accepting=False)


def check_cancel(state: State, seat: int, offer: str) -> Refusal | None:
    return trade.check_cancel(state, seat, offer)


GUARDS: dict[type[Any], Guard] = {
    Roll: check_roll,
    PayBail: check_pay_bail,
    Buy: check_buy,
    Decline: check_decline,
    Bid: check_bid,
    Pass: check_pass,
    Build: management.check_build,
    Sell: management.check_sell,
    Mortgage: management.check_mortgage,
    Unmortgage: management.check_unmortgage,
    Pay: check_pay,
    DeclareBankruptcy: check_bankrupt,
    Resign: check_resign,
    JackpotBet: check_jackpot,
    JackpotDecline: check_jackpot_decline,
    ChooseBus: check_bus,
    Teleport: check_teleport,
    OfferTrade: check_offer,
    AcceptOffer: check_accept,
    RejectOffer: check_reject,
    CancelOffer: check_cancel,
}
