"""Commands: what a seat asks to do (imperative names), plus the timeout input.

Each command is a small immutable value with a JSON form ``{"seat": 0, "type": "roll"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, NamedTuple

from .board import BOARD_SIZE
from .errors import RulesError
from .modes import MAX_SEATS
from .values import compare_by_type


class Roll(NamedTuple):
    seat: int


class Buy(NamedTuple):
    seat: int


class Decline(NamedTuple):
    seat: int


class Bid(NamedTuple):
    seat: int


class Pass(NamedTuple):
    seat: int


class Build(NamedTuple):
    seat: int
    square: int


class Sell(NamedTuple):
    seat: int
    square: int


class Mortgage(NamedTuple):
    seat: int
    square: int


class Unmortgage(NamedTuple):
    seat: int
    square: int


class PayBail(NamedTuple):
    seat: int


class Pay(NamedTuple):
    seat: int


class DeclareBankruptcy(NamedTuple):
    seat: int


class Resign(NamedTuple):
    seat: int


class JackpotBet(NamedTuple):
    seat: int
    numbers: tuple[int, ...]


class JackpotDecline(NamedTuple):
    seat: int


#: the moves a Bus face offers (R19): the sum of the white dice, or one of them
BUS_MOVES: tuple[str, ...] = ("sum", "first", "second")


class ChooseBus(NamedTuple):
    seat: int
    move: str  # one of BUS_MOVES


class Teleport(NamedTuple):
    seat: int
    square: int


class Terms(NamedTuple):
    """What a trade moves (R10): the proposer gives cash and squares and takes cash and
    squares from the receiver. The one value type of a trade's terms."""

    give_cash: int = 0
    give_squares: tuple[int, ...] = ()
    take_cash: int = 0
    take_squares: tuple[int, ...] = ()


class OfferTrade(NamedTuple):
    seat: int
    to: int
    give_cash: int = 0
    give_squares: tuple[int, ...] = ()
    take_cash: int = 0
    take_squares: tuple[int, ...] = ()

    @property
    def terms(self) -> Terms:
        return Terms(self.give_cash, self.give_squares, self.take_cash, self.take_squares)


class AcceptOffer(NamedTuple):
    seat: int
    offer: str


class RejectOffer(NamedTuple):
    seat: int
    offer: str


class CancelOffer(NamedTuple):
    seat: int
    offer: str


class Timeout(NamedTuple):
    """Not a seat's choice: the earliest due deadline fires (R16)."""


#: every command a seat sends (all but the timeout)
SeatCommand = (
    Roll
    | Buy
    | Decline
    | Bid
    | Pass
    | Build
    | Sell
    | Mortgage
    | Unmortgage
    | PayBail
    | Pay
    | DeclareBankruptcy
    | Resign
    | JackpotBet
    | JackpotDecline
    | ChooseBus
    | Teleport
    | OfferTrade
    | AcceptOffer
    | RejectOffer
    | CancelOffer
)
Command = SeatCommand | Timeout

COMMAND_TYPES: dict[str, type[Any]] = {
    "roll": Roll,
    "buy": Buy,
    "decline": Decline,
    "bid": Bid,
    "pass": Pass,
    "build": Build,
    "sell": Sell,
    "mortgage": Mortgage,
    "unmortgage": Unmortgage,
    "pay_bail": PayBail,
    "pay": Pay,
    "bankrupt": DeclareBankruptcy,
    "resign": Resign,
    "jackpot": JackpotBet,
    "jackpot_decline": JackpotDecline,
    "bus": ChooseBus,
    "teleport": Teleport,
    "offer": OfferTrade,
    "accept": AcceptOffer,
    "reject": RejectOffer,
    "cancel": CancelOffer,
    "timeout": Timeout,
}
_TYPE_NAMES: dict[type[Any], str] = {cls: name for name, cls in COMMAND_TYPES.items()}
_TUPLE_FIELDS = frozenset({"numbers", "give_squares", "take_squares"})
_INT_FIELDS = frozenset({"seat", "square", "to", "give_cash", "take_cash"})


def command_type(command: Command) -> str:
    return _TYPE_NAMES[type(command)]


def command_to_json(command: Command) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _TYPE_NAMES[type(command)]}
    for key, value in zip(command._fields, command, strict=True):
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _malformed(message: str) -> RulesError:
    return RulesError("command/malformed", message)


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _malformed(f"field {name!r} must be an integer, got {value!r}")
    return value


def command_from_json(data: Any) -> Command:
    """Parse a command's JSON form; raises ``RulesError("command/malformed")`` naming
    what is wrong (a missing, mistyped or unknown field), or ``command/unknown_type``."""
    if not isinstance(data, dict):
        raise _malformed("a command must be a JSON object")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise _malformed("a command needs a string field 'type'")
    cls = COMMAND_TYPES.get(kind)
    if cls is None:
        raise RulesError("command/unknown_type", f"unknown command type {kind!r}")
    fields: tuple[str, ...] = cls._fields
    defaults: dict[str, Any] = cls._field_defaults
    for name in data:
        if name != "type" and name not in fields:
            raise _malformed(f"command {kind!r} has no field {name!r}")
    values: dict[str, Any] = {}
    for name in fields:
        if name not in data:
            if name in defaults:
                continue
            raise _malformed(f"command {kind!r} needs field {name!r}")
        raw = data[name]
        if name in _TUPLE_FIELDS:
            if not isinstance(raw, list | tuple):
                raise _malformed(f"field {name!r} must be a list of integers")
            values[name] = tuple(_int(name, v) for v in raw)
        elif name in _INT_FIELDS:
            values[name] = _int(name, raw)
        else:
            if not isinstance(raw, str):
                raise _malformed(f"field {name!r} must be a string")
            values[name] = raw
    command: Command = cls(**values)
    return command


compare_by_type(COMMAND_TYPES.values())


# -- prebuilt commands ---------------------------------------------------------------------

#: the bets a Jackpot offers (R14): one, two or three distinct numbers, in this order
JACKPOT_CHOICES: tuple[tuple[int, ...], ...] = tuple(
    combo for size in (1, 2, 3) for combo in combinations(range(1, 7), size)
)


@dataclass(frozen=True, slots=True)
class SeatCommands:
    """Every command of one seat that has no open-ended field, built once.

    Commands are immutable values, so ``legal_commands`` and the simple policy hand out
    these shared ones: building a command costs more than checking its guard or choosing
    it, and both run on every decision of every game."""

    roll: Roll
    pay_bail: PayBail
    buy: Buy
    decline: Decline
    bid: Bid
    pass_: Pass
    pay: Pay
    bankrupt: DeclareBankruptcy
    resign: Resign
    #: every bet (``JACKPOT_CHOICES`` order), then the decline
    jackpot: tuple[JackpotBet | JackpotDecline, ...]
    jackpot_decline: JackpotDecline
    #: per ``BUS_MOVES``
    bus: tuple[ChooseBus, ...]
    #: per board square
    build: tuple[Build, ...]
    sell: tuple[Sell, ...]
    mortgage: tuple[Mortgage, ...]
    unmortgage: tuple[Unmortgage, ...]
    teleport: tuple[Teleport, ...]


def _seat_commands(seat: int) -> SeatCommands:
    squares = range(BOARD_SIZE)
    decline_jackpot = JackpotDecline(seat)
    return SeatCommands(
        roll=Roll(seat),
        pay_bail=PayBail(seat),
        buy=Buy(seat),
        decline=Decline(seat),
        bid=Bid(seat),
        pass_=Pass(seat),
        pay=Pay(seat),
        bankrupt=DeclareBankruptcy(seat),
        resign=Resign(seat),
        jackpot=(*(JackpotBet(seat, numbers) for numbers in JACKPOT_CHOICES), decline_jackpot),
        jackpot_decline=decline_jackpot,
        bus=tuple(ChooseBus(seat, move) for move in BUS_MOVES),
        build=tuple(Build(seat, sq) for sq in squares),
        sell=tuple(Sell(seat, sq) for sq in squares),
        mortgage=tuple(Mortgage(seat, sq) for sq in squares),
        unmortgage=tuple(Unmortgage(seat, sq) for sq in squares),
        teleport=tuple(Teleport(seat, sq) for sq in squares),
    )


#: per seat (up to the largest table): its prebuilt commands
SEAT_COMMANDS: tuple[SeatCommands, ...] = tuple(_seat_commands(seat) for seat in range(MAX_SEATS))
