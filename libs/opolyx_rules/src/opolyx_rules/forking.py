"""Steps of a game and a new game from one of them ("play from here" in a replay).

A game's **steps** are the positions at the start of each turn: step 0 is the game's
first state, step k the state right after its k-th ``turn_started`` event, and, once the
game is over, a last step for its final state. The replay timeline (gateway) and a fork
(table service) both count steps with ``step_bounds``, so a step names the same moment
in both.

The position is a public view (``public_view``) taken at the start of a turn: nothing
secret is in it, so the new game gets a seed of its own (a fresh commitment, a generator
seeded with it, the card deck shuffled anew) and its clock starts at 0 with the turn's
full roll window. Everything else (cash, squares, buildings, jail, who is out, the round)
is the position's, checked like a scenario's set-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .engine import replay, seed_commitment
from .errors import RulesError, StateVersionError
from .events import Event, TurnStarted
from .jsonio import state_from_json
from .rng import seed_state

# The scenario set-up's own check: a forked position must pass what a set-up must.
from .scenario import _check_possible as check_possible
from .state import RollPending, Script, State, with_fields

__all__ = ["fork_position", "position_at", "step_bounds"]


def step_bounds(events: Sequence[Event], *, finished: bool) -> list[int]:
    """For each step, how many of ``events`` come before it: ``[0, i1 + 1, i2 + 1, ...]``
    for the ``turn_started`` events at ``i1, i2, ...``, then ``len(events)`` for the
    final position when the game is ``finished``."""
    bounds = [0]
    for index, event in enumerate(events):
        if type(event) is TurnStarted:
            bounds.append(index + 1)
    if finished and bounds[-1] != len(events):
        bounds.append(len(events))
    return bounds


def position_at(initial: State, events: Sequence[Event], step: int, *, finished: bool) -> State:
    """The state at ``step`` of the game that starts at ``initial``; ``RulesError``
    ("setup/invalid") for a step the game does not have."""
    bounds = step_bounds(events, finished=finished)
    if not 0 <= step < len(bounds):
        raise RulesError("setup/invalid", f"the game has steps 0 to {len(bounds) - 1}, not {step}")
    return replay(initial, events[: bounds[step]])


def fork_position(position: Mapping[str, Any], seed: int) -> State:
    """The state of a new game continuing ``position`` (a turn's start) under ``seed``.

    Raises ``RulesError("setup/invalid")`` when the position cannot be continued: not a
    state this library reads, a finished game, a moment inside a turn, or an impossible
    position (negative cash, buildings without the group, ...)."""
    try:
        state = state_from_json(dict(position))
    except StateVersionError as exc:
        raise RulesError("setup/invalid", str(exc)) from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise RulesError("setup/invalid", f"not a game position: {exc!r}") from None
    if state.finished:
        raise RulesError("setup/invalid", "the game is over at this position")
    pending = state.pending
    if not isinstance(pending, RollPending) or state.dice is not None:
        raise RulesError("setup/invalid", "a game can be continued from a turn's start only")
    current = (
        state.seats[state.current_seat] if 0 <= state.current_seat < len(state.seats) else None
    )
    if current is None or current.out or pending.seat != state.current_seat:
        raise RulesError("setup/invalid", "the seat to play is not in the game")
    if len(state.boosts) != len(state.seats):
        raise RulesError("setup/invalid", "every seat needs its (possibly empty) card boosts")
    check_possible(state)
    window = state.config.turn_seconds
    return with_fields(
        state,
        seed_commitment=seed_commitment(seed),
        rng=seed_state(seed),
        script=Script(),
        drawn_cards=0,
        pending=RollPending(state.current_seat, window),
        turn_deadline=window,
        offers=(),
        doubles=0,
        roll_again=False,
        x_jump=False,
        built=frozenset(),
    )
