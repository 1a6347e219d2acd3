"""Typed models of every rules command and event: GENERATED, do not edit.

Written by `python -m opolyx_contracts.generate_game` from the rules library's command and
event classes (`opolyx_rules.commands`, `opolyx_rules.events`); `tests/test_game.py` fails
when this file differs from what the generator writes. The JSON form is the rules' own:
`{"type": "roll", "seat": 0}`. `type` discriminates the unions `GameCommand` and
`GameEvent`. Commands refuse unknown fields and non-strict scalars (an error names the
field); events tolerate unknown fields (a newer writer within one contract version).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, Strict, TypeAdapter
from typing_extensions import TypedDict

__all__ = [
    "COMMAND_MODELS",
    "EVENT_MODELS",
    "AcceptOffer",
    "AuctionBid",
    "AuctionEnded",
    "AuctionPassed",
    "AuctionStarted",
    "Bid",
    "Build",
    "BuildingBuilt",
    "BuildingSold",
    "BusChosen",
    "BusOffered",
    "Buy",
    "BuyOffered",
    "CancelOffer",
    "CardDrawn",
    "ChooseBus",
    "CommandModel",
    "DeclareBankruptcy",
    "Decline",
    "DiceRolled",
    "EventModel",
    "GameCommand",
    "GameEvent",
    "GameFinishedEvent",
    "JackpotBet",
    "JackpotDecline",
    "JackpotDeclined",
    "JackpotOffered",
    "JackpotPlayed",
    "JailRollFailed",
    "JumpSkipped",
    "LeftJail",
    "Mortgage",
    "MortgageExpired",
    "MortgageLifted",
    "MortgageReminder",
    "Moved",
    "OfferClosed",
    "OfferMade",
    "OfferTrade",
    "Pass",
    "Pay",
    "PayBail",
    "PaymentCancelled",
    "PaymentMade",
    "PaymentRequired",
    "PropertyBought",
    "PropertyDeclined",
    "PropertyMortgaged",
    "PropertyTransferred",
    "RejectOffer",
    "Resign",
    "Roll",
    "RollOffered",
    "SeatActed",
    "SeatView",
    "SeatWentOut",
    "Sell",
    "SentToJail",
    "SquareView",
    "Teleport",
    "TeleportOffered",
    "Teleported",
    "Timeout",
    "Transfer",
    "TurnEnded",
    "TurnSkipped",
    "TurnStarted",
    "Unmortgage",
    "parse_command",
    "parse_event",
]

SInt = Annotated[int, Strict()]
SStr = Annotated[str, Strict()]
SBool = Annotated[bool, Strict()]
SFloat = Annotated[float, Strict()]
BoundedText = Annotated[str, Strict(), Field(max_length=64)]


class CommandModel(BaseModel):
    """A seat's command (or the table's timeout) as sent to a table."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class EventModel(BaseModel):
    """Something that happened in a game, as the rules report it."""

    model_config = ConfigDict(frozen=True, extra="ignore")


# --- commands --------------------------------------------------------------------------


class Roll(CommandModel):
    type: Literal["roll"] = "roll"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Buy(CommandModel):
    type: Literal["buy"] = "buy"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Decline(CommandModel):
    type: Literal["decline"] = "decline"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Bid(CommandModel):
    type: Literal["bid"] = "bid"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Pass(CommandModel):
    type: Literal["pass"] = "pass"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Build(CommandModel):
    type: Literal["build"] = "build"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    square: SInt


class Sell(CommandModel):
    type: Literal["sell"] = "sell"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    square: SInt


class Mortgage(CommandModel):
    type: Literal["mortgage"] = "mortgage"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    square: SInt


class Unmortgage(CommandModel):
    type: Literal["unmortgage"] = "unmortgage"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    square: SInt


class PayBail(CommandModel):
    type: Literal["pay_bail"] = "pay_bail"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Pay(CommandModel):
    type: Literal["pay"] = "pay"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class DeclareBankruptcy(CommandModel):
    type: Literal["bankrupt"] = "bankrupt"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class Resign(CommandModel):
    type: Literal["resign"] = "resign"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class JackpotBet(CommandModel):
    type: Literal["jackpot"] = "jackpot"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    numbers: Annotated[tuple[SInt, ...], Field(max_length=64)]


class JackpotDecline(CommandModel):
    type: Literal["jackpot_decline"] = "jackpot_decline"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""


class ChooseBus(CommandModel):
    type: Literal["bus"] = "bus"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    move: BoundedText


class Teleport(CommandModel):
    type: Literal["teleport"] = "teleport"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    square: SInt


class OfferTrade(CommandModel):
    type: Literal["offer"] = "offer"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    to: SInt
    give_cash: SInt = 0
    give_squares: Annotated[tuple[SInt, ...], Field(max_length=64)] = ()
    take_cash: SInt = 0
    take_squares: Annotated[tuple[SInt, ...], Field(max_length=64)] = ()


class AcceptOffer(CommandModel):
    type: Literal["accept"] = "accept"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    offer: BoundedText


class RejectOffer(CommandModel):
    type: Literal["reject"] = "reject"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    offer: BoundedText


class CancelOffer(CommandModel):
    type: Literal["cancel"] = "cancel"
    seat: SInt | None = None
    """The acting seat; when absent, the sender's own seat."""
    offer: BoundedText


class Timeout(CommandModel):
    """Not a seat's choice: the earliest due deadline fires (R16)."""

    type: Literal["timeout"] = "timeout"


# --- events ----------------------------------------------------------------------------


class TurnStarted(EventModel):
    type: Literal["turn_started"] = "turn_started"
    seat: SInt
    round: SInt
    deadline: SFloat


class RollOffered(EventModel):
    """Another roll in the same turn (doubles, triples, bail paid), with its own management window
    before it.
    """

    type: Literal["roll_offered"] = "roll_offered"
    seat: SInt
    deadline: SFloat


class DiceRolled(EventModel):
    type: Literal["dice_rolled"] = "dice_rolled"
    seat: SInt
    white: tuple[SInt, SInt]
    third: Literal["1", "2", "3", "bus", "x"] | None
    doubles: SInt
    roll_again: SBool
    x_jump: SBool


class Moved(EventModel):
    type: Literal["moved"] = "moved"
    seat: SInt
    frm: SInt
    to: SInt
    passed_start: SBool
    how: Literal["roll", "card", "jump", "bus"]


class Transfer(EventModel):
    """``amount`` moves from ``frm`` to ``to``: a seat number, BANK or POT; ``reason`` is one of
    `TRANSFER_REASONS`.
    """

    type: Literal["transfer"] = "transfer"
    frm: SInt
    to: SInt
    amount: SInt
    reason: SStr


class BuyOffered(EventModel):
    type: Literal["buy_offered"] = "buy_offered"
    seat: SInt
    square: SInt
    deadline: SFloat


class PropertyBought(EventModel):
    type: Literal["property_bought"] = "property_bought"
    seat: SInt
    square: SInt
    price: SInt


class PropertyDeclined(EventModel):
    type: Literal["property_declined"] = "property_declined"
    seat: SInt
    square: SInt
    automatic: SBool


class AuctionStarted(EventModel):
    type: Literal["auction_started"] = "auction_started"
    square: SInt
    decliner: SInt
    order: tuple[SInt, ...]
    bidder: SInt
    minimum: SInt
    deadline: SFloat


class AuctionBid(EventModel):
    type: Literal["auction_bid"] = "auction_bid"
    seat: SInt
    amount: SInt
    next_bidder: SInt
    minimum: SInt
    deadline: SFloat


class AuctionPassed(EventModel):
    type: Literal["auction_passed"] = "auction_passed"
    seat: SInt
    automatic: SBool
    next_bidder: SInt
    deadline: SFloat


class AuctionEnded(EventModel):
    type: Literal["auction_ended"] = "auction_ended"
    square: SInt
    winner: SInt | None
    price: SInt


class PaymentRequired(EventModel):
    type: Literal["payment_required"] = "payment_required"
    seat: SInt
    amount: SInt
    creditors: tuple[tuple[SInt, SInt], ...]
    reason: SStr
    deadline: SFloat
    then: Literal["landed", "roll", "move", "dice"]
    steps: SInt
    queue: tuple[tuple[SInt, SInt, SInt], ...]


class PaymentMade(EventModel):
    type: Literal["payment_made"] = "payment_made"
    seat: SInt
    amount: SInt
    reason: SStr
    automatic: SBool


class PaymentCancelled(EventModel):
    """The debtor went out during the pause; nothing more is paid."""

    type: Literal["payment_cancelled"] = "payment_cancelled"
    seat: SInt


class JackpotOffered(EventModel):
    type: Literal["jackpot_offered"] = "jackpot_offered"
    seat: SInt
    deadline: SFloat


class JackpotPlayed(EventModel):
    type: Literal["jackpot_played"] = "jackpot_played"
    seat: SInt
    numbers: tuple[SInt, ...]
    die: SInt
    won: SBool


class JackpotDeclined(EventModel):
    type: Literal["jackpot_declined"] = "jackpot_declined"
    seat: SInt
    automatic: SBool


class BusOffered(EventModel):
    type: Literal["bus_offered"] = "bus_offered"
    seat: SInt
    deadline: SFloat


class BusChosen(EventModel):
    type: Literal["bus_chosen"] = "bus_chosen"
    seat: SInt
    move: SStr
    automatic: SBool


class TeleportOffered(EventModel):
    type: Literal["teleport_offered"] = "teleport_offered"
    seat: SInt
    deadline: SFloat


class JumpSkipped(EventModel):
    """Speed's X found no property to jump to (R19)."""

    type: Literal["jump_skipped"] = "jump_skipped"
    seat: SInt


class Teleported(EventModel):
    type: Literal["teleported"] = "teleported"
    seat: SInt
    square: SInt
    automatic: SBool


class CardDrawn(EventModel):
    type: Literal["card_drawn"] = "card_drawn"
    seat: SInt
    card: SInt
    text: SStr
    reshuffled: SBool


class SentToJail(EventModel):
    type: Literal["sent_to_jail"] = "sent_to_jail"
    seat: SInt
    why: Literal["square", "card", "three_doubles"]


class LeftJail(EventModel):
    type: Literal["left_jail"] = "left_jail"
    seat: SInt
    how: Literal["doubles", "bail"]


class JailRollFailed(EventModel):
    type: Literal["jail_roll_failed"] = "jail_roll_failed"
    seat: SInt
    attempts: SInt


class BuildingBuilt(EventModel):
    type: Literal["building_built"] = "building_built"
    seat: SInt
    square: SInt
    buildings: SInt


class BuildingSold(EventModel):
    type: Literal["building_sold"] = "building_sold"
    seat: SInt
    square: SInt
    buildings: SInt


class PropertyMortgaged(EventModel):
    type: Literal["property_mortgaged"] = "property_mortgaged"
    seat: SInt
    square: SInt


class MortgageLifted(EventModel):
    type: Literal["mortgage_lifted"] = "mortgage_lifted"
    seat: SInt
    square: SInt


class MortgageReminder(EventModel):
    type: Literal["mortgage_reminder"] = "mortgage_reminder"
    seat: SInt
    square: SInt
    rounds_left: SInt


class MortgageExpired(EventModel):
    type: Literal["mortgage_expired"] = "mortgage_expired"
    seat: SInt
    square: SInt


class OfferMade(EventModel):
    type: Literal["offer_made"] = "offer_made"
    offer: SStr
    frm: SInt
    to: SInt
    give_cash: SInt
    give_squares: tuple[SInt, ...]
    take_cash: SInt
    take_squares: tuple[SInt, ...]
    deadline: SFloat


class OfferClosed(EventModel):
    """An open offer ends; `how` says why (`OfferEnd`)."""

    type: Literal["offer_closed"] = "offer_closed"
    offer: SStr
    how: Literal["accepted", "rejected", "cancelled", "expired", "withdrawn", "turn_ended"]


class PropertyTransferred(EventModel):
    type: Literal["property_transferred"] = "property_transferred"
    frm: SInt
    to: SInt
    square: SInt


class TurnSkipped(EventModel):
    type: Literal["turn_skipped"] = "turn_skipped"
    seat: SInt
    missed_turns: SInt


class SeatActed(EventModel):
    """A seat that had missed turns acted: its counter starts again (R16)."""

    type: Literal["seat_acted"] = "seat_acted"
    seat: SInt


class SeatWentOut(EventModel):
    type: Literal["seat_went_out"] = "seat_went_out"
    seat: SInt
    how: Literal["bankrupt", "resigned"]
    heir: SInt | None


class TurnEnded(EventModel):
    type: Literal["turn_ended"] = "turn_ended"
    seat: SInt


class GameFinishedEvent(EventModel):
    type: Literal["game_finished"] = "game_finished"
    winner: SInt | None
    placement: tuple[SInt, ...]
    reason: SStr
    round: SInt


# --- the public view's seats and squares -----------------------------------------------


class SeatView(TypedDict):
    """One seat in the public view."""

    seat: SInt
    cash: SInt
    position: SInt
    in_jail: SBool
    jail_rolls: SInt
    out: SBool
    out_order: SInt
    missed_turns: SInt
    team: SInt | None


class SquareView(TypedDict):
    """One property in the public view."""

    square: SInt
    owner: SInt | None
    buildings: SInt
    mortgaged: SBool
    mortgaged_round: SInt


GameCommand: TypeAlias = Annotated[
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
    | Timeout,
    Field(discriminator="type"),
]
GameEvent: TypeAlias = Annotated[
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
    | GameFinishedEvent,
    Field(discriminator="type"),
]

COMMAND_MODELS: dict[str, type[CommandModel]] = {
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
"""Command model by JSON `type`."""
EVENT_MODELS: dict[str, type[EventModel]] = {
    "turn_started": TurnStarted,
    "roll_offered": RollOffered,
    "dice_rolled": DiceRolled,
    "moved": Moved,
    "transfer": Transfer,
    "buy_offered": BuyOffered,
    "property_bought": PropertyBought,
    "property_declined": PropertyDeclined,
    "auction_started": AuctionStarted,
    "auction_bid": AuctionBid,
    "auction_passed": AuctionPassed,
    "auction_ended": AuctionEnded,
    "payment_required": PaymentRequired,
    "payment_made": PaymentMade,
    "payment_cancelled": PaymentCancelled,
    "jackpot_offered": JackpotOffered,
    "jackpot_played": JackpotPlayed,
    "jackpot_declined": JackpotDeclined,
    "bus_offered": BusOffered,
    "bus_chosen": BusChosen,
    "teleport_offered": TeleportOffered,
    "jump_skipped": JumpSkipped,
    "teleported": Teleported,
    "card_drawn": CardDrawn,
    "sent_to_jail": SentToJail,
    "left_jail": LeftJail,
    "jail_roll_failed": JailRollFailed,
    "building_built": BuildingBuilt,
    "building_sold": BuildingSold,
    "property_mortgaged": PropertyMortgaged,
    "mortgage_lifted": MortgageLifted,
    "mortgage_reminder": MortgageReminder,
    "mortgage_expired": MortgageExpired,
    "offer_made": OfferMade,
    "offer_closed": OfferClosed,
    "property_transferred": PropertyTransferred,
    "turn_skipped": TurnSkipped,
    "seat_acted": SeatActed,
    "seat_went_out": SeatWentOut,
    "turn_ended": TurnEnded,
    "game_finished": GameFinishedEvent,
}
"""Event model by JSON `type`."""


_COMMANDS: TypeAdapter[GameCommand] = TypeAdapter(GameCommand)
_EVENTS: TypeAdapter[GameEvent] = TypeAdapter(GameEvent)


def parse_command(data: dict[str, Any] | str | bytes) -> GameCommand:
    """A command from its JSON form (object, or JSON text); raises `ValidationError`."""
    if isinstance(data, dict):
        return _COMMANDS.validate_python(data)
    return _COMMANDS.validate_json(data)


def parse_event(data: dict[str, Any] | str | bytes) -> GameEvent:
    """An event from its JSON form (object, or JSON text); raises `ValidationError`."""
    if isinstance(data, dict):
        return _EVENTS.validate_python(data)
    return _EVENTS.validate_json(data)
