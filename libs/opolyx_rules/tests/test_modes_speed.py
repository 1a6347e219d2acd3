"""Speed mode, told as short stories (RULES.md R2, R8, R9, R19).

Speed is Classic plus: a third die from round 7 (never in jail) with faces 1, 2, 3, Bus,
X, X; uneven building; mortgages that expire after 10 rounds; 45 s turns; the rent tax
from round 40 (full at 100); a round limit of 300.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mode_story import BANK, Step, Story, of_type, owned_by, played, transfers
from opolyx_rules.assets import prop
from opolyx_rules.board import PROPERTY_SQUARES

# -- the third die: when it is rolled ----------------------------------------------------


def test_third_die_is_not_rolled_before_round_7() -> None:
    """R19, R2: the third die comes in from round 7; in round 6 the move is the white total."""
    story = Story("speed", 2, round=6, dice=[(1, 2)], speed_die=["3"])
    [rolled] = of_type(story.do(0, "roll"), "dice_rolled")
    assert rolled["third"] is None
    assert story.position(0) == 3
    assert story.state.script.speed_die == ("3",)  # the scripted face is still unused


@pytest.mark.parametrize(("face", "square"), [("1", 4), ("2", 5), ("3", 6)])
def test_third_die_number_adds_to_the_move_from_round_7(face: str, square: int) -> None:
    """R19: from round 7 a number on the third die adds to the move of the white dice."""
    story = Story("speed", 2, round=7, dice=[(1, 2)], speed_die=[face])
    events = story.do(0, "roll")
    [rolled] = of_type(events, "dice_rolled")
    assert rolled["third"] == face
    [moved] = of_type(events, "moved")
    assert (moved["frm"], moved["to"], moved["how"]) == (0, square, "roll")


def test_third_die_is_never_rolled_in_jail() -> None:
    """R19, R13: a seat in jail rolls only the two white dice, even after round 7."""
    story = Story(
        "speed",
        2,
        round=9,
        dice=[(1, 2)],
        speed_die=["3"],
        seat_overrides={0: {"position": 10, "in_jail": True}},
    )
    events = story.do(0, "roll")
    [rolled] = of_type(events, "dice_rolled")
    assert rolled["third"] is None
    assert of_type(events, "jail_roll_failed") == [
        {"type": "jail_roll_failed", "seat": 0, "attempts": 1}
    ]
    assert story.position(0) == 10
    assert story.state.script.speed_die == ("3",)


def test_jail_doubles_move_by_the_white_dice_only_and_give_no_extra_roll() -> None:
    """R19, R13: doubles in jail free the seat; it moves by the white dice (no third die)
    and does not roll again."""
    story = Story(
        "speed",
        2,
        round=9,
        dice=[(2, 2)],
        speed_die=["3"],
        seat_overrides={0: {"position": 10, "in_jail": True}},
        squares={14: {"owner": 0}},
    )
    events = story.do(0, "roll")
    [rolled] = of_type(events, "dice_rolled")
    assert rolled["third"] is None
    assert of_type(events, "left_jail")[0]["how"] == "doubles"
    assert story.position(0) == 14
    assert not story.seat(0)["in_jail"]
    assert story.pending == {"kind": "roll", "seat": 1, "deadline": 45.0}


# -- Bus ------------------------------------------------------------------------------


@pytest.mark.parametrize(("move", "square"), [("sum", 18), ("first", 13), ("second", 16)])
def test_bus_lets_the_player_move_by_the_sum_or_either_die(move: str, square: int) -> None:
    """R19: Bus: the player chooses to move by the white total or by either single die."""
    story = Story(
        "speed", 2, round=7, dice=[(2, 5)], speed_die=["bus"], seat_overrides={0: {"position": 11}}
    )
    events = story.do(0, "roll")
    assert of_type(events, "moved") == []
    assert story.pending == {"kind": "bus", "seat": 0, "deadline": 45.0}
    assert story.position(0) == 11
    events = story.do(0, "bus", move=move)
    assert of_type(events, "bus_chosen") == [
        {"type": "bus_chosen", "seat": 0, "move": move, "automatic": False}
    ]
    [moved] = of_type(events, "moved")
    assert (moved["frm"], moved["to"], moved["how"]) == (11, square, "bus")


def test_bus_choice_times_out_to_the_first_option_the_sum() -> None:
    """R19, R16, R23.5: a pending Bus choice left to its 45 s deadline takes the first option."""
    story = Story(
        "speed", 2, round=7, dice=[(2, 5)], speed_die=["bus"], seat_overrides={0: {"position": 11}}
    )
    story.do(0, "roll", at=3)
    assert story.pending["deadline"] == 48.0
    assert story.wait(47.9) == []
    events = story.wait(48)
    assert of_type(events, "bus_chosen")[0]["automatic"] is True
    assert story.position(0) == 18


# -- X ---------------------------------------------------------------------------------


def test_x_moves_resolves_then_jumps_to_the_nearest_unowned_property() -> None:
    """R19: X: move normally and resolve the square (buy 3), then jump to the nearest
    unowned property ahead (5), where buying is offered as usual."""
    story = Story("speed", 2, round=7, dice=[(1, 2)], speed_die=["x"])
    events = story.do(0, "roll")
    assert of_type(events, "dice_rolled")[0]["x_jump"] is True
    assert [(m["to"], m["how"]) for m in of_type(events, "moved")] == [(3, "roll")]
    assert story.pending["kind"] == "buy" and story.pending["square"] == 3
    events = story.do(0, "buy")
    assert story.owner(3) == 0
    [jump] = of_type(events, "moved")
    assert (jump["frm"], jump["to"], jump["passed_start"], jump["how"]) == (3, 5, False, "jump")
    assert story.pending["kind"] == "buy" and story.pending["square"] == 5


def test_x_jump_targets_only_properties_never_events_or_corners() -> None:
    """R19: only properties are jump targets: from 10 the jump passes the seat's own
    streets, the event square 17 and the Jackpot corner 20, and lands on 21."""
    own = {sq: {"owner": 0} for sq in (11, 12, 13, 14, 15, 16, 18, 19)}
    story = Story(
        "speed",
        2,
        round=7,
        dice=[(1, 3)],
        speed_die=["x"],
        seat_overrides={0: {"position": 6}},
        squares=own,
    )
    events = story.do(0, "roll")
    assert [(m["frm"], m["to"], m["how"]) for m in of_type(events, "moved")] == [
        (6, 10, "roll"),
        (10, 21, "jump"),
    ]
    assert of_type(events, "card_drawn") == []
    assert of_type(events, "jackpot_offered") == []
    assert story.pending["kind"] == "buy" and story.pending["square"] == 21


def test_x_jump_with_nothing_unowned_goes_to_nearest_opponent_property_and_pays_rent() -> None:
    """R19: with no unowned property left, the jump goes to the nearest property ahead
    owned by an opponent (37, not 1), and the rent is paid there."""
    squares = {**owned_by(0), 1: {"owner": 1}, 37: {"owner": 1}}
    story = Story(
        "speed",
        2,
        round=7,
        dice=[(1, 2)],
        speed_die=["x"],
        seat_overrides={0: {"position": 20}},
        squares=squares,
    )
    events = story.do(0, "roll")
    assert [(m["to"], m["how"]) for m in of_type(events, "moved")] == [(23, "roll"), (37, "jump")]
    assert story.pending["kind"] == "payment"
    assert story.pending["amount"] == 350
    assert story.pending["creditors"] == [[1, 350]]
    story.do(0, "pay")
    assert (story.cash(0), story.cash(1)) == (15000 - 350, 15000 + 350)


def test_x_jump_passing_start_pays_the_salary() -> None:
    """R19: passing Start on the jump pays the salary (39 -> 1)."""
    squares = {**owned_by(0), 1: {"owner": None}}
    story = Story(
        "speed",
        2,
        round=7,
        dice=[(1, 2)],
        speed_die=["x"],
        seat_overrides={0: {"position": 36}},
        squares=squares,
    )
    events = story.do(0, "roll")
    moves = of_type(events, "moved")
    assert [(m["frm"], m["to"], m["passed_start"], m["how"]) for m in moves] == [
        (36, 39, False, "roll"),
        (39, 1, True, "jump"),
    ]
    assert transfers(events, "salary") == [
        {"type": "transfer", "frm": BANK, "to": 0, "amount": 2000, "reason": "salary"}
    ]
    assert story.cash(0) == 17000
    assert story.pending["kind"] == "buy" and story.pending["square"] == 1


def test_x_jump_has_no_target_when_the_roller_owns_every_property() -> None:
    """R19: only unowned or opponent-owned properties are targets; with neither, no jump."""
    story = Story("speed", 2, round=7, dice=[(1, 2)], speed_die=["x"], squares=owned_by(0))
    events = story.do(0, "roll")
    assert [m["how"] for m in of_type(events, "moved")] == ["roll"]
    assert of_type(events, "jump_skipped") == [{"type": "jump_skipped", "seat": 0}]
    assert story.pending == {"kind": "roll", "seat": 1, "deadline": 45.0}


def test_x_jump_after_doubles_is_followed_by_the_extra_roll() -> None:
    """R19, R4: X on white doubles: move (income tax on 4), resolve, jump (to 5), and
    only then the extra roll for the doubles."""
    story = Story("speed", 2, round=7, dice=[(2, 2)], speed_die=["x"])
    story.do(0, "roll")
    assert story.pending["kind"] == "payment" and story.pending["amount"] == 2000
    events = story.do(0, "pay")
    assert [(m["frm"], m["to"], m["how"]) for m in of_type(events, "moved")] == [(4, 5, "jump")]
    story.do(0, "buy")
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 0


def test_x_jump_never_targets_the_square_the_player_stands_on() -> None:
    """R19: the jump goes *forward* to the nearest unowned property ahead; the square the
    player is on is not ahead. Seat 0 declines 3 (nobody bids, so it stays unowned) and
    every other property belongs to seat 1: the jump goes to the nearest opponent
    property ahead, dealership 5 (seat 1 holds all four: 2000), with no lap and no
    salary."""
    squares = {**owned_by(1), 3: {"owner": None}}
    story = Story("speed", 2, round=7, dice=[(1, 2)], speed_die=["x"], squares=squares)
    story.do(0, "roll")
    story.do(0, "decline")
    story.do(1, "pass")
    events = story.do(0, "pass")
    assert of_type(events, "auction_ended")[0]["winner"] is None
    [jump] = of_type(events, "moved")
    assert (jump["frm"], jump["to"], jump["passed_start"]) == (3, 5, False)
    assert transfers(events, "salary") == []
    assert story.pending["kind"] == "payment"
    assert story.pending["creditors"] == [[1, 2000]]


# -- triples -----------------------------------------------------------------------------


def test_triples_teleport_to_any_square_resolve_it_and_roll_again() -> None:
    """R19: triples (third die equals both white dice): the player chooses a square,
    it is resolved there (buy 39), and then rolls again."""
    story = Story("speed", 2, round=7, dice=[(3, 3)], speed_die=["3"])
    events = story.do(0, "roll")
    assert of_type(events, "dice_rolled")[0]["doubles"] == 0
    assert of_type(events, "moved") == []
    assert story.pending == {"kind": "teleport", "seat": 0, "deadline": 45.0}
    events = story.do(0, "teleport", square=39)
    assert of_type(events, "teleported") == [
        {"type": "teleported", "seat": 0, "square": 39, "automatic": False}
    ]
    assert story.pending["kind"] == "buy" and story.pending["square"] == 39
    story.do(0, "buy")
    assert story.owner(39) == 0
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 0


def test_triples_never_count_as_jail_doubles() -> None:
    """R19: two doubles then triples: no jail; the triples teleport, and the roll after
    them is played normally."""
    story = Story(
        "speed",
        2,
        round=7,
        dice=[(2, 2), (4, 4), (3, 3), (6, 5)],
        speed_die=["1", "1", "3", "1"],
        squares=owned_by(0),
    )
    story.do(0, "roll")  # 0 -> 5, doubles 1
    story.do(0, "roll")  # 5 -> 14, doubles 2
    events = story.do(0, "roll")  # triples
    assert of_type(events, "sent_to_jail") == []
    assert of_type(events, "dice_rolled")[0]["doubles"] == 2
    assert story.pending["kind"] == "teleport"
    story.do(0, "teleport", square=25)
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 0
    events = story.do(0, "roll")  # 25 + 12 -> 37
    assert of_type(events, "sent_to_jail") == []
    assert story.position(0) == 37
    assert not story.seat(0)["in_jail"]
    assert story.pending["seat"] == 1


def test_white_doubles_without_triples_count_towards_jail() -> None:
    """R19, R4: white doubles with a third die that does not match them are doubles as
    usual: the third sends the player to jail without moving."""
    story = Story(
        "speed",
        2,
        round=7,
        dice=[(2, 2), (3, 3), (4, 4)],
        speed_die=["1", "2", "1"],
        squares=owned_by(0),
    )
    story.do(0, "roll")  # 0 -> 5
    story.do(0, "roll")  # 5 -> 13
    events = story.do(0, "roll")
    assert of_type(events, "sent_to_jail") == [
        {"type": "sent_to_jail", "seat": 0, "why": "three_doubles"}
    ]
    assert of_type(events, "moved") == []
    assert story.position(0) == 10 and story.seat(0)["in_jail"]
    assert story.pending["seat"] == 1


# -- building (R8) ---------------------------------------------------------------------

PINK = {11: {"owner": 0, "buildings": 2}, 13: {"owner": 0}, 14: {"owner": 0}}


def test_speed_builds_unevenly_but_one_level_per_street_per_turn() -> None:
    """R8: uneven building: any street of the group may be raised (11 from 2 to 3 while
    13 and 14 have none), each street at most one level per turn."""
    story = Story("speed", 2, squares=PINK)
    story.do(0, "build", square=11)
    assert story.square(11)["buildings"] == 3
    assert story.refused(0, "build", square=11) == "build/once_per_turn"
    story.do(0, "build", square=13)
    story.do(0, "build", square=14)
    assert [story.square(sq)["buildings"] for sq in (11, 13, 14)] == [3, 1, 1]
    assert story.cash(0) == 15000 - 3 * 1000


def test_one_level_per_street_holds_for_the_whole_turn_across_doubles() -> None:
    """R8, R4: the limit is per turn, not per management window: after doubles, 11
    (raised before the first roll) still cannot be raised again; 13 can."""
    story = Story("speed", 2, dice=[(2, 2)], seat_overrides={0: {"position": 6}}, squares=PINK)
    story.do(0, "build", square=11)
    story.do(0, "roll")  # 6 -> 10, doubles: another roll with its own window
    assert story.pending == {"kind": "roll", "seat": 0, "deadline": 45.0}
    assert story.refused(0, "build", square=11) == "build/once_per_turn"
    story.do(0, "build", square=13)
    assert [story.square(sq)["buildings"] for sq in (11, 13, 14)] == [3, 1, 0]


def test_classic_refuses_the_same_uneven_build() -> None:
    """R8: the contrast: even-building modes refuse to raise 11 above 13 and 14."""
    story = Story("classic", 2, squares=PINK)
    assert story.refused(0, "build", square=11) == "build/uneven"


def test_speed_sells_unevenly() -> None:
    """R8: only even-building modes sell evenly; Speed may sell from the lower street."""
    squares = {11: {"owner": 0, "buildings": 1}, 13: {"owner": 0, "buildings": 3}, 14: {"owner": 0}}
    story = Story("speed", 2, squares=squares)
    events = story.do(0, "sell", square=11)
    assert transfers(events, "building_sale") == [
        {"type": "transfer", "frm": BANK, "to": 0, "amount": 500, "reason": "building_sale"}
    ]
    assert story.square(11)["buildings"] == 0
    assert Story("classic", 2, squares=squares).refused(0, "sell", square=11) == "sell/uneven"


# -- mortgages expire (R9) -----------------------------------------------------------------


def visit_jail(story: Story, seat: int) -> list[dict[str, Any]]:
    """``seat`` plays a turn with no effect: it rolls (4, 5) (+ a scripted 1 on the third
    die from round 7) from just before, to Just visiting."""
    start = 0 if story.state.round >= 7 else 1
    story.override(seats={seat: {"position": start}})
    events = story.do(seat, "roll")
    assert story.position(seat) == 10
    return events


def test_mortgage_reminder_each_turn_then_expiry_after_10_rounds() -> None:
    """R9, R23.6: a mortgage taken in round 5 and not lifted: at the start of each of the owner's
    turns a reminder shows the rounds left (9 in round 6, 1 in round 14); at the start of
    the owner's turn in round 15 it has expired and the property is back with the bank,
    unowned and unmortgaged."""
    story = Story(
        "speed",
        2,
        round=5,
        dice=[(4, 5)] * 6,
        speed_die=["1"] * 6,
        squares={39: {"owner": 0}},
    )
    story.do(0, "mortgage", square=39)
    assert story.square(39)["mortgaged"] and story.square(39)["mortgaged_round"] == 5
    events = visit_jail(story, 0)  # seat 1's turn starts: no reminder, not the owner
    assert of_type(events, "turn_started")[0]["seat"] == 1
    assert of_type(events, "mortgage_reminder") == []
    events = visit_jail(story, 1)  # round 6 begins with seat 0's turn
    assert of_type(events, "mortgage_reminder") == [
        {"type": "mortgage_reminder", "seat": 0, "square": 39, "rounds_left": 9}
    ]
    assert of_type(events, "turn_started")[0]["round"] == 6

    story.override(round=13)
    visit_jail(story, 0)
    events = visit_jail(story, 1)  # round 14 begins
    assert of_type(events, "mortgage_reminder") == [
        {"type": "mortgage_reminder", "seat": 0, "square": 39, "rounds_left": 1}
    ]
    assert story.owner(39) == 0
    visit_jail(story, 0)
    events = visit_jail(story, 1)  # round 15 begins
    assert of_type(events, "mortgage_expired") == [
        {"type": "mortgage_expired", "seat": 0, "square": 39}
    ]
    assert of_type(events, "mortgage_reminder") == []
    assert story.square(39) == {
        "square": 39,
        "owner": None,
        "buildings": 0,
        "mortgaged": False,
        "mortgaged_round": 0,
    }
    assert story.state.round == 15


def test_a_traded_mortgage_keeps_its_expiry_clock() -> None:
    """R9, R10: a mortgaged property traded in Speed keeps its expiry clock: mortgaged in
    round 5 and traded in round 14, it expires at the new owner's turn in round 15."""
    story = Story(
        "speed",
        2,
        round=14,
        dice=[(4, 5)] * 3,
        speed_die=["1"] * 3,
        squares={39: {"owner": 0, "mortgaged": True, "mortgaged_round": 5}},
    )
    story.do(0, "offer", to=1, give_squares=[39], take_cash=1000)
    story.do(1, "accept", offer="o1")
    assert story.owner(39) == 1 and story.square(39)["mortgaged_round"] == 5
    story.do(0, "roll")
    events = [e for e in story.log if e["type"] in ("mortgage_reminder", "mortgage_expired")]
    assert events == [{"type": "mortgage_reminder", "seat": 1, "square": 39, "rounds_left": 1}]
    visit_jail(story, 1)
    visit_jail(story, 0)
    assert story.owner(39) is None
    assert of_type(story.log, "mortgage_expired") == [
        {"type": "mortgage_expired", "seat": 1, "square": 39}
    ]


def test_a_lifted_mortgage_does_not_expire() -> None:
    """R9: only a mortgage *not lifted* within 10 rounds expires."""
    story = Story(
        "speed",
        2,
        round=14,
        first_seat=1,
        dice=[(4, 5)] * 3,
        speed_die=["1"] * 3,
        squares={39: {"owner": 0, "mortgaged": True, "mortgaged_round": 5}},
    )
    visit_jail(story, 1)
    story.do(0, "unmortgage", square=39)
    visit_jail(story, 0)
    visit_jail(story, 1)  # round 15: seat 0's turn starts
    assert of_type(story.log, "mortgage_expired") == []
    assert story.square(39)["owner"] == 0 and not story.square(39)["mortgaged"]


# -- timers, rent tax, round limit ----------------------------------------------------------


def test_speed_turns_last_45_seconds() -> None:
    """R2, R16: a Speed turn has 45 s: at 45 s an unplayed turn is skipped."""
    story = Story("speed", 2)
    assert story.pending == {"kind": "roll", "seat": 0, "deadline": 45.0}
    assert story.wait(44.9) == []
    events = story.wait(45)
    assert of_type(events, "turn_skipped") == [
        {"type": "turn_skipped", "seat": 0, "missed_turns": 1}
    ]
    assert story.pending == {"kind": "roll", "seat": 1, "deadline": 90.0}


@pytest.mark.parametrize(
    ("round_no", "withheld"),
    [(39, 0), (40, 32), (70, 1006), (100, 1980), (150, 1980)],
)
def test_speed_rent_tax_starts_at_round_40_and_is_full_at_100(round_no: int, withheld: int) -> None:
    """R2, R6: Speed's rent tax: share 0.99 * min(1, (r - 40 + 1) / 61) from round 40; the
    tenant pays the whole 2000 (four dealerships), the owner keeps rent - floor(rent*share)."""
    dealers = {sq: {"owner": 1} for sq in (5, 15, 25, 35)}
    story = Story("speed", 2, round=round_no, dice=[(1, 2)], speed_die=["2"], squares=dealers)
    story.do(0, "roll")
    assert story.pending["amount"] == 2000
    events = story.do(0, "pay")
    assert story.cash(0) == 15000 - 2000
    assert story.cash(1) == 15000 + 2000 - withheld
    assert sum(t["amount"] for t in transfers(events, "rent_tax")) == withheld


@pytest.mark.parametrize(("round_no", "finished"), [(299, False), (300, True)])
def test_speed_game_ends_when_round_300_completes(round_no: int, finished: bool) -> None:
    """R2, R20: Speed's round limit is 300."""
    story = Story("speed", 2, round=round_no, dice=[(4, 5)] * 2, speed_die=["1"] * 2)
    visit_jail(story, 0)
    assert not story.state.finished
    visit_jail(story, 1)
    assert story.state.finished is finished
    if finished:
        assert story.view["finish_reason"] == "round_limit"
        assert story.state.round == 300


# -- whole games -------------------------------------------------------------------------


def next_turn_round(steps: list[Step], index: int) -> int:
    """The round of the turn that starts after step ``index``."""
    for _, event, _ in steps[index:]:
        if event["type"] == "turn_started":
            return int(event["round"])
    raise AssertionError("no turn starts after this event")


@pytest.mark.parametrize("seed", [1, 2, 5])  # 2 and 5 see mortgages expire
def test_whole_speed_games_keep_the_speed_rules(seed: int) -> None:
    """R19, R9, R2: over whole games of the simple policy: the third die exactly from
    round 7 and never in jail; triples never count as doubles, white doubles do; X jumps
    land only on properties, on the nearest unowned one ahead when there is one; a
    mortgage expires exactly 10 rounds after it was taken, reminders count down to it;
    the game ends by round 300."""
    final, steps = played("speed", 3, seed)
    assert final.finished and final.round <= 300
    seen = {"third": 0, "jump": 0, "expired": 0, "reminder": 0}
    for index, (before, event, _) in enumerate(steps):
        kind = event["type"]
        if kind == "dice_rolled":
            seat, (a, b), third = event["seat"], event["white"], event["third"]
            jailed = before.seats[seat].in_jail
            assert (third is not None) == (before.round >= 7 and not jailed)
            seen["third"] += third is not None
            triples = third in ("1", "2", "3") and int(third) == a == b
            if triples or jailed or a != b:
                assert event["doubles"] == before.doubles
            else:
                assert event["doubles"] == before.doubles + 1
        elif kind == "moved" and event["how"] == "jump":
            seen["jump"] += 1
            frm, to = event["frm"], event["to"]
            assert to in PROPERTY_SQUARES
            between = [sq for sq in PROPERTY_SQUARES if 0 < (sq - frm) % 40 < (to - frm) % 40]
            assert all(prop(before, sq).owner is not None for sq in between)
            owner = prop(before, to).owner
            assert owner != event["seat"]
            if owner is not None:
                others = [sq for sq in PROPERTY_SQUARES if sq not in (frm, to)]
                assert all(prop(before, sq).owner is not None for sq in others)
        elif kind in ("mortgage_expired", "mortgage_reminder"):
            taken = prop(before, event["square"]).mortgaged_round
            elapsed = next_turn_round(steps, index) - taken
            if kind == "mortgage_expired":
                seen["expired"] += 1
                assert elapsed == 10
            else:
                seen["reminder"] += 1
                assert event["rounds_left"] == 10 - elapsed >= 1
    assert seen["third"] and seen["jump"]  # the games did exercise the third die


def test_teleport_left_to_time_out_resolves_the_square_the_player_stands_on() -> None:
    """R16/R19, R23.5: a teleport choice that times out takes the first option, the square the
    player stands on (no free trip to Start); the roll again still follows."""
    story = Story("speed", 2, round=7, dice=[(3, 3)], speed_die=["3"])
    story.do(0, "roll")
    assert story.pending["kind"] == "teleport"
    events = story.wait(45.0)
    assert of_type(events, "teleported") == [
        {"type": "teleported", "seat": 0, "square": 0, "automatic": True}
    ]
    assert story.cash(0) == 15000 + 3000  # landing on Start, where the seat stood
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 0
