"""Practice games (forked from a replay, issue 16) pay no XP, cards or mission steps,
however long they last."""

from __future__ import annotations

import itertools

from opolyx_progression import reads
from opolyx_progression.crediting import pays, plan_game
from opolyx_progression.stats import game_stats
from opolyx_progression.store import CreditStore
from opolyx_testing.finished_games import finished_game, seat_result
from sqlalchemy.ext.asyncio import AsyncEngine


def test_a_long_practice_game_pays_nothing_and_the_same_game_played_for_real_pays() -> None:
    seeds = itertools.count(1)
    real = finished_game(
        "t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)], rounds=400
    )
    practice = real.model_copy(update={"practice": True})
    assert pays(real) and not pays(practice)
    plan = plan_game(practice, game_stats([]), {}, {}, flagged=False, new_seed=seeds.__next__)
    assert [c.player_id for c in plan] == ["ann", "ben"]
    assert all(c.xp == 0 and not c.cards and not c.missions for c in plan)
    # the reason says why: practice, not "too short" (the post-game panel shows it)
    assert all(c.reason == "practice" for c in plan)
    paid = plan_game(real, game_stats([]), {}, {}, flagged=False, new_seed=seeds.__next__)
    assert all(c.xp > 0 for c in paid)


def test_a_short_practice_game_says_practice_too() -> None:
    game = finished_game(
        "t1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)], rounds=3
    )
    practice = game.model_copy(update={"practice": True})
    plan = plan_game(practice, game_stats([]), {}, {}, flagged=False, new_seed=iter([]).__next__)
    assert [c.reason for c in plan] == ["practice", "practice"]


async def test_the_stored_credit_of_a_practice_game_says_practice(engine: AsyncEngine) -> None:
    store = CreditStore(engine, new_seed=itertools.count(1).__next__)
    game = finished_game(
        "p1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2)], rounds=400
    )
    outcome = await store.credit(game.model_copy(update={"practice": True}), game_stats([]))
    assert outcome is not None and outcome.reason == "practice"
    async with engine.connect() as conn:
        reply = await reads.game_credit(conn, "ann", "p1")
    assert reply.credit is not None
    assert reply.credit.reason == "practice" and not reply.credit.paid and reply.credit.xp == 0
