"""A real game from the rules library, stored as a table would store it: its events parse,
the statistics add up, and the credit's XP is the rules' own `seat_results` XP."""

from __future__ import annotations

import itertools
from typing import Any

import opolyx_rules
from opolyx_contracts.table import GameFinished, SeatResult, TableEvents
from opolyx_progression.crediting import plan_game
from opolyx_progression.stats import game_stats
from opolyx_rules.events import event_to_json
from opolyx_rules.simulate import play_game
from opolyx_testing.finished_games import WEDNESDAY


def stored_batches(
    table_id: str, events: list[dict[str, Any]], size: int = 40
) -> list[TableEvents]:
    batches = []
    for start in range(0, len(events), size):
        chunk = events[start : start + size]
        batches.append(
            TableEvents.model_validate(
                {
                    "table_id": table_id,
                    "source": "rules",
                    "first_seq": start + 1,
                    "last_seq": start + len(chunk),
                    "version": start + len(chunk),
                    "events": [
                        {"seq": start + i + 1, "version": start + i + 1, "event": e}
                        for i, e in enumerate(chunk)
                    ],
                    "at": WEDNESDAY,
                }
            )
        )
    return batches


def test_a_played_game_folds_into_consistent_statistics_and_the_rules_xp() -> None:
    result = play_game("blitz", 4, seed=11, keep_events=True)
    state = result.state
    events = [event_to_json(e) for e in result.events]
    batches = stored_batches("real1", events)
    stats = game_stats(batches, winner=state.winner)
    assert stats.last_seq == len(events)
    rent = {s: 0 for s in range(4)}
    bought = {s: 0 for s in range(4)}
    for e in events:
        if e["type"] == "transfer" and e["reason"] == "rent" and e["to"] >= 0:
            rent[e["to"]] += e["amount"]
        if e["type"] == "property_bought":
            bought[e["seat"]] += 1
        if e["type"] == "auction_ended" and e["winner"] is not None:
            bought[e["winner"]] += 1
    assert sum(rent.values()) > 0 and sum(bought.values()) > 0
    for seat in range(4):
        counted = stats.seats.get(seat)
        assert (counted.rent_collected if counted else 0) == rent[seat]
        assert (counted.properties_bought if counted else 0) == bought[seat]
    assert stats.finish_reason in {"last_standing", "round_limit"}

    results = opolyx_rules.seat_results(state)
    finished = GameFinished(
        table_id="real1",
        room_id=None,
        mode="blitz",
        rules_version="1",
        rounds=state.round,
        winner=state.winner,
        placement=list(state.placement),
        seats=[
            SeatResult(
                seat=r["seat"],
                player_id=f"p{r['seat']}",
                bot=False,
                place=r["place"],
                survived=r["survived"],
                complete_groups=r["complete_groups"],
                xp=r["xp"],
                cash=0,
                net_worth=r["net_worth"],
                properties=0,
                buildings=0,
            )
            for r in results
        ],
        seed=11,
        seed_commitment="0" * 64,
        replay=[],
        last_seq=len(events),
        finished_at=WEDNESDAY,
    )
    plan = plan_game(finished, stats, {}, {}, flagged=False, new_seed=itertools.count().__next__)
    assert any(r["xp"] > 0 for r in results), "a blitz game reaches round 20 and pays"
    assert [c.award.total for c in plan] == [r["xp"] for r in results]
