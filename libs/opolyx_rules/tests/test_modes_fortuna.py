"""Fortuna mode, told as short stories (RULES.md R2, R18).

The four rules of the Chinese edition: Lucky Eight (888 on a white total of 8), the
Fortune Pot (taxes and card payments to the bank go into it; landing on 20 takes it, and
the Jackpot bet is still offered), Lunar New Year (1200 to every active seat at the start
of rounds 12, 24, ...) and Unlucky Four (400 into the pot on a white total of 4, through
the payment pause).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from opolyx_rules.scenario import run_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mode_story import BANK, POT, Story, of_type, played, transfers

# -- Lucky Eight -------------------------------------------------------------------------


@pytest.mark.parametrize("dice", [(3, 5), (4, 4), (2, 6), (6, 2)])
def test_lucky_eight_pays_888_on_a_white_total_of_8(dice: tuple[int, int]) -> None:
    """R18.1: a roll whose white dice total 8 pays the roller 888 from the bank."""
    story = Story("fortuna", 2, dice=[dice])
    events = story.do(0, "roll")
    assert transfers(events, "lucky_eight") == [
        {"type": "transfer", "frm": BANK, "to": 0, "amount": 888, "reason": "lucky_eight"}
    ]
    assert story.cash(0) == 15888
    assert story.position(0) == 8


@pytest.mark.parametrize("dice", [(3, 4), (4, 5), (6, 6)])
def test_no_lucky_eight_on_other_totals(dice: tuple[int, int]) -> None:
    """R18.1: only a total of 8 is lucky."""
    story = Story("fortuna", 2, dice=[dice], deck=[1])
    events = story.do(0, "roll")
    assert transfers(events, "lucky_eight") == []


def test_classic_has_no_lucky_eight() -> None:
    """R18: the contrast: Classic pays nothing for a total of 8."""
    story = Story("classic", 2, dice=[(3, 5)])
    assert transfers(story.do(0, "roll")) == []
    assert story.cash(0) == 15000


# -- the Fortune Pot -----------------------------------------------------------------------


@pytest.mark.parametrize(("start", "tax"), [(1, 2000), (35, 1000)])
def test_income_and_luxury_tax_go_into_the_pot(start: int, tax: int) -> None:
    """R18.2: income tax (4) and luxury tax (38) are paid into the Fortune Pot."""
    story = Story("fortuna", 2, dice=[(1, 2)], seat_overrides={0: {"position": start}})
    story.do(0, "roll")
    assert story.pending["kind"] == "payment"
    assert story.pending["creditors"] == [[POT, tax]]
    events = story.do(0, "pay")
    assert transfers(events) == [
        {"type": "transfer", "frm": 0, "to": POT, "amount": tax, "reason": "tax"}
    ]
    assert story.view["pot"] == tax
    assert story.cash(0) == 15000 - tax


@pytest.mark.parametrize(("card", "amount"), [(3, 500), (4, 1500), (5, 2500)])
def test_card_payments_to_the_bank_go_into_the_pot(card: int, amount: int) -> None:
    """R18.2, R15: an event card's payment to the bank goes into the pot."""
    story = Story("fortuna", 2, dice=[(1, 2)], deck=[card], seat_overrides={0: {"position": 4}})
    story.do(0, "roll")
    assert story.pending["creditors"] == [[POT, amount]]
    story.do(0, "pay")
    assert story.view["pot"] == amount


def test_repairs_go_into_the_pot() -> None:
    """R18.2, R15: the repairs card (250 per building, 1000 per 5-building street) is a
    payment to the bank, so it goes into the pot: 2 x 250 + 1000 = 1500."""
    story = Story(
        "fortuna",
        2,
        dice=[(1, 2)],
        deck=[8],
        seat_overrides={0: {"position": 4}},
        squares={
            1: {"owner": 0, "buildings": 2},
            3: {"owner": 0, "buildings": 2},
            37: {"owner": 0, "buildings": 5},
            39: {"owner": 0, "buildings": 5},
        },
    )
    story.do(0, "roll")
    assert story.pending["amount"] == 4 * 250 + 2 * 1000
    story.do(0, "pay")
    assert story.view["pot"] == 3000


def test_paying_each_opponent_does_not_feed_the_pot() -> None:
    """R18.2: only payments *to the bank* feed the pot; card 7 pays the opponents."""
    story = Story("fortuna", 3, dice=[(1, 2)], deck=[7], seat_overrides={0: {"position": 4}})
    story.do(0, "roll")
    story.do(0, "pay")
    assert story.view["pot"] == 0
    assert [story.cash(s) for s in range(3)] == [14000, 15500, 15500]


def test_bail_does_not_feed_the_pot() -> None:
    """R18.2, R13: bail is not a tax nor a card payment: it goes to the bank."""
    story = Story(
        "fortuna",
        2,
        seat_overrides={0: {"position": 10, "in_jail": True}},
    )
    story.do(0, "pay_bail")
    events = story.do(0, "pay")
    assert transfers(events) == [
        {"type": "transfer", "frm": 0, "to": BANK, "amount": 500, "reason": "bail"}
    ]
    assert story.view["pot"] == 0


def test_rent_tax_leaves_the_game_in_fortuna() -> None:
    """R6: "Fortuna: it too leaves the game": at round 200 the 99% withheld goes to the
    bank, not the pot."""
    story = Story(
        "fortuna",
        2,
        round=200,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 11}},
        squares={
            11: {"owner": 1, "buildings": 1},
            13: {"owner": 1, "buildings": 1},
            14: {"owner": 1, "buildings": 1},
        },
    )
    story.do(0, "roll")
    events = story.do(0, "pay")
    assert transfers(events, "rent_tax") == [
        {"type": "transfer", "frm": 0, "to": BANK, "amount": 594, "reason": "rent_tax"}
    ]
    assert story.view["pot"] == 0


def test_landing_on_20_takes_the_pot_and_then_offers_the_bet() -> None:
    """R18.2, R14: landing on 20 takes the whole pot; the Jackpot bet is still offered."""
    story = Story(
        "fortuna", 2, dice=[(4, 6)], jackpot_die=[5], pot=5400, seat_overrides={0: {"position": 10}}
    )
    events = story.do(0, "roll")
    assert transfers(events) == [
        {"type": "transfer", "frm": POT, "to": 0, "amount": 5400, "reason": "fortune_pot"}
    ]
    assert story.view["pot"] == 0
    assert story.cash(0) == 20400
    assert story.pending["kind"] == "jackpot"
    events = story.do(0, "jackpot", numbers=[5])
    assert [(t["amount"], t["reason"]) for t in transfers(events)] == [
        (1000, "jackpot_stake"),
        (6000, "jackpot_win"),
    ]
    assert story.cash(0) == 25400


def test_the_pot_can_pay_for_the_stake() -> None:
    """R18.2, R14: the pot is taken first, so a seat with 500 in cash and a pot of 700 may
    bet its 1000."""
    story = Story(
        "fortuna",
        2,
        dice=[(4, 6)],
        pot=700,
        seat_overrides={0: {"position": 10, "cash": 500}},
    )
    story.do(0, "roll")
    assert story.cash(0) == 1200
    assert story.pending["kind"] == "jackpot"


def test_an_empty_pot_moves_nothing_and_the_bet_is_offered() -> None:
    """R18.2: with an empty pot there is nothing to take; the bet is offered as usual."""
    story = Story("fortuna", 2, dice=[(4, 6)], seat_overrides={0: {"position": 10}})
    events = story.do(0, "roll")
    assert transfers(events) == []
    assert story.pending["kind"] == "jackpot"


# -- Lunar New Year --------------------------------------------------------------------------


@pytest.mark.parametrize(("round_no", "gift"), [(11, True), (23, True), (12, False), (5, False)])
def test_lunar_new_year_gives_1200_to_each_active_seat_at_rounds_12_24(
    round_no: int, gift: bool
) -> None:
    """R18.3: at the start of every 12th round each active seat receives 1200 from the
    bank; a seat that is out receives nothing."""
    story = Story("fortuna", 3, round=round_no, dice=[(4, 6)] * 2)
    story.do(1, "resign")
    story.do(0, "roll")
    events = story.do(2, "roll")
    expected = [
        {"type": "transfer", "frm": BANK, "to": seat, "amount": 1200, "reason": "new_year"}
        for seat in (0, 2)
    ]
    assert transfers(events, "new_year") == (expected if gift else [])
    assert story.state.round == round_no + 1
    assert [story.cash(s) for s in (0, 2)] == ([16200, 16200] if gift else [15000, 15000])
    if gift:
        kinds = [e["type"] for e in events]
        assert kinds.index("transfer") < kinds.index("turn_started")


# -- Unlucky Four ----------------------------------------------------------------------------


def test_unlucky_four_costs_400_into_the_pot_through_the_payment_pause() -> None:
    """R18.4: a white total of 4 costs the roller 400, paid into the pot through a payment
    pause before the move; then the roll goes on (to 4, income tax, also into the pot)."""
    story = Story("fortuna", 2, dice=[(1, 3)])
    events = story.do(0, "roll")
    assert of_type(events, "moved") == []
    assert story.position(0) == 0
    pending = story.pending
    assert (pending["kind"], pending["amount"], pending["creditors"], pending["reason"]) == (
        "payment",
        400,
        [[POT, 400]],
        "unlucky_four",
    )
    events = story.do(0, "pay")
    assert story.view["pot"] == 400
    assert story.position(0) == 4
    assert story.pending["kind"] == "payment" and story.pending["amount"] == 2000
    story.do(0, "pay")
    assert story.view["pot"] == 2400
    assert story.cash(0) == 15000 - 2400


def test_unlucky_four_on_doubles_still_rolls_again() -> None:
    """R18.4, R4: (2, 2) costs 400 and is still doubles: after the move, roll again."""
    story = Story("fortuna", 2, dice=[(2, 2)])
    story.do(0, "roll")
    assert story.pending["reason"] == "unlucky_four"
    story.do(0, "pay")
    story.do(0, "pay")  # income tax on square 4
    assert story.pending == {"kind": "roll", "seat": 0, "deadline": 75.0}


def test_unlucky_four_short_of_cash_raises_funds_when_the_pause_runs_out() -> None:
    """R18.4, R11: with 100 in cash the pause cannot be paid at once; when its 75 s run out
    the engine mortgages (cheapest first: 1 for 300) and pays the 400 into the pot."""
    story = Story(
        "fortuna",
        2,
        dice=[(3, 1)],
        seat_overrides={0: {"cash": 100, "position": 30}},
        squares={1: {"owner": 0}, 39: {"owner": 0}},
    )
    story.do(0, "roll", at=2)
    assert story.refused(0, "pay") == "funds/insufficient"
    assert story.pending["deadline"] == 77.0
    story.wait(77)
    assert story.square(1)["mortgaged"] and not story.square(39)["mortgaged"]
    assert story.view["pot"] == 400
    assert story.cash(0) == 0
    assert story.position(0) == 34


def test_the_pot_is_in_the_replay_output() -> None:
    """R18, issue 3: the pot is part of the state and of the replay output ("pot")."""
    lines = [
        {"setup": {"mode": "fortuna", "seats": 2, "first_seat": 0, "dice": [[1, 3]]}},
        {"seat": 0, "type": "roll", "at": 1},
        {"seat": 0, "type": "pay", "at": 2},
    ]
    output = run_scenario(json.dumps(line) for line in lines).to_json()
    assert output["state"]["pot"] == 400
    assert output["errors"] == []


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_fortuna_games_keep_the_four_rules(seed: int) -> None:
    """R18: over whole games: every white 8 pays 888 at once, every white 4 opens a 400
    payment into the pot; taxes and card payments to the bank go into the pot and
    nothing else does; landing on 20 takes exactly the pot; every round 12, 24, ...
    starts with 1200 for each active seat, and no other round does."""
    final, steps = played("fortuna", 3, seed)
    assert final.finished
    seen = {"lucky": 0, "unlucky": 0, "pot_taken": 0, "new_year_rounds": 0}
    gifts: list[dict[str, Any]] = []
    for index, (before, event, after) in enumerate(steps):
        kind = event["type"]
        if kind == "dice_rolled":
            total, seat = sum(event["white"]), event["seat"]
            following = steps[index + 1][1]
            if total == 8:
                seen["lucky"] += 1
                assert following == {
                    "type": "transfer",
                    "frm": BANK,
                    "to": seat,
                    "amount": 888,
                    "reason": "lucky_eight",
                }
            elif total == 4:
                seen["unlucky"] += 1
                assert following["type"] == "payment_required"
                assert (following["seat"], following["amount"], following["reason"]) == (
                    seat,
                    400,
                    "unlucky_four",
                )
                assert following["creditors"] == [[POT, 400]]
        elif kind == "transfer":
            if event["to"] == POT:
                assert event["reason"] in ("tax", "card", "unlucky_four", "bankruptcy")
            if event["reason"] in ("tax", "card") and event["frm"] >= 0:
                assert event["to"] != BANK  # taxes and card payments never to the bank
            if event["reason"] == "fortune_pot":
                seen["pot_taken"] += 1
                assert event["frm"] == POT and event["amount"] == before.pot > 0
                assert before.seats[event["to"]].position == 20 and after.pot == 0
            if event["reason"] == "new_year":
                gifts.append(event)
        elif kind == "turn_ended":
            gifts = []
        elif kind == "turn_started" and event["round"] != before.round:
            active = [s.seat for s in before.seats if not s.out]
            expected = active if event["round"] % 12 == 0 else []
            seen["new_year_rounds"] += bool(expected)
            assert [(g["to"], g["amount"]) for g in gifts] == [(s, 1200) for s in expected]
    assert all(seen.values()), seen


def test_fortuna_board_renames_every_property_and_changes_nothing_else() -> None:
    """R1: Fortuna's board carries its own brand names; positions, groups and numbers
    stay those of the standard board."""
    from opolyx_rules.board import PROPERTY_SQUARES, board_data

    standard, fortuna = board_data(), board_data(fortuna=True)
    renamed = {
        e["square"] for e, f in zip(standard, fortuna, strict=True) if e["name"] != f["name"]
    }
    assert renamed == set(PROPERTY_SQUARES)
    for e, f in zip(standard, fortuna, strict=True):
        assert {**e, "name": None} == {**f, "name": None}
