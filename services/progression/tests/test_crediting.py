"""What a finished game pays each human seat (pure plan; XP from the rules library)."""

from __future__ import annotations

import itertools

from opolyx_progression.cards import draw_from_seed
from opolyx_progression.crediting import plan_game
from opolyx_progression.missions import assigned
from opolyx_progression.stats import game_stats
from opolyx_rules.progression import xp_award, xp_for_level
from opolyx_testing.finished_games import WEDNESDAY, finished_game, seat_result
from progression_builders import EventLog


def seeds() -> itertools.count[int]:
    return itertools.count(1000)


def test_every_human_seat_gets_the_rules_xp_and_bots_get_nothing() -> None:
    game = finished_game(
        "t1",
        [
            seat_result(0, "ann", place=2, groups=1),
            seat_result(1, "bot-ada", place=1, bot=True),
            seat_result(2, "ben", place=3, survived=False),
        ],
    )
    plan = plan_game(game, game_stats([]), {}, {}, flagged=False, new_seed=seeds().__next__)
    assert [c.player_id for c in plan] == ["ann", "ben"]
    ann, ben = plan
    assert ann.award == xp_award(place=2, complete_groups=1, survived=True, final_round=30)
    assert ben.award == xp_award(place=3, complete_groups=0, survived=False, final_round=30)
    assert ann.reason == ben.reason == "paid"


def test_a_game_that_ends_before_round_20_pays_nothing() -> None:
    game = finished_game(
        "t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)], rounds=19
    )
    plan = plan_game(game, game_stats([]), {}, {}, flagged=False, new_seed=seeds().__next__)
    assert all(c.reason == "too_short" and c.xp == 0 and not c.cards for c in plan)
    assert all(not c.missions for c in plan)


def test_a_flagged_game_pays_nothing() -> None:
    game = finished_game("t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)])
    plan = plan_game(game, game_stats([]), {}, {}, flagged=True, new_seed=seeds().__next__)
    assert all(c.reason == "flagged" and c.xp == 0 and not c.cards for c in plan)


def test_a_win_drops_one_card_whose_seed_re_derives_it() -> None:
    game = finished_game("t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)])
    # Both start at level 3 and stay below level 4: no level card, only the win card.
    totals = {"ann": xp_for_level(3), "ben": xp_for_level(3)}
    plan = plan_game(game, game_stats([]), totals, {}, flagged=False, new_seed=seeds().__next__)
    ann, ben = plan
    assert [d.source for d in ann.cards] == ["win"]
    assert ben.cards == ()
    drop = ann.cards[0]
    assert draw_from_seed(drop.seed) == drop.card


def test_crossing_level_2_drops_a_level_card() -> None:
    game = finished_game("t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)])
    plan = plan_game(game, game_stats([]), {}, {}, flagged=False, new_seed=seeds().__next__)
    ben = plan[1]
    assert ben.level_before == 1 and ben.level_after >= 2
    assert [(d.source, d.level) for d in ben.cards] == [("level", 2)]


def test_missions_progress_and_a_completed_one_pays_its_reward() -> None:
    game = finished_game("t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)])
    log = EventLog("t1").buy(0, 1).buy(0, 3).auction_won(0, 6, 700).rent(1, 0, 3000)
    plan = plan_game(
        game, game_stats(log.batches), {}, {}, flagged=False, new_seed=seeds().__next__
    )
    ann = plan[0]
    mine = {a.mission.mission_id for a in assigned("ann", WEDNESDAY)}
    assert {s.mission_id for s in ann.missions} <= mine
    assert ann.missions, "a won game with purchases and rent advances some mission"
    for step in ann.missions:
        assert 0 < step.progress <= step.goal
        assert step.completed_now == (step.progress >= step.goal)
    assert ann.mission_xp == sum(s.reward_xp for s in ann.missions if s.completed_now)
    assert ann.xp == ann.award.total + ann.mission_xp


def test_a_mission_already_complete_pays_no_second_reward() -> None:
    game = finished_game("t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)])
    done = {
        ("ann", a.period_key, a.mission.mission_id): a.mission.goal
        for a in assigned("ann", WEDNESDAY)
    }
    plan = plan_game(game, game_stats([]), {}, done, flagged=False, new_seed=seeds().__next__)
    assert plan[0].missions == () and plan[0].mission_xp == 0
