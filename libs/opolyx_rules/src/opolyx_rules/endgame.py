"""The end of the game, the winner and the placement (R17, R20)."""

from __future__ import annotations

from .assets import net_worth
from .context import Ctx
from .events import GameFinished
from .state import State


def active_seats(state: State) -> list[int]:
    return [s.seat for s in state.seats if not s.out]


def finish_if_decided(ctx: Ctx) -> None:
    """End the game when one seat (Team: one side) is left."""
    s = ctx.s
    if s.finished:
        return
    alive = active_seats(s)
    sides = {s.seats[seat].team for seat in alive} if s.config.teams else set(alive)
    if len(sides) <= 1:
        finish(ctx, "last_standing")


def finish(ctx: Ctx, reason: str) -> None:
    placement = placement_order(ctx.s)
    ctx.emit(GameFinished, placement[0], placement, reason, ctx.s.round)


def placement_order(state: State) -> tuple[int, ...]:
    """Winner first; then survivors by net worth (ties: lower seat); then seats that went
    out, the later out ranking higher. Team: the whole winning side is placed first."""
    worth = {seat.seat: net_worth(state, seat.seat) for seat in state.seats}

    def rank(seat: int) -> tuple[int, int, int]:
        st = state.seats[seat]
        if st.out:
            return (1, -st.out_order, seat)
        return (0, -worth[seat], seat)

    ordered = sorted(range(len(state.seats)), key=rank)
    if not state.config.teams:
        return tuple(ordered)
    winning_team = _winning_team(state, worth)
    first = [seat for seat in ordered if state.seats[seat].team == winning_team]
    rest = [seat for seat in ordered if state.seats[seat].team != winning_team]
    return tuple(first + rest)


def _winning_team(state: State, worth: dict[int, int]) -> int | None:
    alive_teams = {s.team for s in state.seats if not s.out}
    if len(alive_teams) == 1:
        return next(iter(alive_teams))
    totals: dict[int | None, int] = {}
    for seat in state.seats:
        if not seat.out:
            totals[seat.team] = totals.get(seat.team, 0) + worth[seat.seat]
    # Ties go to the side of the lower seat number (seat 0's side, team 0).
    return max(sorted(totals, key=lambda t: t or 0), key=lambda t: totals[t])
