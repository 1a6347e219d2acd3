"""Whole games played by policies (by default the simple policy of ``policy``): the
source of the speed benchmark, the arena's engine room and a smoke test of the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .commands import Command
from .context import Ctx, UnrecordedCtx
from .engine import apply_on_draft, awaiting, new_game, perform
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
    state per command: each policy is shown that live state and must not keep it. The
    simple policy's commands are carried out unchecked (``engine.perform``): it sends
    only legal commands (tested), and its games are the speed benchmark. Every other
    policy's command is checked by its guard, as ``apply`` checks it."""
    # Without keep_events no one reads the events: the game only applies them.
    ctx = (Ctx if keep_events else UnrecordedCtx)(new_game(mode, seats, seed), 0.0)
    live = ctx.s
    chosen = policies or [simple_policy] * seats
    commands = 0
    turns = 1
    #: every event of the game (none without keep_events); the simple policy's
    #: commands add theirs to it directly
    log: list[Event] = []
    now = 0.0
    while not live.finished:
        if commands >= max_commands:
            raise RuntimeError(f"game {mode}/{seed} did not end after {max_commands} commands")
        pending = live.pending
        seat = pending.seat if pending is not None and not live.offers else awaiting(live)[0]
        now += 1.0
        turn_of = live.current_seat
        policy = chosen[seat]
        if policy is simple_policy:
            ctx.now = now
            ctx.events = log
            perform(ctx, simple_policy(live, seat))
        else:
            log.extend(apply_on_draft(ctx, policy(live, seat), now))
        commands += 1
        # A turn starts exactly when the turn passes to another seat (TurnStarted).
        if live.current_seat != turn_of:
            turns += 1
    return GameResult(ctx.result(), commands, turns, log)
