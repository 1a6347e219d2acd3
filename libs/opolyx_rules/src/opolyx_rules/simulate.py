"""Whole games played by policies (by default the simple policy of ``policy``): the
source of the speed benchmark, the arena's engine room and a smoke test of the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .commands import Command
from .context import Ctx
from .engine import apply_on_draft, awaiting, new_game
from .events import Event
from .policy import RESERVE, simple_policy
from .state import State

__all__ = ["RESERVE", "GameResult", "Policy", "play_game", "simple_policy"]

Policy = Callable[[State, int], Command]


@dataclass(slots=True)
class GameResult:
    state: State
    commands: int
    player_turns: int
    events: list[Event] = field(default_factory=list)


def play_game(
    mode: str,
    seats: int,
    seed: int,
    policies: list[Policy] | None = None,
    *,
    keep_events: bool = False,
    max_commands: int = 200_000,
) -> GameResult:
    """Play one game to its end; every command is sent one second after the previous,
    so no timer fires (the turn limits are far longer).

    The game is played on one private draft (``engine.apply_on_draft``) instead of a new
    state per command: each policy is shown that live state and must not keep it."""
    ctx = Ctx(new_game(mode, seats, seed), 0.0)
    live = ctx.s
    chosen = policies or [simple_policy] * seats
    commands = 0
    turns = 1
    log: list[Event] = []
    now = 0.0
    while not live.finished:
        if commands >= max_commands:
            raise RuntimeError(f"game {mode}/{seed} did not end after {max_commands} commands")
        pending = live.pending
        seat = pending.seat if pending is not None and not live.offers else awaiting(live)[0]
        now += 1.0
        turn_of = live.current_seat
        events = apply_on_draft(ctx, chosen[seat](live, seat), now)
        commands += 1
        # A turn starts exactly when the turn passes to another seat (TurnStarted).
        if live.current_seat != turn_of:
            turns += 1
        if keep_events:
            log.extend(events)
    return GameResult(ctx.result(), commands, turns, log)
