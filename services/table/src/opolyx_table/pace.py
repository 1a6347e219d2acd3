"""How long a bot "thinks" before the table asks it: a pace people can follow.

Bots decide in microseconds; at a table with people that makes a whole round of three bots
happen between two clicks. So the table waits a think time before it sends a bot seat's
decision request: per persona (its play style), about 0.5-1.5 s, shorter for a decision
with nothing to weigh (a roll, a single legal command), and none once only bots are left
in the game. `bot_pace` scales it (1 in play, 0 in tests and simulations).

The time is drawn from a generator seeded by the table, version and seat: the same
decision always gets the same pause (no global randomness; replays and tests can tell).
"""

from __future__ import annotations

import random

from opolyx_contracts.lobby import bot_persona

from opolyx_table.core import Decision
from opolyx_table.table import Table

__all__ = ["STYLE_THINK", "TRIVIAL_FACTOR", "humans_playing", "think_seconds"]

STYLE_THINK: dict[str, tuple[float, float]] = {
    "cautious": (0.9, 1.5),
    "balanced": (0.7, 1.2),
    "builder": (0.7, 1.2),
    "trader": (0.8, 1.4),
    "shark": (0.6, 1.0),
    "gambler": (0.5, 0.9),
}
"""Think time range (seconds) of a style; seats without a persona (the autopilot of a
human seat) think like "balanced"."""
TRIVIAL_FACTOR = 0.4
"""A roll or a decision with one legal command takes this share of the usual time."""


def humans_playing(table: Table) -> bool:
    """Anyone not a bot still in the game (away or on autopilot counts: they may be back)."""
    states = table.state.seats
    return any(not states[i].out for i in table.human_seats)


def think_seconds(table: Table, decision: Decision, scale: float) -> float:
    """The pause before the table asks for this decision (0: ask at once)."""
    if scale <= 0 or not humans_playing(table):
        return 0.0
    persona = bot_persona(table.seats[decision.seat].player_id)
    low, high = STYLE_THINK.get(persona.style if persona else "balanced", STYLE_THINK["balanced"])
    rng = random.Random(f"{table.table_id}:{table.version}:{decision.seat}")
    seconds = rng.uniform(low, high)
    if decision.kind == "roll" or len(decision.legal) <= 1:
        seconds *= TRIVIAL_FACTOR
    return seconds * scale
