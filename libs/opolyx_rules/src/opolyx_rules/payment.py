"""The payment pause (R11), raising funds, bankruptcy and going out (R12).

A debt never debits silently: ``require`` opens a Pay step for the debtor. What follows
once the pause closes is data (``PaymentPending.then``, a ``Then``) that ``flow.resume``
acts on: this module only settles money and holdings and never continues play, so it
depends on no other rules module but ``endgame``.
"""

from __future__ import annotations

from . import endgame
from .assets import prop, rent_tax_withheld
from .board import SQUARES
from .context import Ctx
from .events import (
    BANK,
    BuildingSold,
    LeftJail,
    OfferClosed,
    PaymentCancelled,
    PaymentMade,
    PaymentRequired,
    PropertyMortgaged,
    SeatWentOut,
    Transfer,
)
from .management import mortgageable_squares, sellable_squares
from .state import JailExit, OfferEnd, OutHow, PaymentPending, Then


def require(
    ctx: Ctx,
    seat: int,
    amount: int,
    creditors: tuple[tuple[int, int], ...],
    reason: str,
    *,
    then: Then = Then.LANDED,
    steps: int = 0,
    queue: tuple[tuple[int, int, int], ...] = (),
) -> None:
    deadline = ctx.now + ctx.s.config.payment_seconds
    ctx.emit(PaymentRequired, seat, amount, creditors, reason, deadline, then, steps, queue)


def open_queued(ctx: Ctx, queue: tuple[tuple[int, int, int], ...], then: Then) -> bool:
    """Open the next pause of a queue of (debtor, amount, creditor), skipping debtors
    who have gone out meanwhile; False when none is left (play resumes with ``then``)."""
    while queue:
        (debtor, amount, creditor), queue = queue[0], queue[1:]
        if not ctx.s.seats[debtor].out:
            require(ctx, debtor, amount, ((creditor, amount),), "card", then=then, queue=queue)
            return True
    return False


def pay(ctx: Ctx, pending: PaymentPending, automatic: bool = False) -> None:
    s = ctx.s
    debtor, reason = pending.seat, pending.reason
    for creditor, share in pending.creditors:
        if creditor >= 0 and s.seats[creditor].out:
            # R21: a creditor eliminated during the pause: their share goes to the bank.
            ctx.emit(Transfer, debtor, BANK, share, "creditor_out")
        elif reason == "rent":
            withheld = rent_tax_withheld(s.config, s.round, share)
            ctx.emit(Transfer, debtor, creditor, share - withheld, "rent")
            if withheld:
                ctx.emit(Transfer, debtor, BANK, withheld, "rent_tax")
        else:
            ctx.emit(Transfer, debtor, creditor, share, reason)
    ctx.emit(PaymentMade, debtor, pending.amount, reason, automatic)
    if reason == "bail":
        ctx.emit(LeftJail, debtor, JailExit.BAIL)


# -- raising funds ------------------------------------------------------------------------


def sell_building(ctx: Ctx, seat: int, square: int) -> None:
    sq = SQUARES[square]
    ctx.emit(Transfer, BANK, seat, sq.building_cost // 2, "building_sale")
    ctx.emit(BuildingSold, seat, square, prop(ctx.s, square).buildings - 1)


def mortgage(ctx: Ctx, seat: int, square: int) -> None:
    ctx.emit(Transfer, BANK, seat, SQUARES[square].mortgage_value, "mortgage")
    ctx.emit(PropertyMortgaged, seat, square)


def raise_funds(ctx: Ctx, seat: int, target: int | None) -> None:
    """Sell buildings, then mortgage, cheapest first, until cash reaches ``target``
    (None: liquidate everything) (R11, R12)."""

    def enough() -> bool:
        return target is not None and ctx.s.seats[seat].cash >= target

    while not enough():
        options = sellable_squares(ctx.s, seat)
        if not options:
            break
        sell_building(ctx, seat, min(options, key=lambda q: (SQUARES[q].building_cost, q)))
    while not enough():
        options = mortgageable_squares(ctx.s, seat)
        if not options:
            break
        mortgage(ctx, seat, min(options, key=lambda q: (SQUARES[q].price, q)))


# -- going out ----------------------------------------------------------------------------


def bankrupt(ctx: Ctx, pending: PaymentPending) -> None:
    """R12: liquidate, split all cash pro rata among the creditors, release, go out."""
    s = ctx.s
    seat = pending.seat
    raise_funds(ctx, seat, None)
    cash = s.seats[seat].cash
    total = sum(share for _, share in pending.creditors)
    paid = 0
    for creditor, share in pending.creditors:
        part = cash * share // total if total else 0
        if part:
            alive = creditor < 0 or not s.seats[creditor].out
            ctx.emit(Transfer, seat, creditor if alive else BANK, part, "bankruptcy")
            paid += part
    if cash - paid:
        ctx.emit(Transfer, seat, BANK, cash - paid, "bankruptcy")
    go_out(ctx, seat, OutHow.BANKRUPT)
    if not s.finished:
        ctx.emit(PaymentCancelled, seat)


def go_out(ctx: Ctx, seat: int, how: OutHow) -> None:
    """Release a seat's holdings (R12) and take it out of the game. The caller repairs
    whatever decision was pending."""
    s = ctx.s
    raise_funds(ctx, seat, None)
    left = s.seats[seat].cash
    if left:
        ctx.emit(Transfer, seat, BANK, left, how)
    for offer in s.offers:
        if seat in (offer.frm, offer.to):
            ctx.emit(OfferClosed, offer.id, OfferEnd.WITHDRAWN)
    ctx.emit(SeatWentOut, seat, how, _heir(ctx, seat))
    endgame.finish_if_decided(ctx)


def _heir(ctx: Ctx, seat: int) -> int | None:
    """Team mode: the next ally in seat order still in the game (R12, R17)."""
    s = ctx.s
    if not s.config.teams:
        return None
    n = len(s.seats)
    team = s.seats[seat].team
    for step in range(1, n):
        other = s.seats[(seat + step) % n]
        if other.team == team and not other.out:
            return other.seat
    return None
