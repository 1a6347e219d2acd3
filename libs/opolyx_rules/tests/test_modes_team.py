"""Team mode, told as short stories (RULES.md R2, R12, R17, R20).

Two equal sides on alternating seats; allies pay each other no rent and trade without the
fairness rule; a seat that goes out leaves its properties, mortgaged, to the next ally
still in; the last side standing wins, or at the limit the larger combined net worth; the
whole winning side is placed first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from opolyx_rules import RulesError, new_game

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mode_story import BANK, Story, of_type, played, transfers
from opolyx_rules.assets import net_worth


@pytest.mark.parametrize(("seats", "sides"), [(4, [0, 1, 0, 1]), (6, [0, 1, 0, 1, 0, 1])])
def test_team_seats_alternate_between_two_equal_sides(seats: int, sides: list[int]) -> None:
    """R17, R2: 2x2 with four seats, 3x3 with six; seats alternate sides."""
    story = Story("team", seats)
    assert [s["team"] for s in story.view["seats"]] == sides


@pytest.mark.parametrize("seats", [2, 3, 5, 7])
def test_team_needs_four_or_six_seats(seats: int) -> None:
    """R2, R17: Team is played with 4 or 6 seats only."""
    with pytest.raises(RulesError) as error:
        new_game("team", seats, 1)
    assert error.value.code == "setup/seats"
    assert str(seats) in error.value.message


def test_an_ally_pays_no_rent() -> None:
    """R6, R17: seat 0 lands on 39 held by its ally seat 2 (3 buildings): nothing is paid."""
    story = Story(
        "team",
        4,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 36}},
        squares={37: {"owner": 2, "buildings": 3}, 39: {"owner": 2, "buildings": 3}},
    )
    events = story.do(0, "roll")
    assert story.position(0) == 39
    assert of_type(events, "payment_required") == []
    assert transfers(events) == []
    assert story.cash(0) == story.cash(2) == 15000
    assert story.pending["kind"] == "roll" and story.pending["seat"] == 1


def test_an_opponent_pays_rent() -> None:
    """R6, R17: the same landing on a square held by an opponent (seat 1) costs the rent."""
    story = Story(
        "team",
        4,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 36}},
        squares={37: {"owner": 1, "buildings": 3}, 39: {"owner": 1, "buildings": 3}},
    )
    story.do(0, "roll")
    assert story.pending["kind"] == "payment"
    assert story.pending["amount"] == 14000
    assert story.pending["creditors"] == [[1, 14000]]


def test_allies_trade_one_way_without_the_fairness_rule() -> None:
    """R10, R17: allies may give anything, even one-way: seat 0 gives 39 and 5000 to seat 2
    for nothing."""
    story = Story("team", 4, squares={39: {"owner": 0}})
    story.do(0, "offer", to=2, give_squares=[39], give_cash=5000)
    story.do(2, "accept", offer="o1")
    assert story.owner(39) == 2
    assert (story.cash(0), story.cash(2)) == (10000, 20000)


def test_opponents_still_need_a_fair_trade() -> None:
    """R10, R17: the same one-way gift to an opponent breaks the fairness rule."""
    story = Story("team", 4, squares={39: {"owner": 0}})
    assert story.refused(0, "offer", to=1, give_squares=[39]) == "trade/unfair"


def test_a_bankrupt_seats_properties_pass_mortgaged_to_the_next_ally_still_in() -> None:
    """R12, R17: seat 0 goes bankrupt on seat 1's hotel; its buildings are sold, its
    properties mortgaged, its cash paid to seat 1, and the properties pass, still
    mortgaged, to the next ally in seat order still in the game: seat 2 has resigned, so
    seat 4."""
    story = Story(
        "team",
        6,
        dice=[(1, 2)],
        seat_overrides={0: {"position": 36, "cash": 100}},
        squares={
            1: {"owner": 0, "buildings": 1},
            3: {"owner": 0, "buildings": 1},
            5: {"owner": 0},
            37: {"owner": 1},
            39: {"owner": 1, "buildings": 5},
        },
    )
    story.do(2, "resign")
    story.do(0, "roll")
    assert story.pending["kind"] == "payment" and story.pending["amount"] == 20000
    events = story.do(0, "bankrupt")
    # 100 cash + 2 buildings sold at 250 + mortgages 300 + 300 + 1000 = 2200, all to seat 1
    assert transfers(events, "bankruptcy") == [
        {"type": "transfer", "frm": 0, "to": 1, "amount": 2200, "reason": "bankruptcy"}
    ]
    assert of_type(events, "seat_went_out") == [
        {"type": "seat_went_out", "seat": 0, "how": "bankrupt", "heir": 4}
    ]
    for sq in (1, 3, 5):
        assert story.square(sq) | {"mortgaged_round": 0} == {
            "square": sq,
            "owner": 4,
            "buildings": 0,
            "mortgaged": True,
            "mortgaged_round": 0,
        }
    assert story.cash(0) == 0 and story.seat(0)["out"]
    assert story.cash(4) == 15000


def test_a_resigning_seats_properties_pass_to_the_next_ally_in_seat_order() -> None:
    """R12, R17: seat 4 resigns; its allies are 0 and 2; the next in seat order after 4
    (wrapping round the table) is seat 0. Nothing is paid to anyone."""
    story = Story("team", 6, squares={16: {"owner": 4}, 18: {"owner": 4}, 19: {"owner": 4}})
    events = story.do(4, "resign")
    assert of_type(events, "seat_went_out")[0]["heir"] == 0
    assert [story.owner(sq) for sq in (16, 18, 19)] == [0, 0, 0]
    assert all(story.square(sq)["mortgaged"] for sq in (16, 18, 19))
    assert [story.cash(s) for s in (0, 1, 2, 3, 5)] == [15000] * 5
    assert not any(t["to"] >= 0 for t in transfers(events) if t["frm"] == 4)


def test_the_last_side_standing_wins_and_is_placed_first() -> None:
    """R17, R20: when both seats of side 1 are out, side 0 wins; its seats are placed
    first (by net worth), then the other side's seats, the later out ranking higher."""
    story = Story("team", 4, seat_overrides={2: {"cash": 20000}})
    story.do(1, "resign")
    assert not story.state.finished
    events = story.do(3, "resign")
    [finished] = of_type(events, "game_finished")
    assert finished["reason"] == "last_standing"
    assert finished["winner"] == 2
    assert finished["placement"] == [2, 0, 3, 1]
    assert story.view["winner"] == 2


def test_at_the_limit_the_larger_combined_net_worth_wins() -> None:
    """R17, R20: at the round limit side 0 (25000 + 25000) beats side 1 (40000 + 5000)
    although seat 1 is the richest seat; side 0 is placed first."""
    story = Story(
        "team",
        4,
        round=500,
        dice=[(4, 6)] * 4,
        seat_overrides={
            0: {"cash": 25000},
            1: {"cash": 40000},
            2: {"cash": 25000},
            3: {"cash": 5000},
        },
    )
    for seat in range(4):
        story.do(seat, "roll")
    assert story.state.finished
    assert story.view["finish_reason"] == "round_limit"
    assert story.view["placement"] == [0, 2, 1, 3]
    assert story.view["winner"] == 0


def test_every_member_of_the_winning_side_is_placed_first_even_one_that_went_out() -> None:
    """R20: "In Team mode every member of the winning side is placed first": seat 2 of
    the winning side resigned, yet it is placed ahead of the losing side."""
    story = Story(
        "team",
        4,
        round=500,
        dice=[(4, 6)] * 3,
        seat_overrides={0: {"cash": 60000}, 1: {"cash": 20000}, 3: {"cash": 20000}},
    )
    story.do(2, "resign")
    for seat in (0, 1, 3):
        story.do(seat, "roll")
    assert story.state.finished
    assert story.view["placement"] == [0, 2, 1, 3]


def test_a_resigning_seats_cash_is_not_handed_to_its_ally() -> None:
    """R12: a resigning seat's cash is not handed to its ally: only its properties pass."""
    story = Story("team", 4, seat_overrides={0: {"cash": 7000}}, squares={39: {"owner": 0}})
    events = story.do(0, "resign")
    assert story.cash(2) == 15000
    assert story.owner(39) == 2
    assert [t for t in transfers(events) if t["to"] not in (BANK, 0)] == []


@pytest.mark.parametrize(("seats", "seed"), [(4, 1), (4, 2), (6, 3)])
def test_whole_team_games_keep_the_team_rules(seats: int, seed: int) -> None:
    """R17, R12, R20: over whole games: rent never flows between allies; a seat going out
    leaves its properties, mortgaged and without buildings, to the next ally in seat
    order still in (or the bank); the winning side is the last standing or has the larger
    combined net worth, and all its seats are placed first."""
    final, steps = played("team", seats, seed)
    team = [s.seat % 2 for s in final.seats]  # R17: seats alternate sides
    assert team == [s.team for s in final.seats]
    rents = 0
    for before, event, after in steps:
        kind = event["type"]
        if kind == "transfer" and event["reason"] == "rent":
            rents += 1
            assert team[event["frm"]] != team[event["to"]]
        elif kind == "seat_went_out":
            seat, heir = event["seat"], event["heir"]
            order = [(seat + k) % seats for k in range(1, seats)]
            allies_in = [s for s in order if team[s] == team[seat] and not before.seats[s].out]
            assert heir == (allies_in[0] if allies_in else None)
            for p_before, p_after in zip(before.props, after.props, strict=True):
                if p_before.owner == seat:
                    assert p_after.owner == heir
                    if heir is not None:
                        assert p_after.mortgaged and p_after.buildings == 0
        elif kind == "game_finished":
            placement, side = event["placement"], team[event["winner"]]
            assert {team[s] for s in placement[: seats // 2]} == {side}
            alive = [s for s in before.seats if not s.out]
            if event["reason"] == "round_limit":
                worth = {
                    t: sum(net_worth(before, s.seat) for s in alive if s.team == t) for t in (0, 1)
                }
                assert worth[side] >= worth[1 - side]
            else:
                assert {s.team for s in alive} == {side}
    assert final.finished and rents
