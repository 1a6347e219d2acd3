"""Story tests for jail (R13), the Jackpot (R14) and the event cards (R15)."""

from __future__ import annotations

from typing import Any

import pytest
from opolyx_rules.cards import CARDS
from opolyx_rules.commands import (
    DeclareBankruptcy,
    Decline,
    JackpotBet,
    JackpotDecline,
    Mortgage,
    Pay,
    PayBail,
    Roll,
)
from opolyx_rules.events import (
    BuyOffered,
    CardDrawn,
    JackpotDeclined,
    JackpotOffered,
    JackpotPlayed,
    JailRollFailed,
    LeftJail,
    Moved,
    PaymentRequired,
    RollOffered,
    SentToJail,
)
from opolyx_rules.modes import CLASSIC
from opolyx_rules.state import JailExit, JailReason, RollPending
from story import BANK, Table, game, names, of, owned, quiet_turn, transfers

# --- R13: jail -------------------------------------------------------------------------------


def jailed(jail_rolls: int = 0, dice: tuple[tuple[int, int], ...] = ((1, 2),), **kw: Any) -> Table:
    players = {0: {"position": 10, "in_jail": True, "jail_rolls": jail_rolls, **kw}}
    return Table(game(2, dice=dice, players=players, squares=owned(0, 13, 14)))


def test_bail_is_paid_through_the_pause_and_then_the_player_rolls_and_moves() -> None:
    """R13: before rolling, pay 500 bail through the payment pause, then roll and move."""
    t = jailed()
    events = t.do(PayBail(0))
    assert [e[:4] for e in of(events, PaymentRequired)] == [(0, 500, ((BANK, 500),), "bail")]
    assert t.seat(0).in_jail
    events = t.do(Pay(0))
    assert transfers(events) == [(0, BANK, 500, "bail")]
    assert of(events, LeftJail) == [LeftJail(0, JailExit.BAIL)]
    assert t.waits_for() == ("roll", 0)
    events = t.do(Roll(0))
    assert of(events, Moved)[0][1:3] == (10, 13)
    assert (t.cash(0), t.seat(0).in_jail) == (14500, False)


def test_only_a_prisoner_pays_bail() -> None:
    """R13: bail is for seats in jail."""
    t = Table(game(2, players={0: {"position": 10}}))
    assert t.refuse(PayBail(0)) == "jail/not_in_jail"


def test_doubles_free_the_prisoner_who_moves_by_that_roll_without_an_extra_roll() -> None:
    """R13: doubles free you and you move by that roll, without an extra roll."""
    t = jailed(dice=((2, 2),))
    events = t.do(Roll(0))
    assert of(events, LeftJail) == [LeftJail(0, JailExit.DOUBLES)]
    assert (t.pos(0), t.seat(0).in_jail) == (14, False)
    assert of(events, RollOffered) == []
    assert t.waits_for() == ("roll", 1)


def test_a_failed_roll_keeps_the_prisoner_in_jail_and_ends_the_turn_for_free() -> None:
    """R13: no doubles: stay in jail; nothing is paid for sitting in jail."""
    t = jailed()
    events = t.do(Roll(0))
    assert of(events, JailRollFailed) == [JailRollFailed(0, 1)]
    assert of(events, Moved) == []
    assert transfers(events) == []
    assert (t.pos(0), t.seat(0).in_jail, t.seat(0).jail_rolls) == (10, True, 1)
    assert t.waits_for() == ("roll", 1)


def test_after_the_third_failed_roll_bail_is_paid_through_the_pause_then_the_player_moves() -> None:
    """R13, R23.3: after the third failed roll you must pay the 500 bail through the payment
    pause, and then move by that third roll."""
    t = jailed(jail_rolls=2, dice=((1, 3),))
    events = t.do(Roll(0))
    assert of(events, JailRollFailed) == [JailRollFailed(0, 3)]
    assert [e[:4] for e in of(events, PaymentRequired)] == [(0, 500, ((BANK, 500),), "bail")]
    assert t.pos(0) == 10
    events = t.do(Pay(0))
    assert of(events, LeftJail) == [LeftJail(0, JailExit.BAIL)]
    assert of(events, Moved)[0][1:3] == (10, 14)
    assert (t.cash(0), t.seat(0).in_jail, t.waits_for()) == (14500, False, ("roll", 1))


def test_the_third_failure_bail_is_raised_and_paid_when_the_pause_runs_out() -> None:
    """R13/R11: the bail pause times out: funds are raised, bail paid, and the move made."""
    t = jailed(jail_rolls=2, dice=((1, 3),), cash=100)
    t.do(Roll(0))
    events = t.timeout()
    assert transfers(events) == [(BANK, 0, 700, "mortgage"), (0, BANK, 500, "bail")]
    assert (t.pos(0), t.cash(0), t.seat(0).in_jail) == (14, 300, False)


# --- R14: Jackpot ----------------------------------------------------------------------------


def at_jackpot(cash: int = 15000, die: int = 5) -> tuple[Table, list[Any]]:
    t = Table(game(2, dice=((3, 4),), jackpot=(die,), players={0: {"position": 13, "cash": cash}}))
    return t, t.do(Roll(0))


@pytest.mark.parametrize(("numbers", "payout"), [((5,), 6000), ((2, 5), 3000), ((1, 2, 5), 2000)])
def test_a_jackpot_hit_pays_6000_3000_or_2000_for_a_1000_stake(
    numbers: tuple[int, ...], payout: int
) -> None:
    """R14: stake 1000; a hit pays 6000 (one number), 3000 (two) or 2000 (three)."""
    t, _ = at_jackpot(die=5)
    events = t.do(JackpotBet(0, numbers))
    assert of(events, JackpotPlayed) == [JackpotPlayed(0, numbers, 5, True)]
    assert transfers(events) == [(0, BANK, 1000, "jackpot_stake"), (BANK, 0, payout, "jackpot_win")]
    assert t.cash(0) == 15000 - 1000 + payout
    assert t.waits_for() == ("roll", 1)


@pytest.mark.parametrize("numbers", [(1,), (1, 2), (1, 2, 3)])
def test_a_jackpot_miss_loses_the_stake(numbers: tuple[int, ...]) -> None:
    """R14: the stake is lost on a miss."""
    t, _ = at_jackpot(die=6)
    events = t.do(JackpotBet(0, numbers))
    assert of(events, JackpotPlayed) == [JackpotPlayed(0, numbers, 6, False)]
    assert t.cash(0) == 14000


def test_every_jackpot_size_is_exactly_fair() -> None:
    """R14: expected payout = stake for one, two and three numbers."""
    for size, payout in enumerate(CLASSIC.jackpot_payouts, start=1):
        assert payout * size == 6 * CLASSIC.jackpot_stake


def test_declining_the_jackpot_costs_nothing() -> None:
    """R14: declining costs nothing."""
    t, _ = at_jackpot()
    events = t.do(JackpotDecline(0))
    assert of(events, JackpotDeclined) == [JackpotDeclined(0, False)]
    assert transfers(events) == []
    assert t.cash(0) == 15000


@pytest.mark.parametrize(("cash", "offered"), [(999, False), (1000, True)])
def test_a_seat_with_less_than_the_stake_cannot_bet(cash: int, offered: bool) -> None:
    """R14: a seat with less cash than the stake cannot bet."""
    t, events = at_jackpot(cash=cash)
    assert bool(of(events, JackpotOffered)) is offered
    assert t.waits_for() == (("jackpot", 0) if offered else ("roll", 1))


@pytest.mark.parametrize("numbers", [(), (1, 1), (1, 2, 3, 4), (0,), (7,)])
def test_the_jackpot_takes_one_two_or_three_distinct_numbers_from_1_to_6(
    numbers: tuple[int, ...],
) -> None:
    """R14: choose one, two or three distinct numbers from 1-6."""
    t, _ = at_jackpot()
    assert t.refuse(JackpotBet(0, numbers)) == "jackpot/bad_numbers"


# --- R15: event cards ------------------------------------------------------------------------


def draw(
    card: int, start: int = 0, dice: tuple[int, int] = (3, 4), **kw: Any
) -> tuple[Table, list[Any]]:
    """Seat 0 of four rolls ``dice`` from ``start`` onto an event square and draws ``card``."""
    players = kw.pop("players", {})
    players.setdefault(0, {})["position"] = start
    t = Table(game(4, dice=(dice,), deck=(card,), players=players, **kw))
    events = t.do(Roll(0))
    assert of(events, CardDrawn)[0][:2] == (0, card)
    return t, events


@pytest.mark.parametrize(("card", "amount"), [(1, 1000), (2, 2000)])
def test_cards_1_and_2_collect_from_the_bank(card: int, amount: int) -> None:
    """R15: 1 collect 1000, 2 collect 2000 from the bank."""
    t, events = draw(card)
    assert transfers(events) == [(BANK, 0, amount, "card")]
    assert t.cash(0) == 15000 + amount


@pytest.mark.parametrize(("card", "amount"), [(3, 500), (4, 1500), (5, 2500)])
def test_cards_3_to_5_pay_the_bank_through_the_pause(card: int, amount: int) -> None:
    """R15/R11: 3 pay 500, 4 pay 1500, 5 pay 2500 to the bank, through the pause."""
    t, events = draw(card)
    assert [e[:4] for e in of(events, PaymentRequired)] == [(0, amount, ((BANK, amount),), "card")]
    t.do(Pay(0))
    assert t.cash(0) == 15000 - amount


def test_card_6_collects_500_from_each_opponent() -> None:
    """R15: collect 500 from each opponent."""
    t, events = draw(6)
    assert sorted(transfers(events)) == [
        (1, 0, 500, "card"),
        (2, 0, 500, "card"),
        (3, 0, 500, "card"),
    ]
    assert [t.cash(s) for s in range(4)] == [16500, 14500, 14500, 14500]


def test_an_opponent_who_cannot_pay_card_6_gets_a_pause_of_their_own() -> None:
    """R15, R23.4: an opponent who has the cash pays at once; collecting from one who
    cannot puts that opponent into a pause of their own, resolved before play continues."""
    t, events = draw(6, players={2: {"cash": 100}}, squares=owned(2, 6))
    assert sorted(transfers(events)) == [(1, 0, 500, "card"), (3, 0, 500, "card")]
    assert [e[:4] for e in of(events, PaymentRequired)] == [(2, 500, ((0, 500),), "card")]
    assert t.waits_for() == ("payment", 2)
    assert t.refuse(Roll(1)) == "turn/not_your_turn"
    t.do(Mortgage(2, 6))
    events = t.do(Pay(2))
    assert transfers(events) == [(2, 0, 500, "card")]
    assert names(events)[-2:] == ["TurnEnded", "TurnStarted"]
    assert [t.cash(s) for s in range(4)] == [16500, 14500, 100, 14500]
    assert t.waits_for() == ("roll", 1)


def test_card_7_pays_500_to_each_opponent_in_one_pause() -> None:
    """R15/R11: pay 500 to each opponent: one pause for 1500."""
    _, events = draw(7)
    assert [e[:4] for e in of(events, PaymentRequired)] == [
        (0, 1500, ((1, 500), (2, 500), (3, 500)), "card")
    ]


def test_card_7_payments_are_not_taxed_like_rent() -> None:
    """R6: only rent is taxed: event payments between seats are not, even at round 200."""
    t, _ = draw(7, round=200)
    t.do(Pay(0))
    assert [t.cash(s) for s in range(4)] == [13500, 15500, 15500, 15500]


def test_card_8_charges_250_per_building_and_1000_per_street_with_five() -> None:
    """R15: repairs: 250 per building, 1000 per street with 5 buildings instead of its 5."""
    squares = {
        **owned(0, 37, buildings=4),
        **owned(0, 39, buildings=5),
        **owned(0, 1, 3, buildings=1),
    }
    _, events = draw(8, squares=squares)
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, 4 * 250 + 1000 + 2 * 250)]


def test_card_8_without_buildings_costs_nothing() -> None:
    """R15: repairs on no buildings: nothing to pay."""
    t, events = draw(8, squares=owned(0, 39))
    assert of(events, PaymentRequired) == []
    assert t.waits_for() == ("roll", 1)


def test_card_9_advances_to_start_and_counts_as_landing_there() -> None:
    """R15/R4: advance to Start: salary + landing bonus, once."""
    t, events = draw(9, start=29)  # 29 -> 36 -> Start
    assert transfers(events) == [(BANK, 0, 3000, "start_landing")]
    assert (t.pos(0), t.cash(0)) == (0, 18000)


@pytest.mark.parametrize(
    ("card", "start", "target", "salary"),
    [(10, 0, 11, 0), (10, 29, 11, 2000), (11, 0, 24, 0), (11, 29, 24, 2000), (12, 0, 39, 0)],
)
def test_cards_10_to_12_advance_to_a_square_with_salary_when_passing_start(
    card: int, start: int, target: int, salary: int
) -> None:
    """R15: advance to 11 / 24 (salary if you pass Start) / 39; the square is resolved."""
    t, events = draw(card, start=start)
    assert (t.pos(0), t.cash(0) - 15000) == (target, salary)
    assert of(events, BuyOffered) == [BuyOffered(0, target, 75.0)]


@pytest.mark.parametrize(
    ("start", "dice", "target", "salary"),
    [(0, (3, 4), 15, 0), (16, (2, 4), 25, 0), (29, (3, 4), 5, 2000)],
)
def test_card_13_advances_to_the_nearest_dealership_ahead(
    start: int, dice: tuple[int, int], target: int, salary: int
) -> None:
    """R15: nearest dealership ahead (salary if you pass Start); rent as usual."""
    t, events = draw(13, start=start, dice=dice, squares=owned(1, 5, 15, 25))
    assert t.pos(0) == target
    assert transfers(events) == ([(BANK, 0, salary, "salary")] if salary else [])
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, 1000)]


@pytest.mark.parametrize(
    ("start", "dice", "target", "held", "rent"),
    [(0, (3, 4), 12, 1, 280), (16, (2, 4), 28, 2, 600), (29, (3, 4), 12, 2, 700)],
)
def test_card_14_advances_to_the_nearest_utility_and_rent_uses_this_rolls_total(
    start: int, dice: tuple[int, int], target: int, held: int, rent: int
) -> None:
    """R15/R6: nearest utility ahead (salary if you pass Start); rent uses this roll's
    total x 40 / x 100."""
    t, events = draw(14, start=start, dice=dice, squares=owned(1, *(12, 28)[:held]))
    assert t.pos(0) == target
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, rent)]
    assert t.cash(0) == 15000 + (2000 if target < start else 0)


def test_card_15_goes_back_three_squares_and_resolves_the_square() -> None:
    """R15: go back 3 squares: from 7 onto the income tax on 4."""
    _, events = draw(15)
    assert of(events, Moved)[-1][1:4] == (7, 4, False)
    assert [e[:2] for e in of(events, PaymentRequired)] == [(0, 2000)]


def test_card_15_from_square_2_goes_back_to_39_without_salary() -> None:
    """R15: going back never passes Start forwards: 2 -> 39, no salary."""
    t, events = draw(15, start=38, dice=(1, 3))  # 38 -> 2 passing Start
    assert transfers(events) == [(BANK, 0, 2000, "salary")]
    assert t.pos(0) == 39
    assert of(events, BuyOffered) == [BuyOffered(0, 39, 75.0)]


def test_card_16_goes_to_jail_without_salary() -> None:
    """R15/R13/R4: go to jail, straight, never paying salary; the turn ends."""
    t, events = draw(16, start=29)
    assert of(events, SentToJail) == [SentToJail(0, JailReason.CARD)]
    assert transfers(events) == []
    assert (t.pos(0), t.seat(0).in_jail, t.waits_for()) == (10, True, ("roll", 1))


def test_the_drawn_card_is_named_in_the_log() -> None:
    """R15: the drawn card is named in the action log."""
    for number, card in CARDS.items():
        _, events = draw(number)
        assert of(events, CardDrawn)[0].text == card.text


def test_sixteen_draws_give_sixteen_distinct_cards_then_the_deck_is_reshuffled() -> None:
    """R15: each draw takes a random card not yet drawn; when all 16 have been drawn the
    deck is reshuffled."""
    t = Table(game(2, seed=11))
    cards: list[CardDrawn] = []
    while len(cards) < 20:
        seat = t.state.current_seat
        t.override(seats={seat: {"position": 0, "in_jail": False, "cash": 15000}})
        t.script(dice=((3, 4),))
        cards.extend(of(t.do(Roll(seat)), CardDrawn))
        while not isinstance(t.pending, RollPending):
            if t.waits_for() == ("buy", seat):
                t.do(Decline(seat))
            else:
                t.timeout()
    numbers = [c.card for c in cards]
    assert sorted(numbers[:16]) == list(range(1, 17))
    assert [c.reshuffled for c in cards[:17]] == [False] * 16 + [True]
    assert len(set(numbers[16:20])) == 4


def test_three_turns_in_jail_end_with_bail_and_the_move() -> None:
    """R13: three failed rolls over three turns; the third failure pays bail, then moves."""
    t = Table(game(2, players={0: {"position": 10, "in_jail": True}}, squares=owned(0, 14)))
    for attempt in (1, 2):
        t.script(dice=((1, 2),))
        assert of(t.do(Roll(0)), JailRollFailed) == [JailRollFailed(0, attempt)]
        quiet_turn(t, 1)
    t.script(dice=((1, 3),))
    t.do(Roll(0))
    assert t.waits_for() == ("payment", 0)
    t.do(Pay(0))
    assert (t.pos(0), t.cash(0), t.seat(0).in_jail) == (14, 14500, False)


def test_doubles_on_the_third_attempt_free_without_bail() -> None:
    """R13: doubles free you, whichever attempt it is; no bail is due."""
    t = jailed(jail_rolls=2, dice=((2, 2),))
    events = t.do(Roll(0))
    assert of(events, LeftJail) == [LeftJail(0, JailExit.DOUBLES)]
    assert of(events, PaymentRequired) == []
    assert (t.pos(0), t.cash(0)) == (14, 15000)


def test_card_15_onto_another_event_square_draws_again() -> None:
    """R15: a move resolves the square moved to: 36 back to 33 draws the next card."""
    t = Table(game(3, dice=((3, 4),), deck=(15, 1), players={0: {"position": 29}}))
    events = t.do(Roll(0))
    assert [c.card for c in of(events, CardDrawn)] == [15, 1]
    assert (t.pos(0), t.cash(0)) == (33, 16000)


def test_card_11_onto_an_owned_street_charges_its_rent() -> None:
    """R15: a move resolves the square moved to like a normal landing (rent on 24)."""
    _, events = draw(11, squares=owned(1, 21, 23, 24))
    assert [e[:4] for e in of(events, PaymentRequired)] == [(0, 400, ((1, 400),), "rent")]


def test_opponents_who_cannot_pay_card_6_get_pauses_one_after_another() -> None:
    """R15/R11: each opponent who cannot pay has a pause of their own, resolved in turn
    (here both run out and funds are raised), before play continues."""
    players = {1: {"cash": 100}, 3: {"cash": 0}}
    t, _ = draw(6, players=players, squares={**owned(1, 6), **owned(3, 8)})
    assert t.waits_for() == ("payment", 1)
    events = t.timeout()
    assert transfers(events)[-1] == (1, 0, 500, "card")
    assert t.waits_for() == ("payment", 3)
    events = t.timeout()
    assert transfers(events)[-1] == (3, 0, 500, "card")
    assert [t.cash(s) for s in range(4)] == [16500, 100, 14500, 0]
    assert t.waits_for() == ("roll", 1)


def test_an_opponent_bankrupted_by_card_6_pays_what_it_has_to_the_drawer() -> None:
    """R15/R12: the opponent who cannot raise 500 goes bankrupt; its cash goes to the
    drawer and play continues."""
    t, _ = draw(6, players={2: {"cash": 100}})
    events = t.do(DeclareBankruptcy(2))
    assert transfers(events, "bankruptcy") == [(2, 0, 100, "bankruptcy")]
    assert t.seat(2).out
    assert [t.cash(s) for s in range(4)] == [16100, 14500, 0, 14500]
    assert t.waits_for() == ("roll", 1)
