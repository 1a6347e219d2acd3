"""Scenario files (JSON lines): a setup line, then commands and waits.

This is the contract of ``opolyx-rules replay`` (issue 2): line 1 is
``{"setup": {...}}``, every further line is a command ``{"seat": 0, "type": "roll",
"at": 12.5}`` or ``{"type": "wait", "at": 200}``. Before a line is applied, every
deadline up to its ``at`` fires as a timeout, each at its own deadline time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .board import BOARD_SIZE, GROUP_SLOTS, IS_STREET, JAIL, MAX_BUILDINGS, PROPERTY_SLOT, SQUARES
from .commands import command_from_json
from .engine import SeatSetup, advance, apply, new_game
from .errors import RulesError
from .events import Event, event_to_json
from .jsonio import public_view
from .modes import Feature
from .progression import Rarity
from .results import seat_results, winning_side
from .state import Script, State, freeze, thaw


class ScenarioError(ValueError):
    """The scenario file itself is malformed (not a rejected command)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(slots=True)
class ReplayResult:
    state: State
    events: list[Event] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The replay output: the public state, the events, the refused commands, and once
        the game has finished the results per seat (R20) and, in Team mode, the winning
        side (R17); both are null while the game runs."""
        finished = self.state.finished
        return {
            "state": public_view(self.state),
            "events": [event_to_json(e) for e in self.events],
            "errors": self.errors,
            "results": seat_results(self.state) if finished else None,
            "winning_side": winning_side(self.state) if finished else None,
        }


_SEAT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "cash": int,
    "position": int,
    "in_jail": bool,
    "jail_rolls": int,
    "missed_turns": int,
}
_SQUARE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "owner": (int, type(None)),
    "buildings": int,
    "mortgaged": bool,
    "mortgaged_round": int,
}


def _typed(value: Any, kind: type | tuple[type, ...]) -> bool:
    """isinstance, except that a bool is not accepted as an int."""
    if isinstance(value, bool) and kind is not bool:
        return False
    return isinstance(value, kind)


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise RulesError("setup/invalid", message)


def _boost(value: Any) -> int:
    if isinstance(value, str):
        try:
            return Rarity(value).boost_pct
        except ValueError:
            raise RulesError("setup/invalid", f"unknown card rarity {value!r}") from None
    _check(isinstance(value, int) and not isinstance(value, bool), "a card is a rarity name")
    return int(value)


def with_overrides(state: State, overrides: dict[str, Any]) -> State:
    """Set up a position directly (scenario files, tests): round, seats, squares, pot.
    Raises ``RulesError("setup/invalid")`` naming the bad field."""
    s = thaw(state)
    unknown = set(overrides) - {"round", "seats", "squares", "pot"}
    _check(not unknown, f"unknown override {sorted(unknown)}")
    if "round" in overrides:
        _check(
            isinstance(overrides["round"], int) and overrides["round"] >= 1,
            "round must be a positive integer",
        )
        s.round = overrides["round"]
    if "pot" in overrides:
        _check(isinstance(overrides["pot"], int) and overrides["pot"] >= 0, "pot must be >= 0")
        s.pot = overrides["pot"]
    seats = list(s.seats)
    for key, fields in dict(overrides.get("seats", {})).items():
        _check(key.isdigit() and int(key) < len(seats), f"no seat {key}")
        _check(isinstance(fields, dict), f"seat {key} override must be an object")
        for name, value in fields.items():
            _check(name in _SEAT_FIELDS, f"unknown seat field {name!r}")
            _check(
                _typed(value, _SEAT_FIELDS[name]), f"seat {key} field {name!r} has the wrong type"
            )
        if "position" in fields:
            _check(0 <= fields["position"] < BOARD_SIZE, f"seat {key} position off the board")
        seats[int(key)] = seats[int(key)]._replace(**fields)
    s.seats = tuple(seats)
    props = list(s.props)
    for key, fields in dict(overrides.get("squares", {})).items():
        _check(key.isdigit() and int(key) in PROPERTY_SLOT, f"square {key} is not a property")
        _check(isinstance(fields, dict), f"square {key} override must be an object")
        for name, value in fields.items():
            _check(name in _SQUARE_FIELDS, f"unknown square field {name!r}")
            _check(
                _typed(value, _SQUARE_FIELDS[name]),
                f"square {key} field {name!r} has the wrong type",
            )
        owner = fields.get("owner", props[PROPERTY_SLOT[int(key)]].owner)
        _check(owner is None or 0 <= owner < len(seats), f"square {key} owner is not a seat")
        _check(0 <= fields.get("buildings", 0) <= MAX_BUILDINGS, f"square {key} buildings 0-5")
        slot = PROPERTY_SLOT[int(key)]
        if fields.get("mortgaged") and "mortgaged_round" not in fields:
            # A mortgage set up without its round was taken in the current round.
            fields = {**fields, "mortgaged_round": s.round}
        props[slot] = props[slot]._replace(**fields)
    s.props = tuple(props)
    _check_possible(s)
    return freeze(s)


def _check_possible(s: State) -> None:
    """Refuse a set-up position the rules could never reach, naming the problem."""
    for seat in s.seats:
        _check(seat.cash >= 0, f"seat {seat.seat} has negative cash ({seat.cash})")
        _check(
            not seat.in_jail or seat.position == JAIL,
            f"seat {seat.seat} is in jail away from square {JAIL} (at {seat.position})",
        )
        _check(
            0 <= seat.jail_rolls < s.config.max_jail_rolls,
            f"seat {seat.seat} jail_rolls must be 0-{s.config.max_jail_rolls - 1}",
        )
    _check(
        s.pot == 0 or s.config.has(Feature.FORTUNE_POT),
        f"a pot of {s.pot} in {s.config.name}: only Fortuna has a Fortune Pot",
    )
    for p in s.props:
        square = p.square
        _check(not p.mortgaged or p.owner is not None, f"square {square} is mortgaged but unowned")
        if not p.buildings:
            continue
        _check(IS_STREET[square], f"square {square} is not a street and cannot have buildings")
        _check(p.owner is not None, f"square {square} has buildings but no owner")
        group = [s.props[slot] for slot in GROUP_SLOTS[square]]
        _check(
            all(q.owner == p.owner for q in group),
            f"square {square} has buildings but seat {p.owner} does not hold the whole "
            f"{SQUARES[square].group} group",
        )
        _check(
            not any(q.mortgaged for q in group),
            f"square {square} has buildings but a street of its group is mortgaged",
        )


def state_from_setup(setup: Any) -> State:
    """The initial state of a scenario's setup object."""
    _check(isinstance(setup, dict), "setup must be an object")
    mode, seats = setup.get("mode"), setup.get("seats")
    _check(isinstance(mode, str), "setup needs a string 'mode'")
    _check(isinstance(seats, int) and not isinstance(seats, bool), "setup needs integer 'seats'")
    known = {
        "mode",
        "seats",
        "seed",
        "first_seat",
        "dice",
        "speed_die",
        "jackpot_die",
        "deck",
        "cards",
        "overrides",
    }
    _check(not set(setup) - known, f"unknown setup fields {sorted(set(setup) - known)}")
    from .modes import MODES

    _check(mode in MODES, f"unknown mode {mode!r}; known modes: {', '.join(MODES)}")
    cards = setup.get("cards", {})
    _check(isinstance(cards, dict), "cards must be an object")
    setups = [SeatSetup() for _ in range(seats)]
    for seat_key, owned in cards.items():
        _check(seat_key.isdigit() and int(seat_key) < seats, f"cards name no seat {seat_key}")
        _check(isinstance(owned, dict), "a seat's cards are an object square -> rarity")
        boosts = {}
        for sq, rarity in owned.items():
            _check(sq.isdigit(), f"card square {sq!r} is not a number")
            boosts[int(sq)] = _boost(rarity)
        setups[int(seat_key)] = SeatSetup(boosts)
    try:
        dice = tuple((int(a), int(b)) for a, b in setup.get("dice", []))
        speed = tuple(str(f).lower() for f in setup.get("speed_die", []))
        jackpot = tuple(int(v) for v in setup.get("jackpot_die", []))
        deck = tuple(int(v) for v in setup.get("deck", []))
    except (TypeError, ValueError) as exc:
        raise RulesError("setup/invalid", f"bad scripted outcomes: {exc}") from None
    _check(all(1 <= d <= 6 for pair in dice for d in pair), "dice faces are 1-6")
    _check(all(f in ("1", "2", "3", "bus", "x") for f in speed), "speed die: 1, 2, 3, bus, x")
    _check(all(1 <= v <= 6 for v in jackpot), "jackpot die faces are 1-6")
    _check(all(1 <= v <= 16 for v in deck), "cards are numbered 1-16")
    seed = setup.get("seed", 0)
    _check(isinstance(seed, int), "seed must be an integer")
    first = setup.get("first_seat")
    _check(first is None or isinstance(first, int), "first_seat must be an integer")
    state = new_game(
        mode, setups, seed, first_seat=first, script=Script(dice, speed, jackpot, deck)
    )
    overrides = setup.get("overrides")
    if overrides is not None:
        _check(isinstance(overrides, dict), "overrides must be an object")
        state = with_overrides(state, overrides)
    return state


def run_scenario(lines: Iterable[str]) -> ReplayResult:
    """Play a scenario. Rejected commands are collected in ``errors``; a malformed file
    raises ``ScenarioError`` naming the line."""
    result: ReplayResult | None = None
    now = 0.0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ScenarioError(number, f"not JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise ScenarioError(number, "each line must be a JSON object")
        if result is None:
            if "setup" not in data:
                raise ScenarioError(number, 'the first line must be {"setup": {...}}')
            try:
                result = ReplayResult(state_from_setup(data["setup"]))
            except RulesError as exc:
                raise ScenarioError(number, exc.message) from None
            continue
        at = data.get("at", now)
        if isinstance(at, bool) or not isinstance(at, int | float):
            raise ScenarioError(number, "'at' must be a number of seconds")
        if at < now:
            raise ScenarioError(number, f"'at' goes back in time ({at} < {now})")
        now = float(at)
        result.state, fired = advance(result.state, now)
        result.events.extend(fired)
        if data.get("type") == "wait":
            continue
        body = {k: v for k, v in data.items() if k != "at"}
        try:
            command = command_from_json(body)
            result.state, events = apply(result.state, command, now)
        except RulesError as exc:
            result.errors.append({"line": number, "code": exc.code, "message": exc.message})
            continue
        result.events.extend(events)
    if result is None:
        raise ScenarioError(1, "the file is empty; it needs a setup line")
    return result
