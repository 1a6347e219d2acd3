"""Whole games played by a simple built-in policy: the baseline every bot must beat, the
source of the speed benchmark, and a smoke test of the engine.

The policy is deliberately plain: buy what it can afford, bid up to list price while it
keeps a reserve, build when rich, raise funds cheapest first, never trade or gamble.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import management
from .assets import liquidation_value
from .board import GROUP_SQUARES, PROPERTY_SLOT, SQUARES, STREET_GROUPS
from .commands import (
    Bid,
    Build,
    Buy,
    ChooseBus,
    Command,
    DeclareBankruptcy,
    Decline,
    JackpotDecline,
    Mortgage,
    Pass,
    Pay,
    Roll,
    Sell,
    Teleport,
)
from .engine import apply, awaiting, new_game
from .events import Event, TurnStarted
from .state import (
    AuctionPending,
    BusPending,
    BuyPending,
    JackpotPending,
    PaymentPending,
    RollPending,
    State,
    TeleportPending,
)

Policy = Callable[[State, int], Command]

#: cash the simple policy keeps in hand before building or bidding
RESERVE = 2000


def simple_policy(state: State, seat: int) -> Command:
    """The rules library's built-in policy (see module docstring)."""
    pending = state.pending
    cash = state.seats[seat].cash
    match pending:
        case RollPending():
            for group in STREET_GROUPS:
                members = GROUP_SQUARES[group]
                if cash - SQUARES[members[0]].building_cost < RESERVE * 2:
                    continue
                if any(state.props[PROPERTY_SLOT[sq]].owner != seat for sq in members):
                    continue
                for square in members:
                    if management.check_build(state, seat, square) is None:
                        return Build(seat, square)
            return Roll(seat)
        case BuyPending(square=square):
            return Buy(seat) if cash >= SQUARES[square].price else Decline(seat)
        case AuctionPending(square=square, minimum=minimum):
            worth_it = minimum <= SQUARES[square].price and cash - minimum >= RESERVE
            return Bid(seat) if worth_it else Pass(seat)
        case PaymentPending(amount=amount):
            if cash >= amount:
                return Pay(seat)
            if liquidation_value(state, seat) < amount:
                return DeclareBankruptcy(seat)
            sellable = management.sellable_squares(state, seat)
            if sellable:
                return Sell(seat, min(sellable, key=lambda q: SQUARES[q].building_cost))
            mortgageable = management.mortgageable_squares(state, seat)
            return Mortgage(seat, min(mortgageable, key=lambda q: SQUARES[q].price))
        case JackpotPending():
            return JackpotDecline(seat)
        case BusPending():
            return ChooseBus(seat, "sum")
        case TeleportPending():
            unowned = [p.square for p in state.props if p.owner is None]
            return Teleport(seat, unowned[0] if unowned else 0)
    raise AssertionError(f"no decision pending for seat {seat}")


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
    so no timer fires (the turn limits are far longer)."""
    state = new_game(mode, seats, seed)
    chosen = policies or [simple_policy] * seats
    commands = 0
    turns = 1
    log: list[Event] = []
    now = 0.0
    while not state.finished:
        if commands >= max_commands:
            raise RuntimeError(f"game {mode}/{seed} did not end after {max_commands} commands")
        seat = awaiting(state)[0]
        now += 1.0
        state, events = apply(state, chosen[seat](state, seat), now)
        commands += 1
        for event in events:
            if type(event) is TurnStarted:
                turns += 1
        if keep_events:
            log.extend(events)
    return GameResult(state, commands, turns, log)
