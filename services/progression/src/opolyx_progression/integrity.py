"""The alt-farming check (pure): does this game complete a one-way pattern between two players?

Two accounts of one person can pump XP and cards into one of them while every single trade
stays within the fairness rule (R10: the smaller side at least 50% of the larger). What
gives them away is the direction: game after game, value flows from the same giver to the
same receiver, never back. The same holds for games thrown by resigning to the same winner.

A pair is flagged when, over the recent games in which the two met (the window), value
moved from the giver to the receiver in at least `min_games` games (this one included),
amounting to at least `min_value`, and never the other way. Resignations: the giver
resigned and the receiver won in at least `min_games` games, never the other way round.
Players who trade in both directions, or who lose to different people, are not flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Evidence", "FarmingFlag", "FarmingRules", "find_farming"]


@dataclass(frozen=True)
class Evidence:
    """Value that moved between two players in one game (stored for every paying game)."""

    table_id: str
    giver_id: str
    receiver_id: str
    kind: str
    """`trade`, `bankruptcy` or `resignation` (see `stats.PairTransfer`)."""
    value: int


@dataclass(frozen=True)
class FarmingRules:
    min_games: int = 3
    """Games in the same direction that make a pattern."""
    min_value: int = 1000
    """Smallest total value moved one way that counts (trades, bankruptcies)."""
    window_games: int = 20
    """How many of the pair's most recent shared games are looked at."""


@dataclass(frozen=True)
class FarmingFlag:
    kind: str
    """`one_way_value` or `resignation_pattern`."""
    giver_id: str
    receiver_id: str
    games: tuple[str, ...]
    """The games of the pattern, oldest first (this one last)."""
    value: int
    detail: str


def _pattern(
    giver: str,
    receiver: str,
    evidence: Sequence[Evidence],
    kinds: frozenset[str],
) -> tuple[list[str], list[str], int]:
    """(games giver->receiver, games receiver->giver, value giver->receiver) for `kinds`."""
    forward: dict[str, int] = {}
    backward: dict[str, int] = {}
    for item in evidence:
        if item.kind not in kinds:
            continue
        if (item.giver_id, item.receiver_id) == (giver, receiver):
            forward[item.table_id] = forward.get(item.table_id, 0) + item.value
        elif (item.giver_id, item.receiver_id) == (receiver, giver):
            backward[item.table_id] = backward.get(item.table_id, 0) + item.value
    return list(forward), list(backward), sum(forward.values())


def find_farming(
    game: Iterable[Evidence],
    history: Sequence[Evidence],
    rules: FarmingRules | None = None,
) -> list[FarmingFlag]:
    """Flags that this game's evidence completes, given the pairs' earlier evidence.

    `history` holds earlier games' evidence of the pairs in `game`, oldest first (the caller
    bounds it to `rules.window_games` games per pair); `game` is this game's.
    """
    rules = rules or FarmingRules()
    current = list(game)
    flags: list[FarmingFlag] = []
    seen: set[tuple[str, str, str]] = set()
    for item in current:
        pair = (item.giver_id, item.receiver_id)
        value_kinds = frozenset({"trade", "bankruptcy"})
        kind = "resignation_pattern" if item.kind == "resignation" else "one_way_value"
        if (kind, *pair) in seen:
            continue
        seen.add((kind, *pair))
        involved = [e for e in (*history, *current) if {e.giver_id, e.receiver_id} == set(pair)]
        if kind == "one_way_value":
            forward, backward, value = _pattern(*pair, involved, value_kinds)
            if len(forward) >= rules.min_games and not backward and value >= rules.min_value:
                flags.append(
                    FarmingFlag(
                        kind,
                        *pair,
                        tuple(forward),
                        value,
                        f"value moved one way in {len(forward)} games ({value} in total),"
                        " never back",
                    )
                )
        else:
            forward, backward, _ = _pattern(*pair, involved, frozenset({"resignation"}))
            if len(forward) >= rules.min_games and not backward:
                flags.append(
                    FarmingFlag(
                        kind,
                        *pair,
                        tuple(forward),
                        0,
                        f"resigned to the same winner in {len(forward)} games, never the other way",
                    )
                )
    return flags
