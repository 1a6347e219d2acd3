"""Practice games (forked from a replay, issue 16) pay no XP, cards or mission steps,
however long they last."""

from __future__ import annotations

import itertools

from opolyx_progression.crediting import pays, plan_game
from opolyx_progression.stats import game_stats

from .progression_builders import finished, seat


def test_a_long_practice_game_pays_nothing_and_the_same_game_played_for_real_pays() -> None:
    seeds = itertools.count(1)
    real = finished("t1", [seat(0, "ann", place=1), seat(1, "ben", place=2)], rounds=400)
    practice = real.model_copy(update={"practice": True})
    assert pays(real) and not pays(practice)
    plan = plan_game(practice, game_stats([]), {}, {}, flagged=False, new_seed=seeds.__next__)
    assert [c.player_id for c in plan] == ["ann", "ben"]
    assert all(c.xp == 0 and not c.cards and not c.missions for c in plan)
    paid = plan_game(real, game_stats([]), {}, {}, flagged=False, new_seed=seeds.__next__)
    assert all(c.xp > 0 for c in paid)
