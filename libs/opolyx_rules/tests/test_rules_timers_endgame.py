"""Story tests for timers, missed turns and automatic resignation (R16), and the end of
the game: round limit, net worth, winner and placement (R20)."""

from __future__ import annotations

from typing import Any

from opolyx_rules.assets import net_worth
from opolyx_rules.board import PROPERTY_SLOT
from opolyx_rules.commands import AcceptOffer, Build, OfferTrade, Pay, PayBail, Resign, Roll
from opolyx_rules.events import (
    AuctionEnded,
    AuctionStarted,
    DiceRolled,
    GameFinished,
    JackpotDeclined,
    PropertyDeclined,
    SeatActed,
    SeatWentOut,
    TurnSkipped,
    TurnStarted,
)
from opolyx_rules.scenario import run_scenario
from opolyx_rules.state import OutHow
from story import Table, game, names, of, owned, quiet_turn

# --- R16: timers -----------------------------------------------------------------------------


def test_a_turn_whose_timer_runs_out_before_the_roll_is_skipped() -> None:
    """R16/R2: the 75 s turn timer runs out before the roll: the turn is skipped, no move."""
    t = Table(game(3))
    assert t.deadline == 75.0
    events = t.timeout()
    assert t.now == 75.0
    assert of(events, TurnSkipped) == [TurnSkipped(0, 1)]
    assert of(events, DiceRolled) == []
    assert (t.pos(0), t.seat(0).missed_turns) == (0, 1)
    assert of(events, TurnStarted) == [TurnStarted(1, 1, 150.0)]


def test_two_missed_turns_in_a_row_resign_the_seat() -> None:
    """R16, R23.11: a turn timed out before its first roll counts as missed; two in a row
    resign the seat automatically."""
    t = Table(game(3, dice=((4, 6), (4, 6))))
    t.timeout()  # seat 0 misses
    t.do(Roll(1))
    t.do(Roll(2))
    events = t.timeout()  # seat 0 misses again
    assert of(events, TurnSkipped) == [TurnSkipped(0, 2)]
    assert of(events, SeatWentOut) == [SeatWentOut(0, OutHow.RESIGNED, None)]
    assert t.seat(0).out
    assert t.waits_for() == ("roll", 1)


def test_a_seats_action_resets_its_missed_turns() -> None:
    """R16: any action of the seat resets its missed-turn counter."""
    t = Table(game(3, dice=((4, 6),), players={0: {"missed_turns": 1}}))
    events = t.do(Roll(0))
    assert events[0] == SeatActed(0)
    assert t.seat(0).missed_turns == 0


def test_any_action_even_off_turn_resets_the_counter() -> None:
    """R16: any action (here accepting an offer on another seat's turn) resets it, so a
    later miss is the first again."""
    t = Table(game(3, players={1: {"missed_turns": 1}}, squares=owned(1, 8)))
    t.do(OfferTrade(0, 1, give_cash=1000, take_squares=(8,)))
    t.do(AcceptOffer(1, "o1"))
    assert t.seat(1).missed_turns == 0


def test_one_missed_turn_then_an_action_then_a_miss_does_not_resign() -> None:
    """R16: only two missed turns *in a row* resign."""
    t = Table(game(3))
    t.timeout()  # seat 0 misses (1)
    quiet_turn(t, 1)
    quiet_turn(t, 2)
    quiet_turn(t, 0)  # seat 0 acts: its counter is back to 0
    quiet_turn(t, 1)
    t.timeout()  # seat 2 misses
    events = t.timeout()  # seat 0 misses: the first in a row again
    assert of(events, TurnSkipped) == [TurnSkipped(0, 1)]
    assert of(events, SeatWentOut) == []
    assert not t.seat(0).out


def test_managing_does_not_restart_the_turn_clock() -> None:
    """R16: managing does not restart the clock."""
    t = Table(game(2, squares=owned(0, 1, 3)))
    t.do(Build(0, 1), at=40.0)
    t.do(Build(0, 3), at=60.0)
    assert t.deadline == 75.0
    events = t.timeout()
    assert t.now == 75.0
    assert of(events, TurnSkipped) == [TurnSkipped(0, 1)]


def test_a_pending_buy_is_declined_when_the_timer_runs_out_and_goes_to_auction() -> None:
    """R16/R7: a pending buy is declined by timeout, so it goes to auction."""
    t = Table(game(3, dice=((2, 4),)))
    t.do(Roll(0), at=5.0)
    assert t.deadline == 80.0
    events = t.timeout()
    assert of(events, PropertyDeclined) == [PropertyDeclined(0, 6, True)]
    assert of(events, AuctionStarted) == [AuctionStarted(6, 0, (1, 2, 0), 1, 1000, 90.0)]
    assert t.seat(0).missed_turns == 0


def test_a_pending_jackpot_bet_is_declined_when_the_timer_runs_out() -> None:
    """R16/R14: a pending Jackpot bet is declined; it costs nothing."""
    t = Table(game(2, dice=((3, 4),), players={0: {"position": 13}}))
    t.do(Roll(0))
    events = t.timeout()
    assert of(events, JackpotDeclined) == [JackpotDeclined(0, True)]
    assert t.cash(0) == 15000
    assert t.waits_for() == ("roll", 1)


def test_a_scenario_file_fires_every_due_deadline_in_order() -> None:
    """R16/R7 through the replay contract: a declined buy times out into an auction
    whose bidders all time out (10 s each), so the property stays unowned."""
    lines = [
        '{"setup": {"mode": "classic", "seats": 3, "seed": 7, "first_seat": 0, "dice": [[2, 4]]}}',
        '{"seat": 0, "type": "roll", "at": 1}',
        '{"type": "wait", "at": 200}',
    ]
    result = run_scenario(lines)
    kinds = names(result.events)
    assert kinds.count("AuctionPassed") == 3
    assert of(result.events, AuctionEnded) == [AuctionEnded(6, None, 0)]
    assert result.errors == []
    # buy offered at 1 s, declined at 76 s, bidders at 86/96/106 s; seat 1's turn then
    # starts at 106 s and is skipped at 181 s.
    skipped = [e for e in result.events if isinstance(e, TurnSkipped)]
    assert skipped == [TurnSkipped(1, 1)]


# --- R20: end of the game --------------------------------------------------------------------


def test_net_worth_counts_cash_prices_half_prices_and_buildings_at_cost() -> None:
    """R20: cash + price of unmortgaged + half price of mortgaged + buildings x cost."""
    state = game(
        2,
        players={0: {"cash": 1000}},
        squares={**owned(0, 37, 39, buildings=1), **owned(0, 5, mortgaged=True), **owned(0, 12)},
    )
    assert net_worth(state, 0) == 1000 + 3500 + 4000 + 2 * 2000 + 1000 + 1500
    assert net_worth(state, 1) == 15000


def finish_round(t: Table, seats: list[int]) -> list[Any]:
    events: list[Any] = []
    for seat in seats:
        events = quiet_turn(t, seat)
    return events


def test_the_game_ends_at_the_round_limit_once_the_round_completes() -> None:
    """R20/R2: Classic's limit is 500 rounds; the game ends when round 500 completes,
    not before."""
    t = Table(game(3, first=1, round=500, players={2: {"cash": 16000}}))
    events = finish_round(t, [1, 2])
    assert not t.state.finished
    events = finish_round(t, [0])
    (finished,) = of(events, GameFinished)
    assert (finished.reason, finished.round, finished.winner) == ("round_limit", 500, 2)
    assert t.state.finished and t.state.winner == 2


def test_round_499_completing_starts_round_500() -> None:
    """R20: the limit is reached only after round 500 completes."""
    t = Table(game(2, round=499))
    finish_round(t, [0, 1])
    assert (t.state.finished, t.state.round) == (False, 500)


def test_at_the_limit_the_highest_net_worth_wins_not_the_most_cash() -> None:
    """R20: at the limit the highest net worth wins."""
    t = Table(
        game(2, round=500, players={0: {"cash": 9000}, 1: {"cash": 10000}}, squares=owned(0, 39))
    )
    events = finish_round(t, [0, 1])
    assert of(events, GameFinished)[0].placement == (0, 1)


def test_at_the_limit_ties_go_to_the_lower_seat() -> None:
    """R20: ties go to the lower seat number."""
    t = Table(game(3, first=0, round=500, players={0: {"cash": 100}}))
    events = finish_round(t, [0, 1, 2])
    # seats 1 and 2 tie on 15000; seat 0 holds less
    assert of(events, GameFinished)[0].placement == (1, 2, 0)


def test_placement_puts_survivors_by_net_worth_then_out_seats_later_out_higher() -> None:
    """R20: winner first, then others by net worth; seats that went out after every
    survivor, the later to go out ranking higher."""
    t = Table(game(5, round=500, players={0: {"cash": 5000}, 2: {"cash": 9000}}))
    t.do(Resign(3))
    t.do(Resign(1))
    events = finish_round(t, [0, 2, 4])
    (finished,) = of(events, GameFinished)
    assert finished.placement == (4, 2, 0, 1, 3)
    assert finished.winner == 4
    assert t.state.placement == (4, 2, 0, 1, 3)


def test_when_all_but_one_go_out_the_survivor_wins_and_out_seats_follow() -> None:
    """R20: the game ends when only one seat is still in; placement by going out."""
    t = Table(game(4))
    t.do(Resign(2))
    t.do(Resign(0))
    events = t.do(Resign(3))
    (finished,) = of(events, GameFinished)
    assert (finished.winner, finished.placement, finished.reason) == (
        1,
        (1, 3, 0, 2),
        "last_standing",
    )


def test_paying_bail_does_not_restart_the_turn_clock() -> None:
    """R16/R4.1: paying bail is management before the roll, and managing does not
    restart the clock: bail paid at once at 60 s leaves the roll due at 75 s."""
    t = Table(game(2, players={0: {"position": 10, "in_jail": True}}))
    t.do(PayBail(0), at=60.0)
    t.do(Pay(0), at=60.0)
    assert t.waits_for() == ("roll", 0)
    assert t.deadline == 75.0


def test_an_extra_roll_left_to_time_out_ends_the_turn_without_a_missed_turn() -> None:
    """R16, R23.11: the turn was played (the seat rolled doubles); leaving the extra roll to time
    out ends it, but it is not a skipped turn and the missed-turn counter stays at 0."""
    t = Table(game(2, dice=((3, 3),), squares=owned(0, 6)))
    t.do(Roll(0), at=1.0)
    assert t.waits_for() == ("roll", 0)
    t.timeout()
    assert t.seat(0).missed_turns == 0
    assert t.waits_for() == ("roll", 1)


def test_a_mortgage_set_up_without_its_round_dates_from_the_current_round() -> None:
    """R9 setup: an override that mortgages a square without naming the round records
    the current round, so a Speed expiry clock starts there, not at round 0."""
    state = game(2, mode="speed", round=30, squares={6: {"owner": 0, "mortgaged": True}})
    assert state.props[PROPERTY_SLOT[6]].mortgaged_round == 30
