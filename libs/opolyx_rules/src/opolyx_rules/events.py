"""Events: what happened (past-tense names). Applying them with ``evolve`` rebuilds the
state exactly; they hold outcomes (dice, cards) but never the seed or RNG state.

Money only ever moves through ``Transfer``, so the conservation of money can be checked
from the event log alone (bank and pot are the only sources and sinks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .commands import Terms
from .state import JailExit, JailReason, MoveHow, OfferEnd, OutHow, SpeedFace, Then
from .values import compare_by_type

BANK = -1
POT = -2


class TurnStarted(NamedTuple):
    seat: int
    round: int
    deadline: float


class RollOffered(NamedTuple):
    """Another roll in the same turn (doubles, triples, bail paid), with its own
    management window before it."""

    seat: int
    deadline: float


class DiceRolled(NamedTuple):
    seat: int
    white: tuple[int, int]
    third: SpeedFace | None
    #: doubles rolled so far this turn, this roll included
    doubles: int
    #: whether the player rolls again once this roll is resolved
    roll_again: bool
    x_jump: bool


class Moved(NamedTuple):
    seat: int
    frm: int
    to: int
    passed_start: bool
    how: MoveHow


TRANSFER_REASONS: tuple[str, ...] = (
    "auction",
    "bail",
    "bankruptcy",
    "building",
    "building_sale",
    "card",
    "creditor_out",
    "fortune_pot",
    "jackpot_stake",
    "jackpot_win",
    "lucky_eight",
    "mortgage",
    "new_year",
    "purchase",
    "rent",
    "rent_tax",
    "salary",
    "start_landing",
    "tax",
    "trade",
    "unlucky_four",
    "unmortgage",
)
"""Every ``Transfer.reason`` the rules send (clients name and filter transfers by them; a
test checks this list against the library's source and the transfers of played games)."""


class Transfer(NamedTuple):
    """``amount`` moves from ``frm`` to ``to``: a seat number, BANK or POT; ``reason`` is one
    of `TRANSFER_REASONS`."""

    frm: int
    to: int
    amount: int
    reason: str


class BuyOffered(NamedTuple):
    seat: int
    square: int
    deadline: float


class PropertyBought(NamedTuple):
    seat: int
    square: int
    price: int


class PropertyDeclined(NamedTuple):
    seat: int
    square: int
    automatic: bool


class AuctionStarted(NamedTuple):
    square: int
    decliner: int
    order: tuple[int, ...]
    bidder: int
    minimum: int
    deadline: float


class AuctionBid(NamedTuple):
    seat: int
    amount: int
    next_bidder: int
    minimum: int
    deadline: float


class AuctionPassed(NamedTuple):
    seat: int
    automatic: bool
    next_bidder: int
    deadline: float


class AuctionEnded(NamedTuple):
    square: int
    winner: int | None
    price: int


class PaymentRequired(NamedTuple):
    seat: int
    amount: int
    #: (creditor, share) pairs: a seat number, BANK or POT
    creditors: tuple[tuple[int, int], ...]
    reason: str
    deadline: float
    #: what follows once paid
    then: Then
    steps: int
    #: further (debtor, amount, creditor) pauses waiting behind this one (card 6)
    queue: tuple[tuple[int, int, int], ...]


class PaymentMade(NamedTuple):
    seat: int
    amount: int
    reason: str
    automatic: bool


class PaymentCancelled(NamedTuple):
    """The debtor went out during the pause; nothing more is paid."""

    seat: int


class JackpotOffered(NamedTuple):
    seat: int
    deadline: float


class JackpotPlayed(NamedTuple):
    seat: int
    numbers: tuple[int, ...]
    die: int
    won: bool


class JackpotDeclined(NamedTuple):
    seat: int
    automatic: bool


class BusOffered(NamedTuple):
    seat: int
    deadline: float


class BusChosen(NamedTuple):
    seat: int
    move: str
    automatic: bool


class TeleportOffered(NamedTuple):
    seat: int
    deadline: float


class JumpSkipped(NamedTuple):
    """Speed's X found no property to jump to (R19)."""

    seat: int


class Teleported(NamedTuple):
    seat: int
    square: int
    automatic: bool


class CardDrawn(NamedTuple):
    seat: int
    card: int
    text: str
    reshuffled: bool


class SentToJail(NamedTuple):
    seat: int
    why: JailReason


class LeftJail(NamedTuple):
    seat: int
    how: JailExit


class JailRollFailed(NamedTuple):
    seat: int
    attempts: int


class BuildingBuilt(NamedTuple):
    seat: int
    square: int
    buildings: int


class BuildingSold(NamedTuple):
    seat: int
    square: int
    buildings: int


class PropertyMortgaged(NamedTuple):
    seat: int
    square: int


class MortgageLifted(NamedTuple):
    seat: int
    square: int


class MortgageReminder(NamedTuple):
    seat: int
    square: int
    rounds_left: int


class MortgageExpired(NamedTuple):
    seat: int
    square: int


class OfferMade(NamedTuple):
    offer: str
    frm: int
    to: int
    give_cash: int
    give_squares: tuple[int, ...]
    take_cash: int
    take_squares: tuple[int, ...]
    deadline: float

    @property
    def terms(self) -> Terms:
        return Terms(self.give_cash, self.give_squares, self.take_cash, self.take_squares)


class OfferClosed(NamedTuple):
    """An open offer ends; `how` says why (`OfferEnd`)."""

    offer: str
    how: OfferEnd


class PropertyTransferred(NamedTuple):
    frm: int
    to: int
    square: int


class TurnSkipped(NamedTuple):
    seat: int
    missed_turns: int


class SeatActed(NamedTuple):
    """A seat that had missed turns acted: its counter starts again (R16)."""

    seat: int


class SeatWentOut(NamedTuple):
    seat: int
    how: OutHow
    #: Team mode: the ally who receives the properties
    heir: int | None


class TurnEnded(NamedTuple):
    seat: int


class GameFinished(NamedTuple):
    winner: int | None
    placement: tuple[int, ...]
    reason: str  # last_standing | round_limit
    round: int


Event = (
    TurnStarted
    | RollOffered
    | DiceRolled
    | Moved
    | Transfer
    | BuyOffered
    | PropertyBought
    | PropertyDeclined
    | AuctionStarted
    | AuctionBid
    | AuctionPassed
    | AuctionEnded
    | PaymentRequired
    | PaymentMade
    | PaymentCancelled
    | JackpotOffered
    | JackpotPlayed
    | JackpotDeclined
    | BusOffered
    | BusChosen
    | TeleportOffered
    | JumpSkipped
    | Teleported
    | CardDrawn
    | SentToJail
    | LeftJail
    | JailRollFailed
    | BuildingBuilt
    | BuildingSold
    | PropertyMortgaged
    | MortgageLifted
    | MortgageReminder
    | MortgageExpired
    | OfferMade
    | OfferClosed
    | PropertyTransferred
    | TurnSkipped
    | SeatActed
    | SeatWentOut
    | TurnEnded
    | GameFinished
)

_EVENT_CLASSES: tuple[type[Any], ...] = (
    TurnStarted,
    RollOffered,
    DiceRolled,
    Moved,
    Transfer,
    BuyOffered,
    PropertyBought,
    PropertyDeclined,
    AuctionStarted,
    AuctionBid,
    AuctionPassed,
    AuctionEnded,
    PaymentRequired,
    PaymentMade,
    PaymentCancelled,
    JackpotOffered,
    JackpotPlayed,
    JackpotDeclined,
    BusOffered,
    BusChosen,
    TeleportOffered,
    JumpSkipped,
    Teleported,
    CardDrawn,
    SentToJail,
    LeftJail,
    JailRollFailed,
    BuildingBuilt,
    BuildingSold,
    PropertyMortgaged,
    MortgageLifted,
    MortgageReminder,
    MortgageExpired,
    OfferMade,
    OfferClosed,
    PropertyTransferred,
    TurnSkipped,
    SeatActed,
    SeatWentOut,
    TurnEnded,
    GameFinished,
)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


EVENT_TYPES: dict[str, type[Any]] = {_snake(cls.__name__): cls for cls in _EVENT_CLASSES}
_TYPE_NAMES: dict[type[Any], str] = {cls: name for name, cls in EVENT_TYPES.items()}


def event_type(event: Event) -> str:
    return _TYPE_NAMES[type(event)]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _generated_to_json(cls: type[Any], name: str) -> Callable[[Any], dict[str, Any]]:
    # One dict display per event class, its fields unpacked and written out: twice as
    # fast as a loop over ``_fields`` (the table serialises every event it stores).
    values = [f"v{i}" for i in range(len(cls._fields))]
    entries = "".join(
        f", {field!r}: ({v} if not isinstance({v}, tuple) else _plain({v}))"
        for field, v in zip(cls._fields, values, strict=True)
    )
    unpack = f"    ({', '.join(values)},) = e\n" if values else ""
    namespace: dict[str, Any] = {"_plain": _plain}
    exec(f"def to_json(e):\n{unpack}    return {{'type': {name!r}{entries}}}\n", namespace)
    to_json: Callable[[Any], dict[str, Any]] = namespace["to_json"]
    return to_json


_TO_JSON = {cls: _generated_to_json(cls, name) for name, cls in EVENT_TYPES.items()}


def event_to_json(event: Event) -> dict[str, Any]:
    """``{"type": <its name>, <each field>: <its value, tuples as lists>}``."""
    return _TO_JSON[type(event)](event)


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(v) for v in value)
    return value


def event_from_json(data: dict[str, Any]) -> Event:
    cls = EVENT_TYPES[data["type"]]
    event: Event = cls(*(_tuple(data[name]) for name in cls._fields))
    return event


compare_by_type(EVENT_TYPES.values())
# The engine builds events from all their fields at once (``Ctx.emit``): none may have a
# default that a caller could leave out.
assert not any(cls._field_defaults for cls in _EVENT_CLASSES), "events have no field defaults"
