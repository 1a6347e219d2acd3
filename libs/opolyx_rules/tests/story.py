"""Helpers that keep the per-rule story tests (test_rules_*.py) short.

A ``Table`` holds a game in progress plus the clock; each command returns the events it
caused, and refused commands return the stable ``RulesError.code``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from opolyx_rules import RulesError, apply, legal_commands, next_deadline
from opolyx_rules.assets import net_worth
from opolyx_rules.board import PROPERTY_SLOT
from opolyx_rules.commands import Command, Roll, Timeout
from opolyx_rules.engine import SeatSetup, new_game
from opolyx_rules.events import Event, Transfer
from opolyx_rules.jsonio import state_to_json
from opolyx_rules.scenario import with_overrides
from opolyx_rules.state import Pending, PropState, Script, SeatState, State, with_fields

BANK = -1

E = TypeVar("E", bound=Event)


def game(
    seats: int = 4,
    *,
    first: int = 0,
    dice: tuple[tuple[int, int], ...] = (),
    deck: tuple[int, ...] = (),
    jackpot: tuple[int, ...] = (),
    boosts: dict[int, dict[int, int]] | None = None,
    round: int | None = None,
    players: dict[int, dict[str, Any]] | None = None,
    squares: dict[int, dict[str, Any]] | None = None,
    mode: str = "classic",
    seed: int = 1,
) -> State:
    """A Classic game with scripted dice/cards and a position set up directly."""
    setups: int | list[SeatSetup] = seats
    if boosts:
        setups = [SeatSetup(boosts.get(i, {})) for i in range(seats)]
    state = new_game(
        mode,
        setups,
        seed,
        first_seat=first,
        script=Script(dice=dice, deck=deck, jackpot_die=jackpot),
    )
    overrides: dict[str, Any] = {}
    if round is not None:
        overrides["round"] = round
    if players:
        overrides["seats"] = {str(k): v for k, v in players.items()}
    if squares:
        overrides["squares"] = {str(k): v for k, v in squares.items()}
    return with_overrides(state, overrides) if overrides else state


def owned(owner: int, *squares: int, **fields: Any) -> dict[int, dict[str, Any]]:
    """Square overrides giving ``squares`` to ``owner`` (plus e.g. buildings=2)."""
    return {sq: {"owner": owner, **fields} for sq in squares}


class Table:
    """A game in progress: the state, the clock and every event so far."""

    def __init__(self, state: State, now: float = 0.0) -> None:
        self.state = state
        self.now = now
        self.log: list[Event] = []

    # -- acting ---------------------------------------------------------------------------

    def do(self, command: Command, at: float | None = None) -> list[Event]:
        if at is not None:
            self.now = at
        self.state, events = apply(self.state, command, self.now)
        self.log.extend(events)
        return events

    def refuse(self, command: Command, at: float | None = None) -> str:
        """The command is refused: return its error code; the state is unchanged."""
        before = state_to_json(self.state)
        try:
            self.do(command, at)
        except RulesError as error:
            assert state_to_json(self.state) == before
            return error.code
        raise AssertionError(f"{command!r} was accepted")

    def timeout(self) -> list[Event]:
        """The earliest deadline fires, at its own time."""
        due = next_deadline(self.state)
        assert due is not None, "nothing is due"
        return self.do(Timeout(), at=due)

    def script(self, **fields: Any) -> None:
        """Replace the scripted outcomes still to come (dice, deck, jackpot_die)."""
        self.state = with_fields(self.state, script=self.state.script._replace(**fields))

    def override(self, **overrides: Any) -> None:
        data: dict[str, Any] = {}
        for key, value in overrides.items():
            data[key] = {str(k): v for k, v in value.items()} if isinstance(value, dict) else value
        self.state = with_overrides(self.state, data)

    # -- looking ---------------------------------------------------------------------------

    def seat(self, seat: int) -> SeatState:
        return self.state.seats[seat]

    def cash(self, seat: int) -> int:
        return self.state.seats[seat].cash

    def pos(self, seat: int) -> int:
        return self.state.seats[seat].position

    def prop(self, square: int) -> PropState:
        return self.state.props[PROPERTY_SLOT[square]]

    def owner(self, square: int) -> int | None:
        return self.prop(square).owner

    @property
    def pending(self) -> Pending | None:
        return self.state.pending

    @property
    def deadline(self) -> float:
        """When the pending decision times out (a story asks only while one is pending)."""
        assert self.state.pending is not None, "no decision is pending"
        return self.state.pending.deadline

    def waits_for(self) -> tuple[str, int] | None:
        """(kind, seat) of the pending decision."""
        p = self.state.pending
        return None if p is None else (p.kind, p.seat)

    def worth(self, seat: int) -> int:
        return net_worth(self.state, seat)


def transfers(events: list[Event], reason: str | None = None) -> list[tuple[int, int, int, str]]:
    """(from, to, amount, reason) of every Transfer, optionally of one reason."""
    return [
        (e.frm, e.to, e.amount, e.reason)
        for e in events
        if isinstance(e, Transfer) and (reason is None or e.reason == reason)
    ]


def of(events: list[Event], kind: type[E]) -> list[E]:
    """The events of one type."""
    return [e for e in events if isinstance(e, kind)]


def names(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def legal(state: State, seat: int) -> set[tuple[str, tuple[Any, ...]]]:
    """``legal_commands`` as (type name, fields): commands are NamedTuples, so
    ``Pay(0) == Resign(0)`` would hold if compared as plain tuples."""
    return {(type(c).__name__, tuple(c)) for c in legal_commands(state, seat)}


def cmd(command: Command) -> tuple[str, tuple[Any, ...]]:
    """A command in the form ``legal`` returns."""
    return (type(command).__name__, tuple(command))


def quiet_turn(t: Table, seat: int) -> list[Event]:
    """``seat`` plays a turn with no decision: from Start it rolls 4+6 to Just visiting."""
    t.override(seats={seat: {"position": 0}})
    t.script(dice=((4, 6),))
    return t.do(Roll(seat))
