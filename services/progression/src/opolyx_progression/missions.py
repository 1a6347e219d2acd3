"""Daily and weekly missions: the catalogue, who gets which, and progress (pure).

Each player gets `DAILY_COUNT` missions per UTC day and `WEEKLY_COUNT` per ISO week, picked
from the catalogue by a hash of (player id, period): the same everywhere, every time, with
nothing stored until the player makes progress. A game counts towards the missions of the
periods in which it finished. Only games that pay (R20: round 20 or later, not flagged)
count, so a mission cannot be farmed with quick games.

Mission rewards are this catalogue's data; the XP of a game itself comes from the rules
library only (`opolyx_rules.progression`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from opolyx_progression.periods import day_ends_at, day_key, iso_week_key, week_ends_at

__all__ = [
    "CATALOGUE",
    "DAILY_COUNT",
    "WEEKLY_COUNT",
    "Assignment",
    "Metric",
    "Mission",
    "assigned",
    "seat_metrics",
]

Metric = Literal[
    "games_finished",
    "games_won",
    "properties_bought",
    "groups_completed",
    "auctions_won",
    "rent_collected",
    "buildings_built",
    "trades_completed",
    "speed_games",
    "team_wins",
]
Period = Literal["daily", "weekly"]


@dataclass(frozen=True)
class Mission:
    mission_id: str
    period: Period
    metric: Metric
    goal: int
    reward_xp: int


CATALOGUE: tuple[Mission, ...] = (
    Mission("daily.finish_game", "daily", "games_finished", 1, 40),
    Mission("daily.win_game", "daily", "games_won", 1, 100),
    Mission("daily.buy_properties", "daily", "properties_bought", 5, 60),
    Mission("daily.win_auction", "daily", "auctions_won", 1, 60),
    Mission("daily.collect_rent", "daily", "rent_collected", 3000, 60),
    Mission("daily.build", "daily", "buildings_built", 4, 60),
    Mission("daily.trade", "daily", "trades_completed", 1, 50),
    Mission("weekly.win_games", "weekly", "games_won", 5, 400),
    Mission("weekly.complete_group", "weekly", "groups_completed", 3, 300),
    Mission("weekly.collect_rent", "weekly", "rent_collected", 30000, 300),
    Mission("weekly.win_auctions", "weekly", "auctions_won", 5, 250),
    Mission("weekly.play_speed", "weekly", "speed_games", 3, 250),
    Mission("weekly.team_win", "weekly", "team_wins", 1, 300),
    Mission("weekly.finish_games", "weekly", "games_finished", 10, 300),
)
BY_ID: dict[str, Mission] = {m.mission_id: m for m in CATALOGUE}
DAILY_COUNT = 3
WEEKLY_COUNT = 3


@dataclass(frozen=True)
class Assignment:
    mission: Mission
    period_key: str
    ends_at: float


def _pick(player_id: str, period_key: str, pool: tuple[Mission, ...], count: int) -> list[Mission]:
    """`count` missions of `pool`, ordered by a hash of (player, period, mission)."""

    def order(mission: Mission) -> bytes:
        return hashlib.sha256(f"{player_id}\0{period_key}\0{mission.mission_id}".encode()).digest()

    return sorted(pool, key=order)[:count]


_DAILY = tuple(m for m in CATALOGUE if m.period == "daily")
_WEEKLY = tuple(m for m in CATALOGUE if m.period == "weekly")


@functools.lru_cache(maxsize=65536)
def _picks(player_id: str, day: str, week: str) -> tuple[tuple[Mission, ...], tuple[Mission, ...]]:
    # Cached: crediting asks for every seat of every game, and the answer only changes
    # with the period (profiled: a third of a game's credit before the cache).
    return (
        tuple(_pick(player_id, day, _DAILY, DAILY_COUNT)),
        tuple(_pick(player_id, week, _WEEKLY, WEEKLY_COUNT)),
    )


def assigned(player_id: str, at: float) -> list[Assignment]:
    """The missions of `player_id` for the day and the week of the Unix time `at`."""
    day, week = day_key(at), iso_week_key(at)
    daily, weekly = _picks(player_id, day, week)
    day_end, week_end = day_ends_at(at), week_ends_at(at)
    return [
        *(Assignment(m, day, day_end) for m in daily),
        *(Assignment(m, week, week_end) for m in weekly),
    ]


def seat_metrics(
    *,
    mode: str,
    place: int,
    complete_groups: int,
    properties_bought: int,
    auctions_won: int,
    rent_collected: int,
    buildings_built: int,
    trades_completed: int,
) -> Mapping[Metric, int]:
    """What one finished (paying) game adds to each mission metric for one seat."""
    won = place == 1
    return {
        "games_finished": 1,
        "games_won": int(won),
        "properties_bought": properties_bought,
        "groups_completed": complete_groups,
        "auctions_won": auctions_won,
        "rent_collected": rent_collected,
        "buildings_built": buildings_built,
        "trades_completed": trades_completed,
        "speed_games": int(mode == "speed"),
        "team_wins": int(mode == "team" and won),
    }
