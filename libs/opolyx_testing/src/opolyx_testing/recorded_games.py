"""Whole games recorded the way a table records them: every command with the game time it
was applied at and the events it caused, for replay, analytics and verify tests.

    game = record_game("classic", seats=4, seed=7, trading=True)
    game.file        # the ReplayFile the gateway would serve (seed revealed)
    game.batches     # [(command JSON, at, [event JSON, ...]), ...]

Commands come one game second apart, as in the rules library's `simulate`, so no timer
fires; `trading=True` plays `TradingPolicy` (trades every turn) instead of the simple one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import opolyx_rules
from opolyx_contracts.replay import ReplayBatch, ReplayFile, ReplaySeat
from opolyx_contracts.table import (
    CreatedSeat,
    PublicView,
    SeedRevealed,
    TableCreatedEvent,
    TableEvents,
)
from opolyx_rules import (
    SQUARES,
    AcceptOffer,
    Command,
    OfferTrade,
    RollPending,
    State,
    awaiting,
    can_offer,
    check_offer,
    simple_policy,
)

__all__ = ["RecordedGame", "record_game"]


@dataclass(frozen=True)
class RecordedGame:
    initial: State
    final: State
    seed: int
    batches: list[tuple[dict[str, Any], float, list[dict[str, Any]]]]
    file: ReplayFile

    @property
    def events(self) -> list[dict[str, Any]]:
        return [event for _, _, events in self.batches for event in events]

    def stored(self, table_id: str | None = None, started_at: float = 1.0e9) -> list[TableEvents]:
        """The game as a table stores it in TABLE_EVENTS: `table_created`, one message per
        command, `seed_revealed`."""
        table_id = table_id or self.file.table_id
        created = TableCreatedEvent(
            mode=self.file.mode,
            rules_version=self.file.rules_version,
            room_id=None,
            seats=[
                CreatedSeat(seat=s.seat, player_id=s.player_id, bot=s.bot, name=s.name, boosts={})
                for s in self.file.seats
            ],
            seed_commitment=self.file.seed_commitment,
            started_at=started_at,
            state=PublicView.model_validate(self.file.initial),
        )
        messages = [_message(table_id, "table", 1, [created.model_dump(mode="json")], None, 0.0)]
        seq = 2
        for command, at, events in self.batches:
            messages.append(_message(table_id, "rules", seq, events, command, at))
            seq += len(events)
        revealed = SeedRevealed(seed=self.seed, seed_commitment=self.file.seed_commitment)
        messages.append(
            _message(table_id, "table", seq, [revealed.model_dump(mode="json")], None, 0.0)
        )
        return messages


def _message(
    table_id: str,
    source: str,
    first: int,
    events: list[dict[str, Any]],
    command: dict[str, Any] | None,
    at: float,
) -> TableEvents:
    last = first + len(events) - 1
    return TableEvents.model_validate(
        {
            "table_id": table_id,
            "source": source,
            "first_seq": first,
            "last_seq": last,
            "version": last,
            "events": [
                {"seq": first + i, "version": first + i, "event": e} for i, e in enumerate(events)
            ],
            "command_id": None if command is None else f"c{first}",
            "command": command,
            "command_at": None if command is None else at,
            "at": 1.0e9 + at,
        }
    )


class Trader:
    """The simple player, who also proposes one trade before each roll to the next seat
    (a property for its price every third time, else cash both ways) and accepts every
    offer it gets; the rules refuse what is not fair (R10), and then it just rolls."""

    def __init__(self) -> None:
        self.turns: set[tuple[int, int]] = set()
        self.made = 0

    def choose(self, state: State, seat: int) -> Command:
        for open_offer in state.offers:
            if open_offer.to == seat:
                return AcceptOffer(seat, open_offer.id)
        pending = state.pending
        turn = (state.round, seat)
        if isinstance(pending, RollPending) and turn not in self.turns and can_offer(state, seat):
            self.turns.add(turn)
            others = [s.seat for s in state.seats if s.seat != seat and not s.out]
            if others:
                to = others[self.made % len(others)]
                own = [p.square for p in state.props if p.owner == seat and not p.mortgaged]
                offer = OfferTrade(seat, to, give_cash=200, take_cash=150)
                if own and self.made % 3 == 0:
                    square = own[0]
                    offer = OfferTrade(
                        seat, to, give_squares=(square,), take_cash=SQUARES[square].price
                    )
                if check_offer(state, offer) is None:
                    self.made += 1
                    return offer
        return simple_policy(state, seat)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def record_game(
    mode: str = "classic",
    seats: int = 4,
    seed: int = 1,
    *,
    trading: bool = False,
    max_commands: int = 100_000,
    table_id: str = "t-recorded",
) -> RecordedGame:
    initial = opolyx_rules.new_game(mode, seats, seed)
    choose: Callable[[State, int], Command]
    choose = Trader().choose if trading else simple_policy
    state = initial
    batches: list[tuple[dict[str, Any], float, list[dict[str, Any]]]] = []
    now = 0.0
    while not state.finished:
        if len(batches) >= max_commands:
            raise RuntimeError(f"{mode}/{seed} did not end after {max_commands} commands")
        # An open offer's receiver answers first (it would expire at the turn's end).
        seat = state.offers[0].to if state.offers else awaiting(state)[0]
        now += 1.0
        command = choose(state, seat)
        state, events = opolyx_rules.apply(state, command, now)
        batches.append(
            (
                _plain(opolyx_rules.command_to_json(command)),
                now,
                [_plain(opolyx_rules.event_to_json(e)) for e in events],
            )
        )
    file = ReplayFile(
        table_id=table_id,
        mode=mode,
        rules_version=initial.rules_version,
        seats=[
            ReplaySeat(seat=i, player_id=f"p{i}", name=f"Player {i}", bot=i > 0)
            for i in range(seats)
        ],
        seed_commitment=initial.seed_commitment,
        seed=seed,
        seed_text=str(seed),
        first_seat_drawn=True,
        initial=_plain(opolyx_rules.public_view(initial)),
        batches=[ReplayBatch(command=c, at=at, events=ev) for c, at, ev in batches],
    )
    return RecordedGame(initial, state, seed, batches, file)
