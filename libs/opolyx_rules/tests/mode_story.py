"""A small story-telling helper for the mode tests (test_modes_*.py).

A ``Story`` holds a game state and a clock; each step sends one command in its JSON form
(the replay contract of issue 2) and returns the events it caused, also in JSON form, so a
test reads like the game it tells::

    story = Story("speed", 2, round=7, dice=[(2, 5)], speed_die=["bus"])
    story.do(0, "roll")
    story.do(0, "bus", move="first")
    assert story.position(0) == 2

Positions are set up with ``opolyx_rules.scenario.with_overrides`` (the ``overrides``
object of a scenario's setup line), either at the start or at any moment (``override``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from opolyx_rules import (
    RulesError,
    Script,
    SeatSetup,
    State,
    advance,
    apply,
    command_from_json,
    command_to_json,
    event_to_json,
    evolve,
    legal_commands,
    new_game,
    public_view,
)
from opolyx_rules.board import PROPERTY_SQUARES
from opolyx_rules.events import BANK, POT
from opolyx_rules.scenario import with_overrides
from opolyx_rules.simulate import play_game

__all__ = ["BANK", "POT", "Step", "Story", "of_type", "owned_by", "played", "transfers"]

Events = list[dict[str, Any]]


def of_type(events: Iterable[dict[str, Any]], kind: str) -> Events:
    """The events of one type, in order."""
    return [e for e in events if e["type"] == kind]


def transfers(events: Iterable[dict[str, Any]], reason: str | None = None) -> Events:
    """The money movements (``{"frm", "to", "amount", "reason"}``), optionally of one reason."""
    return [e for e in of_type(events, "transfer") if reason is None or e["reason"] == reason]


#: one step of a whole game: the state before an event, the event (JSON), the state after
Step = tuple[State, dict[str, Any], State]


def played(mode: str, seats: int, seed: int) -> tuple[State, list[Step]]:
    """A whole game played by the library's simple policy, as (before, event, after)
    steps rebuilt with ``evolve`` (so every event can be checked against the state it
    happened in); returns the final state too."""
    result = play_game(mode, seats, seed, keep_events=True)
    state = new_game(mode, seats, seed)
    steps: list[Step] = []
    for event in result.events:
        after = evolve(state, event)
        steps.append((state, event_to_json(event), after))
        state = after
    assert public_view(state) == public_view(result.state)
    return result.state, steps


def owned_by(seat: int, squares: Iterable[int] = PROPERTY_SQUARES) -> dict[int, dict[str, Any]]:
    """A ``squares`` override giving every listed property (default: all 28) to ``seat``."""
    return {sq: {"owner": seat} for sq in squares}


class Story:
    """One game told command by command."""

    def __init__(
        self,
        mode: str,
        seats: int = 2,
        *,
        first_seat: int = 0,
        seed: int = 1,
        dice: Sequence[tuple[int, int]] = (),
        speed_die: Sequence[str] = (),
        jackpot_die: Sequence[int] = (),
        deck: Sequence[int] = (),
        boosts: dict[int, dict[int, int]] | None = None,
        round: int | None = None,
        seat_overrides: dict[int, dict[str, Any]] | None = None,
        squares: dict[int, dict[str, Any]] | None = None,
        pot: int | None = None,
    ) -> None:
        setups = [SeatSetup((boosts or {}).get(i, {})) for i in range(seats)]
        script = Script(
            tuple((a, b) for a, b in dice), tuple(speed_die), tuple(jackpot_die), tuple(deck)
        )
        self.state: State = new_game(mode, setups, seed, first_seat=first_seat, script=script)
        self.now = 0.0
        self.log: Events = []
        self.override(round=round, seats=seat_overrides, squares=squares, pot=pot)

    # -- setting up ---------------------------------------------------------------------

    def override(
        self,
        *,
        round: int | None = None,
        seats: dict[int, dict[str, Any]] | None = None,
        squares: dict[int, dict[str, Any]] | None = None,
        pot: int | None = None,
    ) -> None:
        """Change the position directly (``scenario.with_overrides``)."""
        overrides: dict[str, Any] = {}
        if round is not None:
            overrides["round"] = round
        if pot is not None:
            overrides["pot"] = pot
        if seats:
            overrides["seats"] = {str(k): v for k, v in seats.items()}
        if squares:
            overrides["squares"] = {str(k): v for k, v in squares.items()}
        if overrides:
            self.state = with_overrides(self.state, overrides)

    # -- acting ---------------------------------------------------------------------------

    def do(self, seat: int, kind: str, *, at: float | None = None, **fields: Any) -> Events:
        """Send one command (its JSON form); returns the events it caused."""
        if at is not None:
            self.wait(at)
        command = command_from_json({"seat": seat, "type": kind, **fields})
        self.state, events = apply(self.state, command, self.now)
        out = [event_to_json(e) for e in events]
        self.log.extend(out)
        return out

    def refused(self, seat: int, kind: str, **fields: Any) -> str:
        """Send a command that must be refused; returns the error code. The state must not
        change."""
        before = public_view(self.state)
        command = command_from_json({"seat": seat, "type": kind, **fields})
        try:
            apply(self.state, command, self.now)
        except RulesError as exc:
            assert public_view(self.state) == before
            return exc.code
        raise AssertionError(f"{kind} by seat {seat} was accepted")

    def wait(self, until: float) -> Events:
        """Let the clock run to ``until``: every deadline up to it fires as a timeout."""
        assert until >= self.now
        self.now = float(until)
        self.state, events = advance(self.state, self.now)
        out = [event_to_json(e) for e in events]
        self.log.extend(out)
        return out

    # -- looking ------------------------------------------------------------------------

    @property
    def view(self) -> dict[str, Any]:
        return public_view(self.state)

    @property
    def pending(self) -> Any:
        """The pending decision as in the replay output (a dict), or None."""
        return self.view["pending"]

    def pending_kind(self) -> str | None:
        pending = self.pending
        return None if pending is None else pending["kind"]

    def seat(self, seat: int) -> dict[str, Any]:
        entry: dict[str, Any] = self.view["seats"][seat]
        return entry

    def cash(self, seat: int) -> int:
        return self.state.seats[seat].cash

    def position(self, seat: int) -> int:
        return self.state.seats[seat].position

    def square(self, square: int) -> dict[str, Any]:
        for entry in self.view["squares"]:
            if entry["square"] == square:
                return dict(entry)
        raise KeyError(square)

    def owner(self, square: int) -> int | None:
        owner: int | None = self.square(square)["owner"]
        return owner

    def legal_types(self, seat: int) -> set[str]:
        """The command types ``seat`` may send now."""
        return {command_to_json(c)["type"] for c in legal_commands(self.state, seat)}
