"""RULES.md R23: the decisions the library took where R1-R22 left room, one test each
(items tested elsewhere cite R23 there: 1 in test_rules_board_turn, 2 in
test_rules_auction, 3 (third failed roll) and 4 (card 6) in test_rules_jail_jackpot_cards,
5 and 6 in test_modes_speed, 8 (pro rata) in test_rules_payment, 11 in
test_rules_timers_endgame, 12 (offers expire) in test_rules_trade)."""

from __future__ import annotations

from opolyx_rules import can_offer
from opolyx_rules.commands import (
    AcceptOffer,
    Bid,
    DeclareBankruptcy,
    Decline,
    Mortgage,
    OfferTrade,
    Pass,
    Pay,
    PayBail,
    Resign,
    Roll,
)
from opolyx_rules.events import (
    AuctionEnded,
    AuctionPassed,
    Moved,
    OfferClosed,
    OfferMade,
    PaymentRequired,
    RollOffered,
    SentToJail,
)
from opolyx_rules.state import AuctionPending, JailReason, OfferEnd
from story import BANK, Table, game, names, of, owned, transfers


def test_r23_3_voluntary_bail_needs_the_cash_which_may_be_raised_first() -> None:
    """R23.3: bail before rolling needs 500 in cash; the prisoner may mortgage first in
    the same window, then pays through the payment pause and rolls."""
    t = Table(
        game(2, players={0: {"position": 10, "in_jail": True, "cash": 300}}, squares=owned(0, 12))
    )
    assert t.refuse(PayBail(0)) == "funds/insufficient"
    t.do(Mortgage(0, 12))  # +750, still before rolling
    events = t.do(PayBail(0))
    assert [e[:4] for e in of(events, PaymentRequired)] == [(0, 500, ((BANK, 500),), "bail")]
    t.do(Pay(0))
    assert not t.seat(0).in_jail
    assert t.waits_for() == ("roll", 0)
    assert t.cash(0) == 300 + 750 - 500


def test_r23_4_in_team_mode_each_opponent_means_each_seat_of_the_other_side() -> None:
    """R23.4: cards 6 and 7 in Team mode: "each opponent" is each seat of the other side
    (seats alternate sides, so seat 0's opponents are 1 and 3; seat 2 is its ally)."""
    t = Table(game(4, mode="team", dice=((3, 4),), deck=(7,)))
    events = t.do(Roll(0))
    assert [e[:3] for e in of(events, PaymentRequired)] == [(0, 1000, ((1, 500), (3, 500)))]
    t = Table(game(4, mode="team", dice=((3, 4),), deck=(6,)))
    events = t.do(Roll(0))
    assert sorted(transfers(events, "card")) == [(1, 0, 500, "card"), (3, 0, 500, "card")]


def test_r23_7_mortgaged_dealerships_and_utilities_still_count_for_their_owner() -> None:
    """R23.7: a mortgaged dealership still counts towards 2/3/4, a mortgaged utility
    towards x100."""
    squares = {**owned(1, 5, 12), **owned(1, 15, 28, mortgaged=True)}
    t = Table(game(2, dice=((2, 3),), squares=squares))
    events = t.do(Roll(0))  # 0 -> 5: two dealerships held
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, 500)]
    t = Table(game(2, dice=((2, 3),), squares=squares, players={0: {"position": 7}}))
    events = t.do(Roll(0))  # 7 -> 12: both utilities held, 5 x 100
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, 500)]


def test_r23_8_bankruptcy_proceeds_to_a_rent_creditor_are_not_rent_taxed() -> None:
    """R23.8: at round 200 Classic withholds 99% of rent, but what a bankrupt tenant pays
    its landlord is bankruptcy proceeds, paid whole."""
    t = Table(
        game(
            2,
            round=200,
            dice=((3, 4),),
            players={0: {"position": 32, "cash": 1000}},
            squares=owned(1, 37, 39, buildings=1),
        )
    )
    t.do(Roll(0))  # 32 -> 39: rent 2000 with 1000 and nothing to sell
    events = t.do(DeclareBankruptcy(0))
    assert transfers(events, "bankruptcy") == [(0, 1, 1000, "bankruptcy")]
    assert transfers(events, "rent_tax") == []


def test_r23_9_moving_back_over_start_pays_no_salary() -> None:
    """R23.9: card 15 from square 2 goes back over Start to 39: no salary."""
    t = Table(game(2, dice=((1, 1),), deck=(15,)))
    events = t.do(Roll(0))
    assert of(events, Moved)[-1][:4] == (0, 2, 39, False)
    assert transfers(events, "salary") == []
    assert t.waits_for() == ("buy", 0)


def test_r23_9_repairs_without_buildings_cost_nothing_and_open_no_pause() -> None:
    """R23.9: card 8 with no buildings: nothing to pay, no payment pause."""
    t = Table(game(2, dice=((3, 4),), deck=(8,)))
    events = t.do(Roll(0))
    assert of(events, PaymentRequired) == []
    assert names(events)[-2:] == ["TurnEnded", "TurnStarted"]
    assert t.cash(0) == 15000


def test_r23_10_doubles_that_end_on_go_to_jail_end_the_turn_without_an_extra_roll() -> None:
    """R23.10: doubles landing on Go to jail: to jail, the turn ends, no extra roll."""
    t = Table(game(2, dice=((2, 2),), players={0: {"position": 26}}))
    events = t.do(Roll(0))
    assert of(events, SentToJail) == [SentToJail(0, JailReason.SQUARE)]
    assert of(events, RollOffered) == []
    assert t.waits_for() == ("roll", 1)
    assert t.seat(0).in_jail and t.pos(0) == 10


def test_r23_12_a_seat_paused_by_another_seats_card_may_trade_and_offers_end_with_the_turn() -> (
    None
):
    """R23.12: card 6 puts a seat that cannot pay into its own pause; it may propose a
    trade there. Its open offer expires when the turn (seat 0's) ends."""
    t = Table(
        game(4, dice=((3, 4),), deck=(6,), players={2: {"cash": 100}}, squares=owned(2, 6, 8))
    )
    t.do(Roll(0))
    assert t.waits_for() == ("payment", 2)
    assert can_offer(t.state, 2)
    events = t.do(OfferTrade(2, 1, 0, (8,), 600, ()))
    assert [e.offer for e in of(events, OfferMade)] == ["o1"]
    t.do(Mortgage(2, 6))  # 100 + 500
    events = t.do(Pay(2))
    assert OfferClosed("o1", OfferEnd.TURN_ENDED) in events
    assert t.state.offers == ()


def test_r23_13_a_resigned_seats_cash_goes_to_the_bank() -> None:
    """R23.13: a resigning seat's cash leaves the game; its properties are released."""
    t = Table(game(3, squares=owned(1, 6)))
    events = t.do(Resign(1))
    # Its holdings are liquidated as in bankruptcy (R12), then all its cash leaves.
    assert transfers(events)[-1] == (1, BANK, 15500, "resigned")
    assert t.cash(1) == 0 and t.cash(0) == t.cash(2) == 15000
    assert t.owner(6) is None


def declined_39(cash_1: int = 15000) -> Table:
    """Three seats; seat 0 lands on 39 (4000) and declines: the auction order is 1, 2, 0."""
    t = Table(game(3, dice=((3, 4),), players={0: {"position": 32}, 1: {"cash": cash_1}}))
    t.do(Roll(0))
    t.do(Decline(0))
    return t


def test_r23_14_cash_backing_a_leading_bid_cannot_be_traded_away() -> None:
    """R23.14: seat 1 leads the auction at 4000 with 4500 in hand; accepting an offer that
    takes 1000 of it is refused while the auction runs."""
    t = Table(
        game(
            3,
            dice=((3, 4),),
            players={0: {"position": 32}, 1: {"cash": 4500}},
            squares=owned(0, 12),
        )
    )
    t.do(OfferTrade(0, 1, 0, (12,), 1000, ()))
    t.do(Roll(0))
    t.do(Decline(0))
    t.do(Bid(1))
    assert t.refuse(AcceptOffer(1, "o1")) == "trade/cash_committed"


def test_r23_15_an_auction_leader_who_goes_out_voids_the_bid_and_the_price_stands() -> None:
    """R23.15: the leader resigns: its bid is void, bidding goes on from the price
    reached (the next bid is 4100), and the property goes to the next highest bidder."""
    t = declined_39()
    t.do(Bid(1))  # 4000
    events = t.do(Resign(1))
    assert of(events, AuctionPassed)[0][:2] == (1, True)
    auction = t.pending
    assert isinstance(auction, AuctionPending)
    assert auction.leader is None and auction.minimum == 4100
    t.do(Bid(2))
    events = t.do(Pass(0))
    assert of(events, AuctionEnded) == [AuctionEnded(39, 2, 4100)]
