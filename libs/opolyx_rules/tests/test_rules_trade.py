"""Story tests for trades (R10) and the offer timer (R2)."""

from __future__ import annotations

import pytest
from opolyx_rules import can_offer
from opolyx_rules.commands import (
    AcceptOffer,
    Build,
    CancelOffer,
    OfferTrade,
    Pay,
    RejectOffer,
    Resign,
    Roll,
)
from opolyx_rules.events import OfferClosed, OfferMade, PropertyTransferred
from opolyx_rules.state import OfferEnd
from story import Table, game, of, owned, transfers


def test_a_trade_may_combine_cash_and_properties_on_both_sides() -> None:
    """R10: each side may combine cash and properties; on acceptance both change hands."""
    t = Table(game(3, squares={**owned(0, 6), **owned(1, 8)}))
    events = t.do(
        OfferTrade(0, 1, give_cash=1000, give_squares=(6,), take_cash=500, take_squares=(8,))
    )
    assert of(events, OfferMade) == [OfferMade("o1", 0, 1, 1000, (6,), 500, (8,), 30.0)]
    events = t.do(AcceptOffer(1, "o1"), at=5.0)
    assert sorted(transfers(events)) == [(0, 1, 1000, "trade"), (1, 0, 500, "trade")]
    assert of(events, PropertyTransferred) == [
        PropertyTransferred(0, 1, 6),
        PropertyTransferred(1, 0, 8),
    ]
    assert of(events, OfferClosed) == [OfferClosed("o1", OfferEnd.ACCEPTED)]
    assert (t.owner(6), t.owner(8), t.cash(0), t.cash(1)) == (1, 0, 14500, 15500)
    assert t.state.offers == ()


def test_a_street_of_a_group_with_buildings_cannot_be_traded() -> None:
    """R10: properties with buildings cannot be traded, nor any street of a built group."""
    t = Table(game(2, squares={**owned(0, 37, buildings=1), **owned(0, 39, buildings=1)}))
    assert t.refuse(OfferTrade(0, 1, give_squares=(39,), take_cash=4000)) == "trade/has_buildings"
    t = Table(game(2, squares={**owned(1, 37, buildings=1), **owned(1, 39)}))
    assert t.refuse(OfferTrade(0, 1, give_cash=4000, take_squares=(39,))) == "trade/has_buildings"


def test_a_mortgaged_property_changes_hands_still_mortgaged_and_without_a_fee() -> None:
    """R10: the new owner takes over the mortgage, no fee; fairness counts it at half."""
    t = Table(game(2, squares=owned(0, 39, mortgaged=True)))
    t.do(OfferTrade(0, 1, give_squares=(39,), take_cash=1000))
    events = t.do(AcceptOffer(1, "o1"))
    assert transfers(events) == [(1, 0, 1000, "trade")]
    assert (t.owner(39), t.prop(39).mortgaged) == (1, True)
    assert (t.cash(0), t.cash(1)) == (16000, 14000)


@pytest.mark.parametrize(
    ("give_cash", "take_square", "fair"),
    [
        (2000, 39, True),  # 2000 vs 4000: exactly 50%
        (1999, 39, False),  # just under 50%, the receiver's side is larger
        (8000, 39, True),  # 4000 vs 8000: exactly 50%
        (8001, 39, False),  # the proposer's side is more than twice as large
    ],
)
def test_the_smaller_side_must_be_worth_at_least_half_the_larger(
    give_cash: int, take_square: int, fair: bool
) -> None:
    """R10: fairness: the smaller side must be worth at least 50% of the larger, in
    both directions."""
    t = Table(game(2, squares=owned(1, take_square)))
    offer = OfferTrade(0, 1, give_cash=give_cash, take_squares=(take_square,))
    if fair:
        assert of(t.do(offer), OfferMade)
    else:
        assert t.refuse(offer) == "trade/unfair"


@pytest.mark.parametrize(
    ("take_cash", "fair"), [(1000, True), (999, False), (4000, True), (4001, False)]
)
def test_fairness_counts_a_mortgaged_property_at_half_price(take_cash: int, fair: bool) -> None:
    """R10: value = cash + price (unmortgaged) or half price (mortgaged): 39 mortgaged
    is worth 2000."""
    t = Table(game(2, squares=owned(0, 39, mortgaged=True)))
    offer = OfferTrade(0, 1, give_squares=(39,), take_cash=take_cash)
    if fair:
        assert of(t.do(offer), OfferMade)
    else:
        assert t.refuse(offer) == "trade/unfair"


def test_a_proposer_may_have_at_most_three_open_offers() -> None:
    """R10: at most 3 open offers at once; closing one makes room."""
    t = Table(game(4))
    for to in (1, 2, 3):
        t.do(OfferTrade(0, to, give_cash=100, take_cash=100))
    assert not can_offer(t.state, 0)
    assert t.refuse(OfferTrade(0, 1, give_cash=200, take_cash=200)) == "trade/too_many_offers"
    t.do(CancelOffer(0, "o2"))
    assert of(t.do(OfferTrade(0, 2, give_cash=200, take_cash=200)), OfferMade)[0].offer == "o4"


def test_acceptance_rechecks_that_the_proposer_still_holds_what_was_offered() -> None:
    """R10: on acceptance the engine re-checks both sides' holdings."""
    t = Table(game(3, squares=owned(0, 39)))
    t.do(OfferTrade(0, 1, give_squares=(39,), take_cash=3000))
    t.do(OfferTrade(0, 2, give_squares=(39,), take_cash=3000))
    t.do(AcceptOffer(1, "o1"))
    assert t.owner(39) == 1
    assert t.refuse(AcceptOffer(2, "o2")) == "trade/not_owned"


def test_acceptance_rechecks_the_cash_offered() -> None:
    """R10: cash the proposer spent after offering fails the re-check on acceptance."""
    t = Table(game(2, players={0: {"cash": 3500}}, squares={**owned(0, 1, 3), **owned(1, 39)}))
    t.do(OfferTrade(0, 1, give_cash=3000, take_squares=(39,)))
    t.do(Build(0, 1))
    t.do(Build(0, 3))
    assert t.cash(0) == 2500
    assert t.refuse(AcceptOffer(1, "o1")) == "trade/insufficient_cash"
    assert t.owner(39) == 1


def test_acceptance_rechecks_the_receivers_side() -> None:
    """R10: both sides are re-checked: a property the receiver no longer holds fails."""
    t = Table(game(2, squares=owned(1, 39)))
    t.do(OfferTrade(0, 1, give_cash=3000, take_squares=(39,)))
    t.do(OfferTrade(0, 1, give_cash=2500, take_squares=(39,)))
    t.do(AcceptOffer(1, "o2"))
    assert (t.owner(39), t.cash(1)) == (0, 17500)
    assert t.refuse(AcceptOffer(1, "o1")) == "trade/not_owned"


def test_offers_are_made_before_rolling_or_in_the_proposers_own_payment_pause() -> None:
    """R10: propose before rolling, and while your own turn is paused for a debt; not
    during other decisions and not on another seat's turn."""
    t = Table(game(2, dice=((1, 3), (3, 5), (2, 4)), squares=owned(1, 8)))
    assert t.refuse(OfferTrade(1, 0, give_squares=(8,), take_cash=1000)) == "trade/not_now"
    t.do(Roll(0))  # income tax: seat 0's own payment pause
    assert t.waits_for() == ("payment", 0)
    assert of(t.do(OfferTrade(0, 1, give_cash=1000, take_squares=(8,))), OfferMade)
    t.do(Pay(0))
    t.do(Roll(1))  # 0 -> 8, its own street
    t.override(seats={0: {"position": 0}})
    t.do(Roll(0))  # 0 -> 6, unowned: a buy decision is pending
    assert t.waits_for() == ("buy", 0)
    assert t.refuse(OfferTrade(0, 1, give_cash=1000, take_squares=(8,))) == "trade/not_now"


def test_an_offer_expires_after_30_seconds() -> None:
    """R10/R2: a trade offer expires after 30 s."""
    t = Table(game(2, squares=owned(1, 8)))
    t.do(OfferTrade(0, 1, give_cash=1000, take_squares=(8,)), at=10.0)
    events = t.timeout()
    assert (t.now, events) == (40.0, [OfferClosed("o1", OfferEnd.EXPIRED)])
    assert t.refuse(AcceptOffer(1, "o1")) == "trade/not_open"
    assert t.waits_for() == ("roll", 0)


def test_an_offer_expires_when_the_proposers_turn_ends() -> None:
    """R10/R2, R23.12: ... or when the proposer's turn ends, whichever comes first."""
    t = Table(game(2, dice=((4, 6),), squares=owned(1, 8)))
    t.do(OfferTrade(0, 1, give_cash=1000, take_squares=(8,)))
    events = t.do(Roll(0), at=3.0)
    assert OfferClosed("o1", OfferEnd.TURN_ENDED) in events
    assert t.state.offers == ()


def test_only_the_receiver_accepts_or_rejects() -> None:
    """R10: the receiver accepts or rejects."""
    t = Table(game(3, squares=owned(1, 8)))
    t.do(OfferTrade(0, 1, give_cash=1000, take_squares=(8,)))
    assert t.refuse(AcceptOffer(2, "o1")) == "trade/not_yours"
    assert t.refuse(AcceptOffer(0, "o1")) == "trade/not_yours"
    events = t.do(RejectOffer(1, "o1"))
    assert events == [OfferClosed("o1", OfferEnd.REJECTED)]
    assert (t.owner(8), t.cash(0)) == (1, 15000)


def test_you_cannot_trade_what_you_do_not_hold() -> None:
    """R10: each side offers only what it holds."""
    t = Table(game(2, squares=owned(1, 8)))
    assert t.refuse(OfferTrade(0, 1, give_squares=(8,), take_cash=1000)) == "trade/not_owned"
    assert (
        t.refuse(OfferTrade(0, 1, give_cash=16000, take_squares=(8,))) == "trade/insufficient_cash"
    )


def test_offers_go_to_another_seat_still_in_the_game() -> None:
    """R10: the receiver is another seat in the game; cash cannot be negative."""
    t = Table(game(3, squares=owned(1, 8)))
    assert t.refuse(OfferTrade(0, 0, give_cash=100, take_cash=100)) == "trade/bad_receiver"
    t.do(Resign(2))
    assert t.refuse(OfferTrade(0, 2, give_cash=100, take_cash=100)) == "trade/bad_receiver"
    assert t.refuse(OfferTrade(0, 1, give_cash=-100, take_squares=(8,))) == "trade/negative_cash"
    assert t.refuse(OfferTrade(0, 1)) == "trade/empty"


def test_an_offer_of_something_for_nothing_is_unfair() -> None:
    """R10: a one-way gift fails the 50% rule outside Team mode."""
    t = Table(game(2, squares=owned(0, 8)))
    assert t.refuse(OfferTrade(0, 1, give_squares=(8,))) == "trade/unfair"
    assert t.refuse(OfferTrade(0, 1, take_cash=100)) == "trade/unfair"
