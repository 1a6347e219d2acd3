"""Mission assignment and periods (pure)."""

from __future__ import annotations

from opolyx_progression.missions import DAILY_COUNT, WEEKLY_COUNT, assigned, seat_metrics
from opolyx_progression.periods import day_ends_at, day_key, iso_week_key, week_ends_at
from opolyx_testing.finished_games import WEDNESDAY

DAY = 86400.0


def test_each_player_gets_three_daily_and_three_weekly_missions() -> None:
    missions = assigned("alice", WEDNESDAY)
    assert [a.mission.period for a in missions].count("daily") == DAILY_COUNT
    assert [a.mission.period for a in missions].count("weekly") == WEEKLY_COUNT
    assert len({a.mission.mission_id for a in missions}) == DAILY_COUNT + WEEKLY_COUNT


def test_assignment_is_deterministic_and_differs_between_players_and_days() -> None:
    ids = [a.mission.mission_id for a in assigned("alice", WEDNESDAY)]
    assert ids == [a.mission.mission_id for a in assigned("alice", WEDNESDAY + 3600)]
    players = {tuple(a.mission.mission_id for a in assigned(f"p{i}", WEDNESDAY)) for i in range(20)}
    assert len(players) > 1
    days = {
        tuple(a.mission.mission_id for a in assigned("alice", WEDNESDAY + i * DAY)[:DAILY_COUNT])
        for i in range(7)
    }
    assert len(days) > 1


def test_weekly_missions_stay_the_same_through_an_iso_week() -> None:
    monday = WEDNESDAY - 2 * DAY - 12 * 3600  # 2026-11-30 00:00 UTC
    week = [a.mission.mission_id for a in assigned("bob", monday)[DAILY_COUNT:]]
    sunday_night = monday + 7 * DAY - 1
    assert week == [a.mission.mission_id for a in assigned("bob", sunday_night)[DAILY_COUNT:]]
    assert iso_week_key(monday) == iso_week_key(sunday_night) == "2026-W49"
    assert iso_week_key(monday + 7 * DAY) == "2026-W50"


def test_periods_are_utc_days_and_iso_weeks() -> None:
    assert day_key(WEDNESDAY) == "2026-12-02"
    assert day_ends_at(WEDNESDAY) == WEDNESDAY + 12 * 3600
    assert week_ends_at(WEDNESDAY) == WEDNESDAY + 4 * DAY + 12 * 3600
    # 2027-01-01 is a Friday of ISO week 2026-W53.
    assert iso_week_key(1798761600.0) == "2026-W53"


def test_seat_metrics_count_a_speed_game_and_a_team_win() -> None:
    common = {
        "complete_groups": 1,
        "properties_bought": 4,
        "auctions_won": 1,
        "rent_collected": 900,
        "buildings_built": 2,
        "trades_completed": 0,
    }
    speed = seat_metrics(mode="speed", place=2, **common)
    assert speed["speed_games"] == 1 and speed["games_won"] == 0 and speed["team_wins"] == 0
    team = seat_metrics(mode="team", place=1, **common)
    assert team["team_wins"] == 1 and team["games_won"] == 1 and team["speed_games"] == 0
