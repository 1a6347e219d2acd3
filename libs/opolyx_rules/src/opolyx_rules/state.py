"""The game state: one value holding everything the rules need, including the RNG.

``State`` is immutable by construction: a frozen dataclass whose fields hold tuples,
NamedTuples and frozen values. The engine builds the next state on a ``Draft``, a mutable
private copy with the same fields, and freezes it when the decision is complete (the
draft *becomes* the state, nothing is copied again); no one else can change a state. The
whole state round-trips through JSON (``state_to_json``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from .board import PROPERTY_SQUARES
from .commands import Terms
from .modes import ModeConfig
from .values import compare_by_type

SCHEMA_VERSION = 1
RULES_VERSION = "1.0"
RULES_MAJOR = 1


class SeatState(NamedTuple):
    seat: int
    cash: int
    position: int = 0
    in_jail: bool = False
    #: failed rolls for doubles during this stay in jail
    jail_rolls: int = 0
    out: bool = False
    #: 1 for the first seat to go out, 2 for the next...; 0 while in play
    out_order: int = 0
    missed_turns: int = 0
    #: Team mode side (0 or 1); None in other modes
    team: int | None = None


class PropState(NamedTuple):
    square: int
    owner: int | None = None
    buildings: int = 0
    mortgaged: bool = False
    #: round in which the mortgage was taken (Speed expiry, R9)
    mortgaged_round: int = 0


class Script(NamedTuple):
    """Outcomes fixed in advance (scenario files): used in order before the RNG."""

    dice: tuple[tuple[int, int], ...] = ()
    speed_die: tuple[str, ...] = ()
    jackpot_die: tuple[int, ...] = ()
    deck: tuple[int, ...] = ()


class PendingKind(StrEnum):
    """The kinds of decision a game can wait for (``pending.kind`` in the state JSON)."""

    ROLL = "roll"
    BUY = "buy"
    AUCTION = "auction"
    PAYMENT = "payment"
    JACKPOT = "jackpot"
    BUS = "bus"
    TELEPORT = "teleport"


class MoveHow(StrEnum):
    """What moved a pawn (``Moved.how``)."""

    ROLL = "roll"
    CARD = "card"
    #: Speed's X: the jump to a property at the end of the move (R19)
    JUMP = "jump"
    BUS = "bus"


class JailReason(StrEnum):
    """Why a seat went to jail (``SentToJail.why``)."""

    SQUARE = "square"
    CARD = "card"
    THREE_DOUBLES = "three_doubles"


class JailExit(StrEnum):
    """How a seat left jail (``LeftJail.how``)."""

    DOUBLES = "doubles"
    BAIL = "bail"


class OfferEnd(StrEnum):
    """How an open offer ended (``OfferClosed.how``)."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    #: a seat it names went out of the game
    WITHDRAWN = "withdrawn"
    #: the proposer's turn ended with it still open
    TURN_ENDED = "turn_ended"


class OutHow(StrEnum):
    """How a seat went out of the game (``SeatWentOut.how``)."""

    BANKRUPT = "bankrupt"
    RESIGNED = "resigned"


class SpeedFace(StrEnum):
    """The faces of Speed's third die (R19): 1, 2, 3, Bus, X, X."""

    ONE = "1"
    TWO = "2"
    THREE = "3"
    BUS = "bus"
    X = "x"

    @property
    def number(self) -> int:
        """The squares a number face adds to the move; 0 for Bus and X."""
        return int(self.value) if self.value.isdigit() else 0


class Then(StrEnum):
    """How play continues once a payment pause closes (R11): the one closed set of
    continuations, resumed by ``flow.resume``."""

    #: the square (or card, or auction) is resolved: jump, roll again or end the turn
    LANDED = "landed"
    #: bail paid before rolling: the roll is offered (same clock, R16)
    ROLL = "roll"
    #: bail after the third failed jail roll: move by that roll (``steps``)
    MOVE = "move"
    #: Unlucky Four paid (R18): the roll goes on
    DICE = "dice"


# The decision the game waits for: who decides (``seat``) and by when (``deadline``,
# absolute seconds), plus what the kind needs. NamedTuples: one is built on most commands
# and they are several times cheaper to build than frozen dataclasses; ``compare_by_type``
# (below) keeps a roll decision from equalling a Jackpot decision with the same fields.


class RollPending(NamedTuple):
    seat: int
    deadline: float

    @property
    def kind(self) -> PendingKind:
        return PendingKind.ROLL


class BuyPending(NamedTuple):
    seat: int
    deadline: float
    square: int

    @property
    def kind(self) -> PendingKind:
        return PendingKind.BUY


class AuctionPending(NamedTuple):
    """``seat`` is the bidder whose turn it is; ``deadline`` is their 10 s."""

    seat: int
    deadline: float
    square: int
    decliner: int
    order: tuple[int, ...]
    #: current highest bid, 0 while nobody has bid
    bid: int
    leader: int | None
    #: the only amount the bidder may bid
    minimum: int
    passed: frozenset[int]

    @property
    def kind(self) -> PendingKind:
        return PendingKind.AUCTION


class PaymentPending(NamedTuple):
    seat: int
    deadline: float
    amount: int
    creditors: tuple[tuple[int, int], ...]
    reason: str
    then: Then
    steps: int
    queue: tuple[tuple[int, int, int], ...]

    @property
    def kind(self) -> PendingKind:
        return PendingKind.PAYMENT


class JackpotPending(NamedTuple):
    seat: int
    deadline: float

    @property
    def kind(self) -> PendingKind:
        return PendingKind.JACKPOT


class BusPending(NamedTuple):
    seat: int
    deadline: float

    @property
    def kind(self) -> PendingKind:
        return PendingKind.BUS


class TeleportPending(NamedTuple):
    seat: int
    deadline: float

    @property
    def kind(self) -> PendingKind:
        return PendingKind.TELEPORT


Pending = (
    RollPending
    | BuyPending
    | AuctionPending
    | PaymentPending
    | JackpotPending
    | BusPending
    | TeleportPending
)
PENDING_CLASSES: tuple[type[Any], ...] = (
    RollPending,
    BuyPending,
    AuctionPending,
    PaymentPending,
    JackpotPending,
    BusPending,
    TeleportPending,
)
compare_by_type(PENDING_CLASSES)


@dataclass(frozen=True, slots=True)
class Offer:
    id: str
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


@dataclass(frozen=True, slots=True)
class State:
    schema_version: int
    rules_version: str
    config: ModeConfig
    seed_commitment: str
    seats: tuple[SeatState, ...]
    #: one entry per property, in board order (``board.PROPERTY_SLOT`` maps squares)
    props: tuple[PropState, ...]
    #: per seat: square -> collectible card boost in percent (fixed at game start)
    boosts: tuple[Mapping[int, int], ...]
    rng: int
    script: Script
    first_seat: int
    round: int
    current_seat: int
    pending: Pending | None = None
    finished: bool = False
    winner: int | None = None
    placement: tuple[int, ...] = ()
    finish_reason: str = ""
    #: Fortuna's Fortune Pot (R18)
    pot: int = 0
    offers: tuple[Offer, ...] = ()
    offers_made: int = 0
    #: bit n set: card n has been drawn since the last shuffle (R15)
    drawn_cards: int = 0
    last_card: int = 0
    #: the white dice of the last roll (utility rent uses their total)
    dice: tuple[int, int] | None = None
    third: SpeedFace | None = None
    #: when the current roll window closes (kept across bail, R16)
    turn_deadline: float = 0.0
    #: doubles rolled in the current turn
    doubles: int = 0
    roll_again: bool = False
    x_jump: bool = False
    #: squares raised this turn (at most one level per street per turn, R8)
    built: frozenset[int] = frozenset()
    out_count: int = 0

    @property
    def mode(self) -> str:
        return self.config.name


class Draft(State):
    """A private, mutable copy of a state that the engine (and only the engine) builds
    the next state on; ``freeze`` turns it into that state in place."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__

    if TYPE_CHECKING:
        seats: tuple[SeatState, ...]
        props: tuple[PropState, ...]
        boosts: tuple[Mapping[int, int], ...]
        rng: int
        script: Script
        round: int
        current_seat: int
        pending: Pending | None
        finished: bool
        winner: int | None
        placement: tuple[int, ...]
        finish_reason: str
        pot: int
        offers: tuple[Offer, ...]
        offers_made: int
        drawn_cards: int
        last_card: int
        dice: tuple[int, int] | None
        third: SpeedFace | None
        turn_deadline: float
        doubles: int
        roll_again: bool
        x_jump: bool
        built: frozenset[int]
        out_count: int


STATE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(State))


def _generated_thaw() -> Any:
    # One assignment per field, written out: several times faster than a loop over the
    # slots, and the copy runs once per command.
    body = "\n".join(f"    d.{name} = s.{name}" for name in STATE_FIELDS)
    namespace: dict[str, Any] = {"_new": object.__new__, "Draft": Draft}
    exec(f"def thaw(s):\n    d = _new(Draft)\n{body}\n    return d\n", namespace)
    return namespace["thaw"]


#: ``thaw(state)``: a mutable private copy of ``state`` (the engine's draft)
thaw: Callable[[State], Draft] = _generated_thaw()
_set_class = object.__setattr__


def freeze(draft: Draft) -> State:
    """The draft becomes an immutable ``State`` (in place; keep no reference to the draft)."""
    _set_class(draft, "__class__", State)
    return draft


def with_fields(state: State, **changes: Any) -> State:
    """A copy of ``state`` with some fields replaced (scenario setup, tests, bots'
    what-if positions); the original is unchanged."""
    draft = thaw(state)
    for name, value in changes.items():
        if name not in STATE_FIELDS:
            raise AttributeError(f"State has no field {name!r}")
        setattr(draft, name, value)
    return freeze(draft)


def initial_props() -> tuple[PropState, ...]:
    return tuple(PropState(square=sq) for sq in PROPERTY_SQUARES)
