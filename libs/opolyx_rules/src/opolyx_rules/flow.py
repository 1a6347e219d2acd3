"""How play continues once a payment pause closes, an auction ends or a seat goes out.

This is the one place that turns "settled" into "what next": ``resume`` acts on the
closed set of continuations ``Then`` stored with every payment pause (R11), and the
steps here call ``payment`` and ``auction`` (which never continue play themselves) and
then ``turn``. The dependency runs one way: flow -> turn -> payment, auction.
"""

from __future__ import annotations

from . import auction, payment, turn
from .assets import liquidation_value
from .context import Ctx
from .events import PaymentCancelled
from .state import MoveHow, OutHow, PaymentPending, Then

_ROLL_MOVE = MoveHow.ROLL
_LANDED, _ROLL, _MOVE = Then.LANDED, Then.ROLL, Then.MOVE


def resume(ctx: Ctx, then: Then, steps: int) -> None:
    """Continue the turn as ``then`` says (the payment pause it followed is closed)."""
    if ctx.s.finished:
        return
    seat = ctx.s.current_seat
    if then == _LANDED:  # first: rent, taxes and cards, most pauses
        turn.landed(ctx)
    elif then == _ROLL:
        # Bail is part of managing before the roll: it does not restart the clock (R16).
        turn.offer_roll(ctx, seat, deadline=ctx.s.turn_deadline)
    elif then == _MOVE:
        turn.move_by(ctx, seat, steps, _ROLL_MOVE)
    else:
        turn.continue_roll(ctx)


def after_payment(ctx: Ctx, pending: PaymentPending) -> None:
    """Play goes on after the pause closed (paid, or the debtor went out): the next
    queued pause (card 6, R15), else the turn's continuation."""
    queue = pending.queue
    if queue:
        if payment.open_queued(ctx, queue, pending.then):
            return
    elif ctx.s.seats[ctx.s.current_seat].out:
        if not ctx.s.finished:
            turn.end_turn(ctx)
        return
    resume(ctx, pending.then, 0 if queue else pending.steps)


def pay(ctx: Ctx, pending: PaymentPending, automatic: bool = False) -> None:
    payment.pay(ctx, pending, automatic)
    after_payment(ctx, pending)


def bankrupt(ctx: Ctx, pending: PaymentPending) -> None:
    payment.bankrupt(ctx, pending)
    if not ctx.s.finished:
        after_payment(ctx, pending)


def pay_on_timeout(ctx: Ctx, pending: PaymentPending) -> None:
    """R11: the pause ran out: raise the money automatically and pay, or go bankrupt."""
    if liquidation_value(ctx.s, pending.seat) < pending.amount:
        bankrupt(ctx, pending)
        return
    payment.raise_funds(ctx, pending.seat, pending.amount)
    pay(ctx, pending, automatic=True)


def bid(ctx: Ctx, seat: int) -> None:
    if auction.bid(ctx, seat):
        turn.landed(ctx)


def pass_(ctx: Ctx, seat: int, automatic: bool) -> None:
    if auction.pass_(ctx, seat, automatic):
        turn.landed(ctx)


def resign(ctx: Ctx, seat: int) -> None:
    """R12, R23.13: a seat goes out of its own will (or after two missed turns), at any
    moment; whatever decision was pending is repaired."""
    s = ctx.s
    pending = s.pending
    payment.go_out(ctx, seat, OutHow.RESIGNED)
    if s.finished:
        return
    if isinstance(pending, PaymentPending) and pending.seat == seat:
        ctx.emit(PaymentCancelled, seat)
        after_payment(ctx, pending)
    elif auction.is_running(ctx):
        if auction.withdraw(ctx, seat):
            turn.landed(ctx)
    elif seat == s.current_seat and (pending is None or pending.seat == seat):
        turn.end_turn(ctx)
