"""Per-seat statistics from a game's event batches (pure)."""

from __future__ import annotations

from opolyx_progression.stats import PairTransfer, game_stats
from progression_builders import EventLog


def test_purchases_auctions_rent_and_buildings_are_counted_per_seat() -> None:
    log = (
        EventLog("t1")
        .buy(0, 1)
        .buy(0, 3)
        .auction_won(1, 6, 700)
        .rent(1, 0, 250)
        .rent(1, 0, 150)
        .build(0, 1)
        .build(0, 3)
    )
    stats = game_stats(log.batches)
    assert stats.seats[0].properties_bought == 2
    assert stats.seats[0].rent_collected == 400
    assert stats.seats[0].buildings_built == 2
    assert stats.seats[1].properties_bought == 1
    assert stats.seats[1].auctions_won == 1
    assert stats.seats[1].rent_collected == 0
    assert stats.last_seq == log.last_seq


def test_rent_tax_to_the_bank_is_not_rent_collected() -> None:
    log = (
        EventLog("t1")
        .rent(1, 0, 300)
        .add({"type": "transfer", "frm": 1, "to": -1, "amount": 100, "reason": "rent_tax"})
    )
    assert game_stats(log.batches).seats[0].rent_collected == 300


def test_a_repeated_batch_is_counted_once() -> None:
    log = EventLog("t1").buy(0, 1).rent(1, 0, 200)
    stats = game_stats([log.batches[0], log.batches[0], log.batches[1], log.batches[1]])
    assert stats.seats[0].properties_bought == 1
    assert stats.seats[0].rent_collected == 200


def test_accepted_trades_net_the_value_moved_between_a_pair() -> None:
    # Seat 0 gives square 1 (price 600) + 500 cash for 300 cash: 800 net to seat 1; then seat 1
    # gives 200 back in another offer: 600 net from seat 0 to seat 1.
    log = (
        EventLog("t1")
        .trade(0, 1, give_cash=500, give_squares=[1], take_cash=300)
        .trade(1, 0, give_cash=200)
        .trade(0, 1, give_cash=5000, accepted=False)
    )
    stats = game_stats(log.batches)
    assert stats.transfers == [PairTransfer(0, 1, "trade", 600)]
    assert stats.seats[0].trades_completed == 2
    assert stats.seats[1].trades_completed == 2


def test_bankruptcy_cash_to_a_creditor_and_resignations_are_transfers() -> None:
    log = EventLog("t1").bankrupt_to(2, 0, 900).resign(1).finish(0, [0, 1, 2], "last_standing", 25)
    stats = game_stats(log.batches, winner=0)
    assert PairTransfer(2, 0, "bankruptcy", 900) in stats.transfers
    assert PairTransfer(1, 0, "resignation", 0) in stats.transfers
    assert stats.seats[2].bankrupt and stats.seats[1].resigned
    assert stats.finish_reason == "last_standing"


def test_bankruptcy_to_the_bank_moves_nothing_between_players() -> None:
    log = EventLog("t1").add(
        {"type": "transfer", "frm": 1, "to": -1, "amount": 900, "reason": "bankruptcy"}
    )
    assert game_stats(log.batches).transfers == []
