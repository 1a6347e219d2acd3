"""Mission and leaderboard periods: the UTC day and the ISO week (pure; time comes in)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

__all__ = ["day_ends_at", "day_key", "iso_week_key", "week_ends_at", "week_start"]


def _utc(at: float) -> datetime:
    return datetime.fromtimestamp(at, tz=UTC)


def day_key(at: float) -> str:
    """`2026-12-01`: the UTC day of the Unix time `at`."""
    return _utc(at).date().isoformat()


def iso_week_key(at: float) -> str:
    """`2026-W49`: the ISO week (Monday first, UTC) of the Unix time `at`."""
    year, week, _ = _utc(at).isocalendar()
    return f"{year}-W{week:02d}"


def week_start(key: str) -> date:
    """The Monday of an ISO week key (`ValueError` for a malformed key)."""
    year, _, week = key.partition("-W")
    return date.fromisocalendar(int(year), int(week), 1)


def day_ends_at(at: float) -> float:
    """Unix time of the next UTC midnight after `at`."""
    day = _utc(at).date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def week_ends_at(at: float) -> float:
    """Unix time of the Monday 00:00 UTC that ends the ISO week of `at`."""
    monday = week_start(iso_week_key(at)) + timedelta(days=7)
    return datetime(monday.year, monday.month, monday.day, tzinfo=UTC).timestamp()
