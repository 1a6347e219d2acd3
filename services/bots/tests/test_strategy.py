"""Bot decisions in hand-made situations: trades, raising funds, Jackpot, Bus, auctions."""

from __future__ import annotations

import random

from opolyx_bots.strategy import choose, evaluate_offer, propose_trade
from opolyx_bots.styles import STYLES
from opolyx_rules import (
    PROPERTY_SLOT,
    AcceptOffer,
    AuctionPending,
    Bid,
    BusPending,
    ChooseBus,
    DeclareBankruptcy,
    JackpotBet,
    JackpotPending,
    Mortgage,
    Offer,
    OfferTrade,
    Pass,
    Pay,
    PaymentPending,
    RejectOffer,
    Roll,
    RollPending,
    State,
    Then,
    legal_commands,
    new_game,
    with_fields,
)

BALANCED = STYLES["balanced"]


def game(owners: dict[int, int], seats: int = 2, cash: int = 15000) -> State:
    """A fresh classic game, seat 0 to act before rolling, with the given owners."""
    state = new_game("classic", seats, 1, first_seat=0)
    props = list(state.props)
    for square, owner in owners.items():
        props[PROPERTY_SLOT[square]] = props[PROPERTY_SLOT[square]]._replace(owner=owner)
    return with_fields(
        state,
        props=tuple(props),
        seats=tuple(s._replace(cash=cash) for s in state.seats),
        current_seat=0,
        pending=RollPending(0, 75.0),
    )


def offer(state: State, **terms: object) -> State:
    made = Offer("o1", 1, 0, deadline=30.0, **terms)  # type: ignore[arg-type]
    return with_fields(state, offers=(made,))


def test_never_gives_an_opponent_a_colour_group_for_a_utility() -> None:
    # seat 1 holds two light-blues and offers a utility plus cash for the third
    state = offer(
        game({6: 1, 8: 1, 9: 0, 28: 1}),
        give_cash=1000,
        give_squares=(28,),
        take_cash=0,
        take_squares=(9,),
    )
    assert evaluate_offer(state, state.offers[0], BALANCED) < 0
    for style in STYLES.values():
        decision = choose(state, 0, legal_commands(state, 0), style, random.Random(1))
        assert decision == RejectOffer(0, "o1"), style.name


def test_accepts_a_swap_that_completes_a_group_for_both_sides() -> None:
    # seat 0: brown 1 + orange 16, 18; seat 1: brown 3 + orange 19.
    # Seat 1 proposes 19 for 1 and 600 (fair by R10: 1200 is at least half of 2000).
    state = offer(
        game({1: 0, 16: 0, 18: 0, 3: 1, 19: 1}),
        give_cash=0,
        give_squares=(19,),
        take_cash=600,
        take_squares=(1,),
    )
    decision = choose(state, 0, legal_commands(state, 0), BALANCED, random.Random(1))
    assert decision == AcceptOffer(0, "o1")


def test_proposes_a_legal_trade_completing_a_group_for_both_sides() -> None:
    state = game({1: 0, 16: 0, 18: 0, 3: 1, 19: 1})
    proposal = propose_trade(state, 0, STYLES["trader"])
    assert isinstance(proposal, OfferTrade)
    assert proposal.give_squares == (1,) and proposal.take_squares == (19,)
    # the trader proposes it in its management window
    decision = choose(state, 0, legal_commands(state, 0), STYLES["trader"], random.Random(0))
    assert decision in (proposal, Roll(0))


def test_payment_mortgages_loose_property_before_selling_buildings() -> None:
    state = game({1: 0, 3: 0, 12: 0}, cash=100)
    props = list(state.props)
    for square in (1, 3):
        props[PROPERTY_SLOT[square]] = props[PROPERTY_SLOT[square]]._replace(buildings=2)
    state = with_fields(
        state,
        props=tuple(props),
        pending=PaymentPending(0, 75.0, 900, ((1, 900),), "rent", Then.LANDED, 0, ()),
    )
    decision = choose(state, 0, legal_commands(state, 0), BALANCED, random.Random(1))
    assert decision == Mortgage(0, 12)


def test_only_a_gambler_bets_at_the_jackpot() -> None:
    state = with_fields(game({}), pending=JackpotPending(0, 75.0))
    legal = legal_commands(state, 0)
    rng = random.Random(3)
    gambler = [choose(state, 0, legal, STYLES["gambler"], rng) for _ in range(60)]
    cautious = [choose(state, 0, legal, STYLES["cautious"], rng) for _ in range(60)]
    assert any(isinstance(c, JackpotBet) for c in gambler)
    assert not any(isinstance(c, JackpotBet) for c in cautious)


def test_bus_avoids_go_to_jail() -> None:
    state = game({})
    state = with_fields(
        state,
        seats=tuple(s._replace(position=23) if s.seat == 0 else s for s in state.seats),
        dice=(3, 4),  # the sum would land on Go to jail (30)
        pending=BusPending(0, 75.0),
    )
    decision = choose(state, 0, legal_commands(state, 0), BALANCED, random.Random(1))
    assert isinstance(decision, ChooseBus) and decision.move != "sum"


def test_auction_shark_pays_more_than_cautious_for_a_group_it_completes() -> None:
    price = 4000
    state = with_fields(
        game({37: 0}),
        pending=AuctionPending(0, 10.0, 39, 1, (0, 1), price + 1500, 1, price + 1600, frozenset()),
    )
    legal = legal_commands(state, 0)
    assert choose(state, 0, legal, STYLES["shark"], random.Random(1)) == Bid(0)
    assert choose(state, 0, legal, STYLES["cautious"], random.Random(1)) in (Bid(0), Pass(0))
    expensive = AuctionPending(0, 10.0, 39, 1, (0, 1), 12000, 1, 12100, frozenset())
    state = with_fields(state, pending=expensive)
    assert choose(state, 0, legal_commands(state, 0), STYLES["cautious"], random.Random(1)) == (
        Pass(0)
    )


def test_a_seat_with_nothing_to_decide_does_nothing_rather_than_resign() -> None:
    state = game({})
    # seat 1 is not awaited: only resigning would be legal for it
    assert choose(state, 1, legal_commands(state, 1), BALANCED, random.Random(1)) is None


def test_team_bot_hands_an_ally_the_piece_that_completes_their_group() -> None:
    state = new_game("team", 4, 1, first_seat=0)
    props = list(state.props)
    ally = next(s.seat for s in state.seats if s.seat != 0 and s.team == state.seats[0].team)
    for square, owner in {37: ally, 39: 0}.items():
        props[PROPERTY_SLOT[square]] = props[PROPERTY_SLOT[square]]._replace(owner=owner)
    state = with_fields(state, props=tuple(props), current_seat=0, pending=RollPending(0, 75.0))
    assert propose_trade(state, 0, BALANCED) == OfferTrade(0, ally, 0, (39,), 0, ())
    # and the ally takes it
    state = with_fields(state, offers=(Offer("g1", 0, ally, 0, (39,), 0, (), 30.0),))
    assert choose(state, ally, legal_commands(state, ally), BALANCED, random.Random(1)) == (
        AcceptOffer(ally, "g1")
    )


def test_payment_pays_when_it_can_and_declares_bankruptcy_only_when_nothing_covers_it() -> None:
    rich = game({12: 0}, cash=5000)
    rich = with_fields(
        rich, pending=PaymentPending(0, 75.0, 900, ((1, 900),), "rent", Then.LANDED, 0, ())
    )
    assert choose(rich, 0, legal_commands(rich, 0), BALANCED, random.Random(1)) == Pay(0)
    broke = game({12: 0}, cash=100)  # the utility mortgages for 750: not enough for 9000
    broke = with_fields(
        broke, pending=PaymentPending(0, 75.0, 9000, ((1, 9000),), "rent", Then.LANDED, 0, ())
    )
    assert choose(broke, 0, legal_commands(broke, 0), BALANCED, random.Random(1)) == (
        DeclareBankruptcy(0)
    )
