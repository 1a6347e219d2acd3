"""Story tests for the board (R1), setup and rounds (R3), the turn (R4) and the squares (R5).

Each test is a short given/when/then story in Classic mode; its docstring cites the rule.
"""

from __future__ import annotations

import pytest
from opolyx_rules import RULES_VERSION, RulesError, new_game
from opolyx_rules.board import (
    GROUP_SQUARES,
    PROPERTY_SQUARES,
    SQUARES,
    STREET_GROUPS,
    SquareKind,
)
from opolyx_rules.commands import (
    Build,
    Buy,
    Decline,
    JackpotDecline,
    Mortgage,
    OfferTrade,
    Pass,
    Pay,
    Resign,
    Roll,
)
from opolyx_rules.events import (
    AuctionStarted,
    BuyOffered,
    CardDrawn,
    DiceRolled,
    JackpotOffered,
    Moved,
    PaymentRequired,
    PropertyBought,
    RollOffered,
    SentToJail,
    TurnEnded,
    TurnStarted,
)
from opolyx_rules.state import JailReason, RollPending
from story import BANK, Table, cmd, game, legal, names, of, owned, quiet_turn, transfers

# The R1 table, copied from RULES.md: square, kind, group, price, rents 0..5, building cost.
R1_TABLE = """
1 street brown 600 20 100 300 900 1600 2500 500
3 street brown 600 40 200 600 1800 3200 4500 500
5 dealership dealer 2000
6 street light-blue 1000 60 300 900 2700 4000 5500 500
8 street light-blue 1000 60 300 900 2700 4000 5500 500
9 street light-blue 1200 80 400 1000 3000 4500 6000 500
11 street pink 1400 100 500 1500 4500 6250 7500 1000
12 utility utility 1500
13 street pink 1400 100 500 1500 4500 6250 7500 1000
14 street pink 1600 120 600 1800 5000 7000 9000 1000
15 dealership dealer 2000
16 street orange 1800 140 700 2000 5500 7500 9500 1000
18 street orange 1800 140 700 2000 5500 7500 9500 1000
19 street orange 2000 160 800 2200 6000 8000 10000 1000
21 street red 2200 180 900 2500 7000 8750 10500 1500
23 street red 2200 180 900 2500 7000 8750 10500 1500
24 street red 2400 200 1000 3000 7500 9250 11000 1500
25 dealership dealer 2000
26 street yellow 2600 220 1100 3300 8000 9750 11500 1500
27 street yellow 2600 220 1100 3300 8000 9750 11500 1500
28 utility utility 1500
29 street yellow 2800 240 1200 3600 8500 10250 12000 1500
31 street green 3000 260 1300 3900 9000 11000 12750 2000
32 street green 3000 260 1300 3900 9000 11000 12750 2000
34 street green 3200 280 1500 4500 10000 12000 14000 2000
35 dealership dealer 2000
37 street dark-blue 3500 350 1750 5000 11000 13000 15000 2000
39 street dark-blue 4000 500 2000 6000 14000 17000 20000 2000
"""
R1_ROWS = [line.split() for line in R1_TABLE.strip().splitlines()]


# --- R1: the board ---------------------------------------------------------------------------


def test_board_has_forty_squares_and_28_properties_in_10_groups() -> None:
    """R1: 40 squares; 28 properties: 22 streets in 8 colour groups, 4 dealerships,
    2 utilities."""
    assert len(SQUARES) == 40
    assert [sq.index for sq in SQUARES] == list(range(40))
    kinds = [SQUARES[sq].kind for sq in PROPERTY_SQUARES]
    assert len(PROPERTY_SQUARES) == 28
    assert kinds.count(SquareKind.STREET) == 22
    assert kinds.count(SquareKind.DEALERSHIP) == 4
    assert kinds.count(SquareKind.UTILITY) == 2
    assert len(STREET_GROUPS) == 8
    assert len(GROUP_SQUARES) == 10
    assert GROUP_SQUARES["dealer"] == (5, 15, 25, 35)
    assert GROUP_SQUARES["utility"] == (12, 28)


@pytest.mark.parametrize("row", R1_ROWS, ids=lambda row: f"sq{row[0]}")
def test_every_property_has_the_position_group_price_and_rents_of_the_table(
    row: list[str],
) -> None:
    """R1: positions, groups, prices, rent rows and building costs are the rules."""
    sq = SQUARES[int(row[0])]
    assert sq.kind.value == row[1]
    assert sq.group == row[2]
    assert sq.price == int(row[3])
    if sq.kind is SquareKind.STREET:
        assert sq.rents == tuple(int(v) for v in row[4:10])
        assert sq.building_cost == int(row[10])


def test_property_squares_are_exactly_those_of_the_table() -> None:
    """R1: no square is a property unless the table says so."""
    assert tuple(int(row[0]) for row in R1_ROWS) == PROPERTY_SQUARES


@pytest.mark.parametrize("square", PROPERTY_SQUARES)
def test_mortgage_value_is_half_the_price(square: int) -> None:
    """R1: mortgage value = price / 2."""
    assert SQUARES[square].mortgage_value * 2 == SQUARES[square].price


def test_corners_taxes_and_event_squares_sit_where_the_table_puts_them() -> None:
    """R1: Start 0, Jail 10, Jackpot 20, Go to jail 30; taxes 4 (2000) and 38 (1000);
    events on 2, 7, 17, 22, 33, 36."""
    assert SQUARES[0].kind is SquareKind.START
    assert SQUARES[10].kind is SquareKind.JAIL
    assert SQUARES[20].kind is SquareKind.JACKPOT
    assert SQUARES[30].kind is SquareKind.GO_TO_JAIL
    assert (SQUARES[4].kind, SQUARES[4].tax) == (SquareKind.TAX, 2000)
    assert (SQUARES[38].kind, SQUARES[38].tax) == (SquareKind.TAX, 1000)
    events = [sq.index for sq in SQUARES if sq.kind is SquareKind.EVENT]
    assert events == [2, 7, 17, 22, 33, 36]


# --- R3: setup, first seat, rounds -----------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_every_seat_starts_on_start_with_15000(seats: int) -> None:
    """R3/R2: each seat starts on square 0 with the starting cash, in round 1."""
    state = new_game("classic", seats, seed=3)
    assert [(s.position, s.cash, s.in_jail, s.out) for s in state.seats] == [
        (0, 15000, False, False)
    ] * seats
    assert state.round == 1
    assert state.rules_version == RULES_VERSION
    assert RULES_VERSION.split(".")[0] == "1"


@pytest.mark.parametrize("seats", [1, 7])
def test_classic_is_played_by_two_to_six_seats(seats: int) -> None:
    """R2/R3: 2-6 seats."""
    with pytest.raises(RulesError) as error:
        new_game("classic", seats, seed=1)
    assert error.value.code == "setup/seats"


def test_first_seat_is_drawn_at_random_from_the_seed() -> None:
    """R3, R23.1: the first player is drawn at random (not always the creator, seat 0); the
    draw is reproducible from the seed, and that seat rolls first."""
    firsts = [new_game("classic", 4, seed=seed).first_seat for seed in range(60)]
    assert set(firsts) == {0, 1, 2, 3}
    again = [new_game("classic", 4, seed=seed).first_seat for seed in range(60)]
    assert firsts == again
    state = new_game("classic", 4, seed=5)
    assert state.current_seat == state.first_seat
    assert isinstance(state.pending, RollPending)
    assert state.pending.seat == state.first_seat


def test_round_completes_when_every_seat_has_played_from_the_first_seat() -> None:
    """R3: play goes in seat order from the drawn first seat; a round completes when
    every active seat has played; rounds start at 1."""
    t = Table(game(3, first=1, dice=((4, 6),) * 4))
    seen = []
    for seat in (1, 2, 0):
        assert t.state.round == 1
        seen.append(t.state.current_seat)
        t.do(Roll(seat))
    assert seen == [1, 2, 0]
    assert t.state.round == 2
    assert t.state.current_seat == 1
    assert of(t.log, TurnStarted)[-1] == TurnStarted(1, 2, 75.0)


def test_turn_order_and_round_counting_skip_seats_that_are_out() -> None:
    """R3: play skips seats that are out; a round completes when every *active* seat
    has played."""
    t = Table(game(4, first=0, dice=((4, 6),) * 4))
    t.do(Resign(2))
    t.do(Roll(0))
    assert t.state.current_seat == 1
    t.do(Roll(1))
    assert t.state.current_seat == 3
    t.do(Roll(3))
    assert (t.state.current_seat, t.state.round) == (0, 2)


# --- R4: the turn ----------------------------------------------------------------------------


def test_management_is_possible_before_the_roll_and_not_after_it() -> None:
    """R4.1: build before rolling; nothing of this is possible after the roll."""
    t = Table(game(2, dice=((2, 4),), squares=owned(0, 1, 3)))
    t.do(Build(0, 1))
    assert t.prop(1).buildings == 1
    t.do(Roll(0))  # lands on 6, unowned: a buy decision is pending
    assert t.waits_for() == ("buy", 0)
    assert t.refuse(Build(0, 3)) == "manage/not_now"
    assert cmd(Build(0, 3)) not in legal(t.state, 0)


def test_no_management_on_another_seats_turn() -> None:
    """R4.1: managing happens in your own turn before the roll."""
    t = Table(game(2, first=1, squares=owned(0, 1, 3)))
    assert t.refuse(Build(0, 1)) == "manage/not_now"


def test_doubles_give_another_roll_with_a_new_management_window() -> None:
    """R4.3: after resolving doubles the player rolls again, and may manage first."""
    t = Table(game(2, dice=((5, 5), (4, 6)), squares=owned(0, 1, 3)))
    events = t.do(Roll(0))
    assert of(events, Moved)[0].to == 10
    assert of(events, RollOffered) == [RollOffered(0, 75.0)]
    assert TurnEnded not in map(type, events)
    assert t.waits_for() == ("roll", 0)
    t.do(Build(0, 1))
    assert t.prop(1).buildings == 1
    t.do(Roll(0))
    assert (t.pos(0), t.waits_for()) == (20, ("jackpot", 0))


def test_third_doubles_send_the_player_to_jail_without_moving() -> None:
    """R4.3/R13: the third doubles in one turn send the player straight to jail without
    moving; the turn ends."""
    t = Table(game(2, dice=((3, 3), (2, 2), (1, 1)), squares=owned(0, 6)))
    t.do(Roll(0))  # 0 -> 6, own street
    t.do(Roll(0))  # 6 -> 10, just visiting
    cash = t.cash(0)
    events = t.do(Roll(0))
    assert of(events, Moved) == []
    assert of(events, SentToJail) == [SentToJail(0, JailReason.THREE_DOUBLES)]
    assert (t.pos(0), t.seat(0).in_jail, t.cash(0)) == (10, True, cash)
    assert names(events)[-2:] == ["TurnEnded", "TurnStarted"]
    assert t.waits_for() == ("roll", 1)


def test_the_turn_ends_by_itself_once_the_last_roll_is_resolved() -> None:
    """R4.4: there is no end-turn action; the next seat's turn starts by itself."""
    t = Table(game(3, dice=((4, 6),)))
    events = t.do(Roll(0))
    assert names(events) == ["DiceRolled", "Moved", "TurnEnded", "TurnStarted"]
    assert t.waits_for() == ("roll", 1)


def test_passing_start_pays_the_salary() -> None:
    """R4: passing Start pays the salary (2000)."""
    t = Table(game(2, dice=((3, 4),), players={0: {"position": 36}}, squares=owned(0, 3)))
    events = t.do(Roll(0))
    assert of(events, Moved)[0].passed_start
    assert transfers(events) == [(BANK, 0, 2000, "salary")]
    assert (t.pos(0), t.cash(0)) == (3, 17000)


def test_landing_exactly_on_start_pays_salary_and_landing_bonus() -> None:
    """R4/R5: landing exactly on Start pays salary + landing bonus, once."""
    t = Table(game(2, dice=((3, 4),), players={0: {"position": 33}}))
    events = t.do(Roll(0))
    assert sum(amount for _, _, amount, _ in transfers(events)) == 3000
    assert (t.pos(0), t.cash(0)) == (0, 18000)


def test_going_to_jail_from_the_go_to_jail_square_pays_no_salary_and_ends_the_turn() -> None:
    """R4/R5/R13: Go to jail sends the player straight to jail; no salary, and doubles
    give no further roll."""
    t = Table(game(2, dice=((1, 1),), players={0: {"position": 28}}))
    events = t.do(Roll(0))
    assert of(events, SentToJail) == [SentToJail(0, JailReason.SQUARE)]
    assert transfers(events) == []
    assert (t.pos(0), t.seat(0).in_jail, t.cash(0)) == (10, True, 15000)
    assert t.waits_for() == ("roll", 1)


# --- R5: squares -----------------------------------------------------------------------------


def test_an_unowned_property_can_be_bought_at_list_price() -> None:
    """R5: unowned property: buy at list price."""
    t = Table(game(2, dice=((2, 4),)))
    events = t.do(Roll(0))
    assert of(events, BuyOffered) == [BuyOffered(0, 6, 75.0)]
    events = t.do(Buy(0))
    assert of(events, PropertyBought) == [PropertyBought(0, 6, 1000)]
    assert transfers(events) == [(0, BANK, 1000, "purchase")]
    assert (t.owner(6), t.cash(0)) == (0, 14000)


def test_a_declined_property_goes_to_auction() -> None:
    """R5/R7: a declined property goes to auction."""
    t = Table(game(2, dice=((2, 4),)))
    t.do(Roll(0))
    events = t.do(Decline(0))
    assert of(events, AuctionStarted)[0].square == 6
    assert t.waits_for() == ("auction", 1)
    assert t.owner(6) is None


def test_landing_on_your_own_property_does_nothing() -> None:
    """R5: own property: nothing."""
    t = Table(game(2, dice=((2, 4),), squares=owned(0, 6)))
    events = t.do(Roll(0))
    assert transfers(events) == []
    assert names(events) == ["DiceRolled", "Moved", "TurnEnded", "TurnStarted"]


def test_just_visiting_does_nothing() -> None:
    """R5: Just visiting: nothing."""
    t = Table(game(2, dice=((4, 6),)))
    events = t.do(Roll(0))
    assert transfers(events) == []
    assert (t.pos(0), t.seat(0).in_jail) == (10, False)


@pytest.mark.parametrize(
    ("start", "dice", "square", "tax"), [(0, (1, 3), 4, 2000), (33, (2, 3), 38, 1000)]
)
def test_a_tax_square_is_paid_to_the_bank_through_the_payment_pause(
    start: int, dice: tuple[int, int], square: int, tax: int
) -> None:
    """R5/R11: tax: pay the bank through the payment pause, not silently."""
    t = Table(game(2, dice=(dice,), players={0: {"position": start}}))
    events = t.do(Roll(0))
    assert t.pos(0) == square
    assert of(events, PaymentRequired)[0][:4] == (0, tax, ((BANK, tax),), "tax")
    assert (t.waits_for(), t.cash(0)) == (("payment", 0), 15000)
    events = t.do(Pay(0))
    assert transfers(events) == [(0, BANK, tax, "tax")]
    assert t.cash(0) == 15000 - tax
    assert t.waits_for() == ("roll", 1)


def test_the_jackpot_square_offers_the_bet() -> None:
    """R5/R14: Jackpot: the optional dice bet."""
    t = Table(game(2, dice=((3, 4),), players={0: {"position": 13}}))
    events = t.do(Roll(0))
    assert of(events, JackpotOffered) == [JackpotOffered(0, 75.0)]
    t.do(JackpotDecline(0))
    assert t.waits_for() == ("roll", 1)


def test_an_event_square_draws_the_next_card() -> None:
    """R5/R15: event square: draw the next event card, named in the log."""
    t = Table(game(2, dice=((3, 4),), deck=(1,)))
    events = t.do(Roll(0))
    assert of(events, CardDrawn) == [CardDrawn(0, 1, "Collect 1000 from the bank", False)]
    assert t.cash(0) == 16000


def test_nothing_can_be_managed_while_a_buy_decision_is_pending() -> None:
    """R4.1: after the roll no mortgage, lift or trade offer either (e.g. to afford a buy)."""
    t = Table(game(2, dice=((3, 4),), players={0: {"position": 32}}, squares=owned(0, 5)))
    t.do(Roll(0))
    assert t.waits_for() == ("buy", 0)
    assert t.refuse(Mortgage(0, 5)) == "manage/not_now"
    assert t.refuse(OfferTrade(0, 1, give_squares=(5,), take_cash=2000)) == "trade/not_now"


def test_doubles_still_give_another_roll_after_an_auction() -> None:
    """R4.3/R7: the doubles roller declines, the auction ends, and they roll again."""
    t = Table(game(3, dice=((3, 3),)))
    t.do(Roll(0))
    t.do(Decline(0))
    t.do(Pass(1))
    t.do(Pass(2))
    events = t.do(Pass(0))
    assert names(events)[-2:] == ["AuctionEnded", "RollOffered"]
    assert t.waits_for() == ("roll", 0)


def test_doubles_give_no_further_roll_once_a_card_sends_the_player_to_jail() -> None:
    """R4.3/R13: jail ends the turn, even after doubles."""
    t = Table(game(3, dice=((1, 1),), deck=(16,), players={0: {"position": 5}}))
    events = t.do(Roll(0))
    assert of(events, RollOffered) == []
    assert (t.seat(0).in_jail, t.waits_for()) == (True, ("roll", 1))


def test_doubles_are_counted_per_turn() -> None:
    """R4.3: only three doubles *in one turn* send to jail; the count starts again each turn."""
    t = Table(game(2, squares=owned(0, 6)))
    for dice in ((3, 3), (3, 3), (4, 6)):
        t.override(seats={0: {"position": 0}})
        t.script(dice=(dice,))
        t.do(Roll(0))
    quiet_turn(t, 1)
    t.override(seats={0: {"position": 0}})
    t.script(dice=((3, 3),))
    (rolled,) = of(t.do(Roll(0)), DiceRolled)
    assert rolled.doubles == 1
    assert (t.seat(0).in_jail, t.waits_for()) == (False, ("roll", 0))


def test_the_round_counter_goes_on_when_the_first_seat_goes_out() -> None:
    """R3: a round is complete when every *active* seat has played, even once the seat
    that played first is out."""
    t = Table(game(3, first=0))
    t.do(Resign(0))
    quiet_turn(t, 1)
    assert t.state.round == 1
    quiet_turn(t, 2)
    assert (t.state.round, t.state.current_seat) == (2, 1)


def test_classic_rolls_two_dice_only_even_late_in_the_game() -> None:
    """R2/R4: Classic has no third die at any round."""
    t = Table(game(2, round=300))
    (rolled,) = of(quiet_turn(t, 0), DiceRolled)
    assert (rolled.white, rolled.third) == ((4, 6), None)
    assert t.pos(0) == 10
