"""A new table continuing a finished game from one of its steps ("play from here").

The position is never taken from the request: the table rebuilds it from the source
game's own stored events with the rules library (`opolyx_rules.forking`), so a fork shows
exactly what the replay showed at that step and nobody can start a game from a position
the rules did not reach. Only a finished game (its seed revealed) can be forked, and only
into a game of its mode and seat count; the new game gets a seed of its own.
"""

from __future__ import annotations

import opolyx_rules
from opolyx_contracts.refusals import SETUP_INVALID
from opolyx_contracts.replay import ForkSource
from opolyx_contracts.table import AutopilotChanged, SeedRevealed, TableCreatedEvent
from opolyx_rules import Event, RulesError, State
from opolyx_rules.events import TurnStarted
from opolyx_rules.forking import fork_position, position_at

from opolyx_table.engine import rules_event
from opolyx_table.store import Storage

__all__ = ["forked_state"]


async def forked_state(
    storage: Storage, source: ForkSource, mode: str, seats: int, seed: int
) -> State:
    """The first state of a game of `mode` with `seats` seats continuing `source`; raises
    `RulesError` ("setup/invalid") when that is not a finished game of the same kind or
    has no such step."""
    last = await storage.last_events(source.table_id)
    if last is None:
        raise RulesError(SETUP_INVALID, f"no game {source.table_id} is stored")
    if not any(isinstance(r.event, SeedRevealed) for r in last[1].events):
        raise RulesError(SETUP_INVALID, "only a finished game can be continued")
    created: TableCreatedEvent | None = None
    events: list[Event] = []
    turns = 0
    # Read only as far as the step: step k starts right after the k-th turn_started.
    async for _, message in storage.read_events(source.table_id):
        for record in message.events:
            event = record.event
            if isinstance(event, TableCreatedEvent):
                created = event
            elif not isinstance(event, (SeedRevealed, AutopilotChanged)):
                events.append(rules_event(event))
                if type(events[-1]) is TurnStarted:
                    turns += 1
        if turns >= source.step:
            break
    if created is None:
        raise RulesError(SETUP_INVALID, f"game {source.table_id} has no start stored")
    if created.mode != mode or len(created.seats) != seats:
        raise RulesError(
            SETUP_INVALID,
            f"game {source.table_id} is {created.mode} with {len(created.seats)} seats",
        )
    initial = opolyx_rules.state_from_json(created.state.model_dump(mode="json"))
    position = position_at(initial, events, source.step, finished=turns < source.step)
    return fork_position(opolyx_rules.public_view(position), seed)
