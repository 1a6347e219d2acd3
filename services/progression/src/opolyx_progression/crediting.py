"""What one finished game pays each human seat (pure): XP, missions, levels and card drops.

XP, levels, ranks and card drops come from the rules library (`opolyx_rules.progression`,
R20) and nothing here recomputes them; this module only puts the pieces together: which
seats are paid (humans; not before round 20; not in a flagged game), which missions the
game advances, which levels are crossed and which cards they drop, each with a new seed.
The store applies the plan in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from opolyx_contracts.table import GameFinished
from opolyx_rules.progression import (
    MIN_PAYING_ROUND,
    Card,
    XpAward,
    card_drop_levels,
    cards_for_game,
    level_for_xp,
    xp_award,
)

from opolyx_progression.cards import SeedSource, draw_from_seed
from opolyx_progression.missions import assigned, seat_metrics
from opolyx_progression.stats import GameStats, SeatStats

__all__ = ["CardDrop", "MissionStep", "Reason", "SeatCredit", "game_reason", "pays", "plan_game"]

Reason = Literal["paid", "too_short", "practice", "flagged"]
_NO_XP = XpAward(placement=0, groups=0, survival=0)


@dataclass(frozen=True)
class CardDrop:
    source: Literal["level", "win"]
    level: int | None
    seed: int
    card: Card


@dataclass(frozen=True)
class MissionStep:
    mission_id: str
    period_key: str
    goal: int
    progress: int
    """Progress after this game (capped at the goal)."""
    completed_now: bool
    reward_xp: int
    """Paid only when `completed_now`."""


@dataclass(frozen=True)
class SeatCredit:
    player_id: str
    seat: int
    place: int
    reason: Reason
    award: XpAward
    missions: tuple[MissionStep, ...]
    total_before: int
    cards: tuple[CardDrop, ...] = field(default=())

    @cached_property
    def mission_xp(self) -> int:
        return sum(step.reward_xp for step in self.missions if step.completed_now)

    @cached_property
    def xp(self) -> int:
        """All XP this game credits: the game's own (R20) plus completed missions."""
        return self.award.total + self.mission_xp

    @property
    def total_after(self) -> int:
        return self.total_before + self.xp

    @cached_property
    def level_before(self) -> int:
        return level_for_xp(self.total_before)

    @cached_property
    def level_after(self) -> int:
        return level_for_xp(self.total_after)


def pays(finished: GameFinished) -> bool:
    """R20: a game that ends before round 20 pays nothing; nor does a practice game (one
    forked from a replay, issue 16), however long."""
    return game_reason(finished, flagged=False) == "paid"


def game_reason(finished: GameFinished, *, flagged: bool) -> Reason:
    """Why the game pays (`paid`) or what it pays nothing for: the integrity check flagged
    it, it is a practice game (whatever its length: the player is told that, not that it
    was short), or it ended before round 20 (R20)."""
    if flagged:
        return "flagged"
    if finished.practice:
        return "practice"
    return "paid" if finished.rounds >= MIN_PAYING_ROUND else "too_short"


def plan_game(
    finished: GameFinished,
    stats: GameStats,
    totals: Mapping[str, int],
    progress: Mapping[tuple[str, str, str], int],
    *,
    flagged: bool,
    new_seed: SeedSource,
) -> list[SeatCredit]:
    """The credit of every human seat of `finished`.

    `totals`: each player's total XP before this game (absent: 0); `progress`: current
    progress by (player, period key, mission id); `flagged`: the integrity check flagged
    the game (nothing is paid). Seeds for card drops come from `new_seed`, in seat order.
    """
    reason = game_reason(finished, flagged=flagged)
    final_round = max(1, finished.rounds)
    credits: list[SeatCredit] = []
    for result in sorted(finished.seats, key=lambda s: s.seat):
        if result.bot:
            continue
        before = totals.get(result.player_id, 0)
        if reason != "paid":
            credits.append(
                SeatCredit(result.player_id, result.seat, result.place, reason, _NO_XP, (), before)
            )
            continue
        award = xp_award(
            place=result.place,
            complete_groups=result.complete_groups,
            survived=result.survived,
            final_round=final_round,
        )
        seat_stats = stats.seats.get(result.seat, SeatStats())
        metrics = seat_metrics(
            mode=finished.mode,
            place=result.place,
            complete_groups=result.complete_groups,
            properties_bought=seat_stats.properties_bought,
            auctions_won=seat_stats.auctions_won,
            rent_collected=seat_stats.rent_collected,
            buildings_built=seat_stats.buildings_built,
            trades_completed=seat_stats.trades_completed,
        )
        steps: list[MissionStep] = []
        for assignment in assigned(result.player_id, finished.finished_at):
            mission = assignment.mission
            gained = metrics[mission.metric]
            old = progress.get((result.player_id, assignment.period_key, mission.mission_id), 0)
            if gained <= 0 or old >= mission.goal:
                continue
            new = min(mission.goal, old + gained)
            done = new >= mission.goal
            steps.append(
                MissionStep(
                    mission.mission_id,
                    assignment.period_key,
                    mission.goal,
                    new,
                    done,
                    mission.reward_xp if done else 0,
                )
            )
        credit = SeatCredit(
            result.player_id, result.seat, result.place, reason, award, tuple(steps), before
        )
        drops = [
            CardDrop("level", level, seed, draw_from_seed(seed))
            for level in card_drop_levels(credit.level_before, credit.level_after)
            for seed in (new_seed(),)
        ]
        for _ in range(cards_for_game(won=result.place == 1, final_round=final_round)):
            seed = new_seed()
            drops.append(CardDrop("win", None, seed, draw_from_seed(seed)))
        credits.append(
            SeatCredit(
                result.player_id,
                result.seat,
                result.place,
                reason,
                award,
                tuple(steps),
                before,
                tuple(drops),
            )
        )
    return credits
