"""What the GAMES stream says about a finished game and about seats that went out.

Scores come from the rules library (net worth, complete groups, XP); the public view
only supplies what is plainly visible (cash, what a seat holds, placement).
"""

from __future__ import annotations

import time
from typing import Any

import opolyx_rules
from opolyx_contracts import game
from opolyx_contracts.subjects import TABLE_EVENTS_STREAM, table_events
from opolyx_contracts.table import (
    EventsReference,
    GameFinished,
    SeatOut,
    SeatResult,
    SeatSpec,
    TableEvents,
)

from opolyx_table.table import Table

__all__ = ["game_finished", "replay_lines", "seat_out", "seat_out_reason"]


def _seat_holdings(view: dict[str, Any], seat: int) -> tuple[int, int]:
    """(properties, buildings) a seat holds, counted from the public view."""
    owned = [entry for entry in view.get("squares", []) if entry.get("owner") == seat]
    return len(owned), sum(int(entry.get("buildings", 0) or 0) for entry in owned)


def replay_lines(
    mode: str, seats: list[SeatSpec], seed: int, batches: list[TableEvents]
) -> list[dict[str, Any]]:
    """An `opolyx-rules replay` scenario that reproduces a game from its seed and its
    stored events messages (the commands in them, each at its game time)."""
    cards = {
        str(index): {str(sq): pct for sq, pct in seat.boosts.items()}
        for index, seat in enumerate(seats)
        if seat.boosts
    }
    setup: dict[str, Any] = {"mode": mode, "seats": len(seats), "seed": seed}
    if cards:
        setup["cards"] = cards
    lines: list[dict[str, Any]] = [{"setup": setup}]
    last_at = 0.0
    for batch in batches:
        if batch.source != "rules" or batch.command is None:
            continue
        last_at = max(last_at, batch.command_at or last_at)
        if batch.command.type != "timeout":
            lines.append({**batch.command.model_dump(mode="json"), "at": batch.command_at})
    # Timeouts are not lines: replay fires every deadline up to the next line's time.
    lines.append({"type": "wait", "at": last_at})
    return lines


def game_finished(table: Table, view: dict[str, Any], first_stream_seq: int) -> GameFinished:
    results: list[SeatResult] = []
    # Places (Team: the whole winning side first), XP and its inputs come from the rules.
    for result in opolyx_rules.seat_results(table.state):
        seat = int(result["seat"])
        properties, buildings = _seat_holdings(view, seat)
        results.append(
            SeatResult(
                seat=seat,
                player_id=table.seats[seat].player_id,
                bot=table.seats[seat].bot,
                place=result["place"],
                survived=result["survived"],
                complete_groups=result["complete_groups"],
                xp=result["xp"],
                cash=int(view["seats"][seat]["cash"]),
                net_worth=result["net_worth"],
                properties=properties,
                buildings=buildings,
            )
        )
    winner = view.get("winner")
    return GameFinished(
        table_id=table.table_id,
        room_id=table.room_id,
        mode=table.mode,
        rules_version=table.rules_version,
        rounds=int(view.get("round", 0) or 0),
        winner=None if winner is None else int(winner),
        placement=[int(seat) for seat in view.get("placement") or []],
        seats=results,
        seed=table.seed,
        seed_commitment=table.seed_commitment,
        events=EventsReference(
            stream=TABLE_EVENTS_STREAM,
            subject=table_events(table.table_id),
            first_stream_seq=first_stream_seq,
            last_stream_seq=table.stream_seq,
        ),
        last_seq=table.seq,
        finished_at=time.time(),
        practice=table.fork is not None,
    )


def seat_out_reason(events: list[TableEvents], seat: int, by_timeout: bool) -> str:
    """Why a seat went out, from the rules' `seat_went_out` event (`how`)."""
    for batch in events:
        for record in batch.events:
            event = record.event
            if not isinstance(event, game.SeatWentOut) or event.seat != seat:
                continue
            if event.how == "bankrupt":
                return "bankrupt"
            if event.how == "resigned":
                # Missed turns resign a seat by itself (R16): a timeout, not a choice.
                return "timeout" if by_timeout else "resigned"
    return "out"


def seat_out(table: Table, seat: int, reason: str, view: dict[str, Any]) -> SeatOut:
    return SeatOut(
        table_id=table.table_id,
        room_id=table.room_id,
        seat=seat,
        player_id=table.seats[seat].player_id,
        reason=reason,  # type: ignore[arg-type]
        round=int(view.get("round", 0) or 0),
        at=time.time(),
    )
