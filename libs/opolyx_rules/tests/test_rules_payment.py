"""Story tests for the payment pause (R11), bankruptcy and resignation (R12) and the
edge cases of R21."""

from __future__ import annotations

from typing import Any

from opolyx_rules import PaymentPending
from opolyx_rules.commands import (
    AcceptOffer,
    DeclareBankruptcy,
    Mortgage,
    OfferTrade,
    Pay,
    Resign,
    Roll,
)
from opolyx_rules.events import (
    BuildingSold,
    GameFinished,
    PaymentMade,
    PaymentRequired,
    PropertyMortgaged,
    SeatWentOut,
)
from opolyx_rules.state import OutHow
from story import BANK, Table, cmd, game, legal, names, of, owned, transfers


def rent_on_39(
    tenant_cash: int, buildings: int, tenant_squares: dict[int, dict[str, Any]] | None = None
) -> Table:
    """Seat 0 (with ``tenant_cash``) rolls from 32 onto seat 1's square 39."""
    squares = {**owned(1, 37, 39, buildings=buildings), **(tenant_squares or {})}
    t = Table(
        game(3, dice=((3, 4),), players={0: {"position": 32, "cash": tenant_cash}}, squares=squares)
    )
    t.do(Roll(0))
    assert t.waits_for() == ("payment", 0)
    return t


def test_a_debt_pauses_the_game_instead_of_debiting_silently() -> None:
    """R11: the debtor is on a Pay step with a deadline of at least 75 s; nothing moved yet."""
    t = rent_on_39(15000, 1)
    pending = t.pending
    assert isinstance(pending, PaymentPending)
    assert (pending.amount, pending.deadline, t.cash(0), t.cash(1)) == (
        2000,
        75.0,
        15000,
        15000,
    )
    events = t.do(Pay(0))
    assert transfers(events) == [(0, 1, 2000, "rent")]
    assert of(events, PaymentMade) == [PaymentMade(0, 2000, "rent", False)]
    assert t.waits_for() == ("roll", 1)


def test_partial_payment_is_not_possible_raise_funds_then_pay() -> None:
    """R11: cash short: Pay is refused; the debtor mortgages during the pause, then pays."""
    t = rent_on_39(1500, 1, owned(0, 5))
    assert t.refuse(Pay(0)) == "funds/insufficient"
    assert cmd(Pay(0)) not in legal(t.state, 0)
    t.do(Mortgage(0, 5))
    t.do(Pay(0))
    assert (t.cash(0), t.cash(1)) == (500, 17000)


def test_when_the_pause_runs_out_funds_are_raised_cheapest_first_then_paid() -> None:
    """R11: on timeout the engine sells buildings, then mortgages, cheapest first, until
    the debt is covered, and pays."""
    tenant = {**owned(0, 1, 3, buildings=1), **owned(0, 5, 34)}
    t = rent_on_39(0, 1, tenant)  # owes 2000
    events = t.timeout()
    assert t.now == 75.0
    assert of(events, BuildingSold) == [BuildingSold(0, 1, 0), BuildingSold(0, 3, 0)]
    assert of(events, PropertyMortgaged) == [
        PropertyMortgaged(0, 1),
        PropertyMortgaged(0, 3),
        PropertyMortgaged(0, 5),
    ]
    assert of(events, PaymentMade) == [PaymentMade(0, 2000, "rent", True)]
    # 250 + 250 + 300 + 300 + 1000 = 2100 raised; 34 (the dearest) is left alone
    assert (t.cash(0), t.prop(34).mortgaged, t.cash(1)) == (100, False, 17000)


def test_bankruptcy_is_refused_while_selling_and_mortgaging_would_cover_the_debt() -> None:
    """R11: bankruptcy is offered only when selling every building and mortgaging every
    property would still not cover the debt."""
    t = rent_on_39(1000, 1, owned(0, 5))  # 1000 + 1000 mortgage = 2000 = the debt
    assert cmd(DeclareBankruptcy(0)) not in legal(t.state, 0)
    assert t.refuse(DeclareBankruptcy(0)) == "bankrupt/can_pay"


def test_bankruptcy_is_offered_when_liquidation_cannot_cover() -> None:
    """R11/R12: liquidation short of the debt: bankruptcy is offered; the buildings are
    sold, the properties mortgaged, all cash goes to the creditor, the properties
    return to the bank unowned and unmortgaged, and the seat is out."""
    tenant = {**owned(0, 1, 3, buildings=2), **owned(0, 5, mortgaged=True)}
    t = rent_on_39(400, 5, tenant)  # owes 20000; can raise 400 + 4 x 250 + 2 x 300 = 2000
    assert cmd(DeclareBankruptcy(0)) in legal(t.state, 0)
    events = t.do(DeclareBankruptcy(0))
    assert len(of(events, BuildingSold)) == 4
    assert transfers(events, "bankruptcy") == [(0, 1, 2000, "bankruptcy")]
    assert of(events, SeatWentOut) == [SeatWentOut(0, OutHow.BANKRUPT, None)]
    assert (t.cash(0), t.cash(1), t.seat(0).out) == (0, 17000, True)
    for square in (1, 3, 5):
        assert (t.owner(square), t.prop(square).buildings, t.prop(square).mortgaged) == (
            None,
            0,
            False,
        )
    assert t.waits_for() == ("roll", 1)


def test_a_pause_that_runs_out_without_enough_to_raise_ends_in_bankruptcy() -> None:
    """R11: if raising cannot cover the debt when the pause runs out, the seat goes
    bankrupt."""
    t = rent_on_39(1000, 5)
    events = t.timeout()
    assert of(events, SeatWentOut) == [SeatWentOut(0, OutHow.BANKRUPT, None)]
    assert t.cash(1) == 16000


def test_several_creditors_share_one_pause_and_each_gets_its_share() -> None:
    """R11/R15: "pay each opponent": one pause for the total; each creditor is paid."""
    t = Table(game(4, dice=((3, 4),), deck=(7,)))
    events = t.do(Roll(0))
    assert [e[:4] for e in of(events, PaymentRequired)] == [
        (0, 1500, ((1, 500), (2, 500), (3, 500)), "card")
    ]
    events = t.do(Pay(0))
    assert transfers(events) == [(0, 1, 500, "card"), (0, 2, 500, "card"), (0, 3, 500, "card")]
    assert [t.cash(s) for s in range(4)] == [13500, 15500, 15500, 15500]


def test_a_creditor_eliminated_during_the_pause_has_its_share_go_to_the_bank() -> None:
    """R11/R21: if a creditor is eliminated during the pause, their share goes to the bank."""
    t = Table(game(4, dice=((3, 4),), deck=(7,)))
    t.do(Roll(0))
    t.do(Resign(2), at=3.0)
    assert t.waits_for() == ("payment", 0)
    events = t.do(Pay(0))
    assert transfers(events) == [
        (0, 1, 500, "card"),
        (0, BANK, 500, "creditor_out"),
        (0, 3, 500, "card"),
    ]
    assert [t.cash(s) for s in range(4)] == [13500, 15500, 0, 15500]


def test_bankruptcy_pays_several_creditors_pro_rata() -> None:
    """R12, R23.8: all the bankrupt seat's cash pays its creditors, split pro rata to what
    each is owed (rounded down; the remainder goes to the bank)."""
    t = Table(game(4, dice=((3, 4),), deck=(7,), players={0: {"cash": 1000}}))
    t.do(Roll(0))  # owes 1500 with 1000 and nothing to sell
    events = t.do(DeclareBankruptcy(0))
    assert transfers(events, "bankruptcy") == [
        (0, 1, 333, "bankruptcy"),
        (0, 2, 333, "bankruptcy"),
        (0, 3, 333, "bankruptcy"),
        (0, BANK, 1, "bankruptcy"),
    ]
    assert [t.cash(s) for s in range(4)] == [0, 15333, 15333, 15333]


def test_a_seat_may_resign_at_any_time_and_nothing_is_paid() -> None:
    """R12: resignation at any time (here: on another seat's turn); its properties are
    released unowned and unmortgaged; nothing is paid to anyone."""
    squares = {**owned(2, 37, 39, buildings=1), **owned(2, 5, mortgaged=True)}
    t = Table(game(3, squares=squares))
    events = t.do(Resign(2), at=12.0)
    assert of(events, SeatWentOut) == [SeatWentOut(2, OutHow.RESIGNED, None)]
    assert all({frm, to} <= {2, BANK} for frm, to, _, _ in transfers(events))
    assert (t.cash(0), t.cash(1), t.cash(2), t.seat(2).out) == (15000, 15000, 0, True)
    for square in (5, 37, 39):
        assert (t.owner(square), t.prop(square).buildings, t.prop(square).mortgaged) == (
            None,
            0,
            False,
        )
    assert t.waits_for() == ("roll", 0)
    assert t.refuse(Roll(2)) == "seat/out"


def test_resigning_on_your_own_turn_passes_the_turn_on() -> None:
    """R12/R3: the resigning seat's turn ends; play goes on in seat order."""
    t = Table(game(3))
    events = t.do(Resign(0))
    assert names(events)[-2:] == ["TurnEnded", "TurnStarted"]
    assert t.waits_for() == ("roll", 1)


def test_resigning_in_your_payment_pause_pays_nothing() -> None:
    """R12: a resigning debtor pays nothing to the creditor."""
    t = rent_on_39(15000, 5)
    events = t.do(Resign(0))
    assert transfers(events, "rent") == []
    assert (t.cash(1), t.seat(0).out, t.waits_for()) == (15000, True, ("roll", 1))


def test_when_one_seat_is_left_the_game_ends_and_it_wins() -> None:
    """R12/R20: the game ends when only one seat is still in."""
    t = Table(game(2))
    events = t.do(Resign(1))
    (finished,) = of(events, GameFinished)
    assert (finished.winner, finished.placement, finished.reason) == (0, (0, 1), "last_standing")
    assert t.state.finished
    assert t.refuse(Roll(0)) == "game/finished"


def test_a_debtor_may_trade_during_the_pause_then_pay() -> None:
    """R11/R10: during their own pause the debtor may trade to raise the money."""
    t = rent_on_39(500, 1, owned(0, 6))  # owes 2000
    t.do(OfferTrade(0, 2, give_squares=(6,), take_cash=1500))
    t.do(AcceptOffer(2, "o1"))
    t.do(Pay(0))
    assert (t.owner(6), t.cash(0), t.cash(1), t.cash(2)) == (2, 0, 17000, 13500)


def test_a_bankrupt_seats_share_for_an_eliminated_creditor_goes_to_the_bank() -> None:
    """R12/R21: pro rata shares of creditors already out go to the bank."""
    t = Table(game(4, dice=((3, 4),), deck=(7,), players={0: {"cash": 900}}))
    t.do(Roll(0))  # owes 500 to each of 1, 2, 3
    t.do(Resign(3))
    events = t.do(DeclareBankruptcy(0))
    assert transfers(events, "bankruptcy") == [
        (0, 1, 300, "bankruptcy"),
        (0, 2, 300, "bankruptcy"),
        (0, BANK, 300, "bankruptcy"),
    ]
