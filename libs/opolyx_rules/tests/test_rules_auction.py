"""Story tests for auctions (R7).

In most stories seat 2 of four lands on square 39 (list price 4000) and declines it, so
the bidding order is 3, 0, 1, then 2 (the decliner) last.
"""

from __future__ import annotations

from typing import Any

from opolyx_rules.commands import Bid, Buy, Decline, Pass, Roll
from opolyx_rules.events import (
    AuctionBid,
    AuctionEnded,
    AuctionPassed,
    AuctionStarted,
    BuyOffered,
    PropertyDeclined,
)
from opolyx_rules.state import AuctionPending
from story import BANK, Table, cmd, game, legal, of, transfers


def declined_39(seats: int = 4, decliner: int = 2, **players: Any) -> tuple[Table, list[Any]]:
    """``decliner`` rolls from 32 onto 39 and declines it at t=0."""
    cash = {int(k[1:]): {"cash": v} for k, v in players.items()}  # e.g. s3=3999
    setup = {decliner: {"position": 32}}
    for seat, fields in cash.items():
        setup.setdefault(seat, {}).update(fields)
    t = Table(game(seats, first=decliner, dice=((3, 4),), players=setup))
    t.do(Roll(decliner))
    assert t.waits_for() == ("buy", decliner)
    return t, t.do(Decline(decliner))


def auction(t: Table) -> AuctionPending:
    pending = t.pending
    assert isinstance(pending, AuctionPending)
    return pending


def test_bidding_starts_after_the_decliner_who_bids_last() -> None:
    """R7: seat order starting with the seat after the decliner; the decliner bids last."""
    t, events = declined_39()
    assert of(events, AuctionStarted) == [AuctionStarted(39, 2, (3, 0, 1, 2), 3, 4000, 10.0)]
    order = []
    for _ in range(3):
        order.append(auction(t).seat)
        t.do(Pass(auction(t).seat))
    order.append(auction(t).seat)
    assert order == [3, 0, 1, 2]


def test_the_opening_bid_is_the_list_price_and_each_bid_adds_exactly_100() -> None:
    """R7: opening bid = list price; each bid after it is exactly 100 more."""
    t, _ = declined_39()
    assert auction(t).minimum == 4000
    amounts = []
    for seat in (3, 0, 1):
        (bid,) = of(t.do(Bid(seat)), AuctionBid)
        amounts.append((bid.seat, bid.amount, bid.minimum))
    assert amounts == [(3, 4000, 4100), (0, 4100, 4200), (1, 4200, 4300)]
    assert (auction(t).bid, auction(t).leader, auction(t).minimum) == (4200, 1, 4300)


def test_the_only_bid_offered_is_the_minimum() -> None:
    """R7: on your turn you bid that minimum or pass; you cannot name your own figure."""
    t, _ = declined_39()
    assert {cmd(Bid(3)), cmd(Pass(3))} <= legal(t.state, 3)
    assert Bid._fields == ("seat",)  # no amount to name


def test_the_leader_is_skipped_until_outbid() -> None:
    """R7: after bidding, the leader is not asked again until someone outbids them."""
    t, _ = declined_39(seats=3, decliner=0)  # order 1, 2, 0
    t.do(Bid(1))
    assert auction(t).seat == 2
    t.do(Pass(2))
    (bid,) = of(t.do(Bid(0)), AuctionBid)
    assert bid.next_bidder == 1
    events = t.do(Pass(1))
    # 2 passed and 0 leads: nobody else may bid, so 0 buys at 4100.
    assert of(events, AuctionEnded) == [AuctionEnded(39, 0, 4100)]


def test_passing_is_final_for_that_auction() -> None:
    """R7: a seat that passed is never asked again in that auction."""
    t, _ = declined_39()  # order 3, 0, 1, 2
    t.do(Pass(3))
    asked = []
    for seat in (0, 1, 2, 0, 1, 2):
        assert auction(t).seat == seat
        asked.append(seat)
        t.do(Bid(seat))
    assert 3 not in asked
    assert t.refuse(Bid(3)) == "turn/not_your_turn"


def test_when_every_other_seat_has_passed_the_leader_buys_at_their_bid() -> None:
    """R7: the leader buys at their bid, paid to the bank."""
    t, _ = declined_39()
    t.do(Bid(3))
    t.do(Bid(0))
    t.do(Pass(1))
    t.do(Pass(2))
    events = t.do(Pass(3))
    assert of(events, AuctionEnded) == [AuctionEnded(39, 0, 4100)]
    assert transfers(events) == [(0, BANK, 4100, "auction")]
    assert (t.owner(39), t.cash(0), t.cash(3)) == (0, 10900, 15000)
    # the auction closed the decliner's turn
    assert t.waits_for() == ("roll", 3)


def test_a_seat_that_cannot_afford_the_opening_bid_passes_automatically() -> None:
    """R7: a seat that cannot afford the minimum passes automatically."""
    t, events = declined_39(s3=3999)
    assert of(events, AuctionPassed) == [AuctionPassed(3, True, 0, 10.0)]
    assert auction(t).seat == 0


def test_a_seat_that_cannot_afford_a_raised_minimum_passes_automatically() -> None:
    """R7: automatic pass once the minimum climbs above the seat's cash."""
    t, _ = declined_39(s0=4050)
    events = t.do(Bid(3))
    assert of(events, AuctionPassed) == [AuctionPassed(0, True, 1, 10.0)]
    assert auction(t).seat == 1


def test_a_bidder_whose_10_seconds_run_out_passes() -> None:
    """R7/R2: each auction bidder has 10 s; when they run out the bidder passes."""
    t, _ = declined_39()
    t.do(Bid(3), at=4.0)
    assert auction(t).deadline == 14.0
    events = t.timeout()
    assert t.now == 14.0
    assert of(events, AuctionPassed) == [AuctionPassed(0, True, 1, 24.0)]


def test_if_nobody_bids_the_property_stays_unowned_and_the_next_lander_may_buy_it() -> None:
    """R7: nobody bids -> the property stays unowned; the next player to land on it may
    buy it at list price."""
    t, _ = declined_39()
    for seat in (3, 0, 1):
        t.do(Pass(seat))
    events = t.do(Pass(2))
    assert of(events, AuctionEnded) == [AuctionEnded(39, None, 0)]
    assert transfers(events) == []
    assert t.owner(39) is None
    t.override(seats={3: {"position": 32}})
    t.script(dice=((3, 4),))
    events = t.do(Roll(3))
    assert of(events, BuyOffered) == [BuyOffered(3, 39, 75.0)]
    t.do(Buy(3))
    assert (t.owner(39), t.cash(3)) == (3, 11000)


def test_a_lander_who_cannot_afford_the_price_sends_it_to_auction() -> None:
    """R5/R7, R23.2: a property the lander cannot pay for counts as declined."""
    t = Table(game(3, dice=((3, 4),), players={0: {"position": 32, "cash": 3000}}))
    events = t.do(Roll(0))
    assert of(events, PropertyDeclined) == [PropertyDeclined(0, 39, True)]
    assert of(events, AuctionStarted)[0].order == (1, 2, 0)


def test_only_the_bidder_whose_turn_it_is_may_bid() -> None:
    """R7: bidding goes round the table; out of turn is refused."""
    t, _ = declined_39()
    assert t.refuse(Bid(1)) == "turn/not_your_turn"
    assert t.refuse(Pass(0)) == "turn/not_your_turn"
