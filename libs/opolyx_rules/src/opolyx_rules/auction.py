"""Auctions exactly as R7: seat order from the seat after the decliner (who bids last in
the first circuit), opening at list price, fixed steps, the leader skipped, passing final,
automatic passes for those who cannot afford the minimum, nobody bids -> stays unowned.

Each step returns whether the auction has ended; the caller then resolves the landing
(``turn.landed``): an auction never continues play itself."""

from __future__ import annotations

from .board import SQUARES
from .context import Ctx
from .events import BANK, AuctionBid, AuctionEnded, AuctionPassed, AuctionStarted, Transfer
from .state import AuctionPending

NO_BIDDER = -1


def is_running(ctx: Ctx) -> bool:
    return isinstance(ctx.s.pending, AuctionPending)


def _current(ctx: Ctx) -> AuctionPending:
    pending = ctx.s.pending
    assert isinstance(pending, AuctionPending)
    return pending


def start(ctx: Ctx, square: int, decliner: int) -> bool:
    s = ctx.s
    n = len(s.seats)
    order = tuple(
        (decliner + step) % n for step in range(1, n + 1) if not s.seats[(decliner + step) % n].out
    )
    deadline = ctx.now + s.config.auction_bid_seconds
    ctx.emit(AuctionStarted, square, decliner, order, order[0], SQUARES[square].price, deadline)
    return _settle(ctx)


def _next_bidder(ctx: Ctx, auction: AuctionPending, after: int) -> int | None:
    """The next seat in bidding order after ``after`` that may still bid."""
    order = auction.order
    start = order.index(after)
    for step in range(1, len(order) + 1):
        seat = order[(start + step) % len(order)]
        if seat in auction.passed or seat == auction.leader or ctx.s.seats[seat].out:
            continue
        return seat
    return None


def bid(ctx: Ctx, seat: int) -> bool:
    auction = _current(ctx)
    amount = auction.minimum
    step = ctx.s.config.auction_step
    projected = auction._replace(bid=amount, leader=seat, minimum=amount + step)
    nxt = _next_bidder(ctx, projected, seat)
    deadline = ctx.now + ctx.s.config.auction_bid_seconds
    ctx.emit(AuctionBid, seat, amount, NO_BIDDER if nxt is None else nxt, amount + step, deadline)
    return _settle(ctx)


def pass_(ctx: Ctx, seat: int, automatic: bool) -> bool:
    _emit_pass(ctx, _current(ctx), seat, automatic)
    return _settle(ctx)


def _emit_pass(ctx: Ctx, auction: AuctionPending, seat: int, automatic: bool) -> None:
    nxt = _next_bidder(ctx, auction._replace(passed=auction.passed | {seat}), seat)
    deadline = ctx.now + ctx.s.config.auction_bid_seconds
    ctx.emit(AuctionPassed, seat, automatic, NO_BIDDER if nxt is None else nxt, deadline)


def withdraw(ctx: Ctx, seat: int) -> bool:
    """A seat went out during the auction: it counts as passed; a leader's bid is void
    but the price it reached stands as the next minimum."""
    auction = _current(ctx)
    if seat in auction.passed:
        return False
    if seat == auction.seat:
        return pass_(ctx, seat, automatic=True)
    ctx.emit(AuctionPassed, seat, True, auction.seat, auction.deadline)
    return _settle(ctx)


def _settle(ctx: Ctx) -> bool:
    """Auto-pass bidders who cannot afford the minimum; end the auction when only the
    leader (or nobody) is left. True when it has ended."""
    while True:
        auction = _current(ctx)
        if auction.seat == NO_BIDDER:
            _finish(ctx, auction)
            return True
        if ctx.s.seats[auction.seat].cash >= auction.minimum:
            return False
        _emit_pass(ctx, auction, auction.seat, automatic=True)


def _finish(ctx: Ctx, auction: AuctionPending) -> None:
    winner = auction.leader
    if winner is not None:
        ctx.emit(Transfer, winner, BANK, auction.bid, "auction")
    ctx.emit(AuctionEnded, auction.square, winner, auction.bid if winner is not None else 0)
