"""The offer preview (R10) a client shows before sending, and every seat's net worth (R20):
both come from the rules, so no client computes a rule of its own."""

from __future__ import annotations

from opolyx_rules import Terms, net_worth, net_worths, preview_offer, property_values_of
from opolyx_rules.commands import OfferTrade, Roll
from story import Table, game, owned


def test_the_preview_values_both_sides_and_agrees_with_the_guard() -> None:
    t = Table(game(2, squares={**owned(0, 39), **owned(1, 37, mortgaged=True)}))
    fair = preview_offer(t.state, 0, 1, Terms(give_squares=(39,), take_cash=2000))
    assert (fair.give_value, fair.take_value, fair.fairness_pct, fair.allies) == (
        4000,
        2000,
        50,
        False,
    )
    assert fair.refusal is None and fair.share_pct == 50
    unfair = preview_offer(t.state, 0, 1, Terms(give_squares=(39,), take_cash=1999))
    assert unfair.refusal is not None and unfair.refusal.code == "trade/unfair"
    assert unfair.share_pct == 49
    assert t.refuse(OfferTrade(0, 1, give_squares=(39,), take_cash=1999)) == "trade/unfair"
    # a mortgaged property counts at half its price
    half = preview_offer(t.state, 0, 1, Terms(take_squares=(37,), give_cash=1750))
    assert half.take_value == 1750 and half.refusal is None


def test_the_preview_refuses_what_the_table_would_refuse_without_crashing() -> None:
    t = Table(game(2, squares=owned(0, 39)))
    assert preview_offer(t.state, 0, 1, Terms()).refusal.code == "trade/empty"  # type: ignore[union-attr]
    foreign = preview_offer(t.state, 0, 1, Terms(give_squares=(0, 39), take_cash=3000))
    assert foreign.refusal is not None and foreign.refusal.code == "property/unknown"
    assert foreign.give_value == 4000  # only real properties are valued
    bad_seat = preview_offer(t.state, 0, 7, Terms(give_cash=100))
    assert bad_seat.refusal is not None and bad_seat.refusal.code == "trade/bad_receiver"
    # after rolling the proposer's window is closed: the preview says so, as the guard does
    t.do(Roll(0))
    later = preview_offer(t.state, 0, 1, Terms(give_squares=(39,), take_cash=3000))
    assert later.refusal is not None and later.refusal.code == "trade/not_now"


def test_team_mates_trade_freely() -> None:
    t = Table(game(4, mode="team", squares=owned(0, 39)))
    mate = next(s.seat for s in t.state.seats[1:] if s.team == t.state.seats[0].team)
    preview = preview_offer(t.state, 0, mate, Terms(give_squares=(39,), take_cash=1))
    assert preview.allies and preview.refusal is None


def test_net_worths_are_every_seats_net_worth_in_seat_order() -> None:
    state = game(3, squares={**owned(0, 37, 39, buildings=2), **owned(2, 1, mortgaged=True)})
    assert net_worths(state) == tuple(net_worth(state, seat) for seat in range(3))
    assert net_worths(state)[0] == state.seats[0].cash + 3500 + 4000 + 4 * 2000
    assert net_worths(state)[1] == state.seats[1].cash
    assert net_worths(state)[2] == state.seats[2].cash + 300


def test_property_values_are_the_net_worths_beyond_cash_for_every_possible_seat() -> None:
    state = game(3, squares={**owned(0, 37, 39, buildings=2), **owned(2, 1, mortgaged=True)})
    values = property_values_of(state.props)
    assert values == (3500 + 4000 + 4 * 2000, 0, 300, 0, 0, 0)
    assert net_worths(state, property_values=values) == net_worths(state)
