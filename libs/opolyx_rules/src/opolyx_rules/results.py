"""The result of a finished game per seat: place, XP inputs and XP (R20).

The table service publishes this with ``opolyx.game.finished``; the progression service
credits it. Both take it from here so that nothing about XP is computed twice.
"""

from __future__ import annotations

from typing import Any

from .assets import complete_groups, net_worth
from .progression import cards_for_game, xp_award
from .state import State


def places(state: State) -> dict[int, int]:
    """Seat -> place (1 = first). Team mode: every member of the winning side is 1st and
    the other side follows from 2nd in placement order (R20)."""
    if not state.finished:
        raise ValueError("the game is not finished")
    order = state.placement
    if not state.config.teams or state.winner is None:
        return {seat: index + 1 for index, seat in enumerate(order)}
    winning_team = state.seats[state.winner].team
    result: dict[int, int] = {}
    next_place = 2
    for seat in order:
        if state.seats[seat].team == winning_team:
            result[seat] = 1
        else:
            result[seat] = next_place
            next_place += 1
    return result


def winning_side(state: State) -> int | None:
    """Team mode (R17): the side (0 or 1) of the winner of a finished game; None in other
    modes and while the game runs."""
    if not state.finished or not state.config.teams or state.winner is None:
        return None
    return state.seats[state.winner].team


def seat_results(state: State) -> list[dict[str, Any]]:
    """Per seat, in seat order: place, survived, complete colour groups, net worth, XP
    and its breakdown, and how many collectible cards the game drops for the seat."""
    placed = places(state)
    out = []
    for seat in state.seats:
        place = placed[seat.seat]
        groups = complete_groups(state, seat.seat)
        survived = not seat.out
        award = xp_award(
            place=place, complete_groups=groups, survived=survived, final_round=state.round
        )
        out.append(
            {
                "seat": seat.seat,
                "place": place,
                "survived": survived,
                "complete_groups": groups,
                "net_worth": net_worth(state, seat.seat),
                "xp": award.total,
                "xp_breakdown": {
                    "placement": award.placement,
                    "groups": award.groups,
                    "survival": award.survival,
                },
                "cards_won": cards_for_game(won=place == 1, final_round=state.round),
            }
        )
    return out
