"""Finished games (`GameFinished`) as a table publishes them, for the tests of the services
that read them (progression, lobby, bots, the gateway's profile routes, the browser's
profile): one builder from the contract models instead of one per test file. No events
are implied: a game built here has `last_seq` 0 unless a test stores events for it."""

from __future__ import annotations

from collections.abc import Sequence

from opolyx_contracts.table import GameFinished, SeatResult

__all__ = ["WEDNESDAY", "finished_game", "seat_result", "two_player_game"]

WEDNESDAY = 1796212800.0
"""2026-12-02 12:00 UTC, a Wednesday of ISO week 2026-W49: a finishing time far from any
day's or week's edge, so the missions of a test's game are those of one day and week."""


def seat_result(
    seat: int,
    player_id: str,
    *,
    place: int,
    bot: bool = False,
    survived: bool = True,
    groups: int = 0,
) -> SeatResult:
    return SeatResult(
        seat=seat,
        player_id=player_id,
        bot=bot,
        place=place,
        survived=survived,
        complete_groups=groups,
        cash=1000,
        net_worth=5000,
        properties=3,
        buildings=0,
    )


def finished_game(
    table_id: str,
    seats: Sequence[SeatResult],
    *,
    rounds: int = 30,
    mode: str = "classic",
    at: float = WEDNESDAY,
    last_seq: int = 0,
    room_id: str | None = None,
    placement: Sequence[int] | None = None,
) -> GameFinished:
    """`placement` (seats in finishing order) follows the seats' places unless given; the
    winner is its first seat."""
    order = (
        list(placement)
        if placement is not None
        else [s.seat for s in sorted(seats, key=lambda s: s.place)]
    )
    return GameFinished(
        table_id=table_id,
        room_id=room_id,
        mode=mode,
        rules_version="1.0",
        rounds=rounds,
        winner=order[0] if order else None,
        placement=order,
        seats=list(seats),
        seed=7,
        seed_commitment="0" * 64,
        replay=[],
        last_seq=last_seq,
        finished_at=at,
    )


def two_player_game(
    table_id: str, winner: str, loser: str, *, rounds: int = 30, at: float = WEDNESDAY
) -> GameFinished:
    """`winner` beat `loser` (who went bankrupt) in a `rounds`-round classic game."""
    return finished_game(
        table_id,
        [seat_result(0, winner, place=1), seat_result(1, loser, place=2, survived=False)],
        rounds=rounds,
        at=at,
    )
