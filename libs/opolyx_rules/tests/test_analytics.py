"""Post-game analytics (issue 16): one pure pass over a recorded game's events, checked
against the events themselves and the states the rules rebuild from them."""

from __future__ import annotations

from typing import Any

import pytest
from opolyx_rules import Event, event_from_json, net_worth, replay
from opolyx_rules.analytics import game_analytics
from opolyx_rules.assets import trade_side_value
from opolyx_rules.events import JailRollFailed, LeftJail, SentToJail, TurnEnded, TurnStarted
from opolyx_rules.state import JailExit, JailReason, with_fields
from opolyx_testing.recorded_games import RecordedGame, record_game


@pytest.fixture(scope="module")
def trading_game() -> RecordedGame:
    return record_game("classic", 4, 5, trading=True)


@pytest.fixture(scope="module")
def analytics(trading_game: RecordedGame) -> dict[str, Any]:
    events = [event_from_json(e) for e in trading_game.events]
    return game_analytics(trading_game.initial, events)


def _of(game: RecordedGame, kind: str) -> list[dict[str, Any]]:
    return [e for e in game.events if e["type"] == kind]


def test_every_move_lands_once_on_the_heatmap(
    trading_game: RecordedGame, analytics: dict[str, Any]
) -> None:
    moves = _of(trading_game, "moved") + _of(trading_game, "teleported")
    assert sum(analytics["landings"]) == len(moves)
    assert [sum(col) for col in zip(*analytics["landings_by_seat"], strict=True)] == analytics[
        "landings"
    ]
    jail_visits = sum(1 for e in _of(trading_game, "moved") if e["to"] == 30)
    assert analytics["landings"][30] == jail_visits


def test_net_worth_runs_from_the_start_to_the_final_state(
    trading_game: RecordedGame, analytics: dict[str, Any]
) -> None:
    final = trading_game.final
    assert analytics["rounds"][0] == 0 and analytics["rounds"][-1] == final.round
    assert len(analytics["rounds"]) == final.round + 1
    for seat, series in enumerate(analytics["net_worth"]):
        assert series[0] == net_worth(trading_game.initial, seat)
        assert series[-1] == net_worth(final, seat)
        assert len(series) == len(analytics["rounds"])


def test_the_trade_ledger_lists_every_accepted_offer_with_both_values(
    trading_game: RecordedGame, analytics: dict[str, Any]
) -> None:
    accepted = {e["offer"] for e in _of(trading_game, "offer_closed") if e["how"] == "accepted"}
    assert len(accepted) > 50
    trades = analytics["trades"]
    assert {t["offer"] for t in trades} == accepted
    made = {e["offer"]: e for e in _of(trading_game, "offer_made")}
    for trade in trades:
        offer = made[trade["offer"]]
        assert (trade["frm"], trade["to"], trade["give_cash"], trade["take_cash"]) == (
            offer["frm"],
            offer["to"],
            offer["give_cash"],
            offer["take_cash"],
        )
        assert trade["give_value"] >= trade["give_cash"]
        assert trade["take_value"] >= trade["take_cash"]
    with_squares = [t for t in trades if t["give_squares"] or t["take_squares"]]
    assert with_squares, "the trading player puts properties in some deals"
    # A property is valued at its price (unmortgaged), as the rules' R10 value says.
    trade = with_squares[0]
    squares = trade["give_squares"] or trade["take_squares"]
    cash = trade["give_cash"] if trade["give_squares"] else trade["take_cash"]
    value = trade["give_value"] if trade["give_squares"] else trade["take_value"]
    unmortgaged = with_fields(trading_game.initial)
    assert value == trade_side_value(unmortgaged, cash, tuple(squares))


def test_rent_paid_equals_rent_received_and_the_squares_collected_it(
    trading_game: RecordedGame, analytics: dict[str, Any]
) -> None:
    rents = [e for e in _of(trading_game, "transfer") if e["reason"] == "rent"]
    total = sum(e["amount"] for e in rents)
    rent = analytics["rent"]
    assert total > 0
    assert sum(rent["paid"]) == total == sum(rent["received"])
    assert sum(rent["by_square"].values()) == total
    assert sum(rent["payments"]) == len(rents)
    for seat in range(4):
        assert rent["paid"][seat] == sum(e["amount"] for e in rents if e["frm"] == seat)
    # Rent is only ever collected on properties.
    from opolyx_rules import PROPERTY_SLOT

    assert all(int(square) in PROPERTY_SLOT for square in rent["by_square"])
    largest = analytics["highlights"]["largest_rent"]
    assert largest["amount"] == max(e["amount"] for e in rents)


def test_auctions_won_are_listed_with_their_prices() -> None:
    game = record_game("classic", 4, 1)
    ended = [e for e in game.events if e["type"] == "auction_ended" and e["winner"] is not None]
    result = game_analytics(game.initial, [event_from_json(e) for e in game.events])
    assert ended, "seed 1 has auctions"
    assert [(a["square"], a["winner"], a["price"]) for a in result["auctions"]] == [
        (e["square"], e["winner"], e["price"]) for e in ended
    ]


def test_the_longest_jail_stay_counts_the_seats_own_turns() -> None:
    game = record_game("classic", 2, 2)
    start = game.initial
    seat, other = start.current_seat, 1 - start.current_seat
    events: list[Event] = [
        SentToJail(seat, JailReason.SQUARE),
        TurnEnded(seat),
        TurnStarted(other, 1, 100.0),
        TurnEnded(other),
        TurnStarted(seat, 2, 200.0),
        JailRollFailed(seat, 1),
        TurnEnded(seat),
        TurnStarted(other, 2, 300.0),
        TurnEnded(other),
        TurnStarted(seat, 3, 400.0),
        LeftJail(seat, JailExit.DOUBLES),
    ]
    result = game_analytics(start, events)
    assert result["highlights"]["longest_jail"] == {"seat": seat, "turns": 2, "round": 3}
    assert result["highlights"]["luckiest_jackpot"] is None
    assert replay(start, events).seats[seat].in_jail is False


def test_a_jackpot_win_is_the_luckiest() -> None:
    from opolyx_rules.events import Transfer

    game = record_game("classic", 2, 2)
    events = [Transfer(-1, 1, 3000, "jackpot_win"), Transfer(-1, 0, 9000, "jackpot_win")]
    result = game_analytics(game.initial, events)
    assert result["highlights"]["luckiest_jackpot"] == {"seat": 0, "amount": 9000, "round": 1}
