"""Trades (R10): offers of cash and properties, the fairness rule, at most three open
offers per proposer, and the re-check on acceptance.

The terms of a trade are one value, ``Terms``; the offer command, the offer event and the
open offer in the state each carry them (flat in their JSON) and expose ``.terms``.
"""

from __future__ import annotations

from typing import NamedTuple

from .assets import are_allies, group_has_buildings, prop, trade_side_value
from .board import PROPERTY_SLOT
from .commands import OfferTrade, Terms
from .management import window
from .refusal import Refusal
from .state import AuctionPending, Offer, State

__all__ = [
    "OfferPreview",
    "Terms",
    "can_offer",
    "check_offer",
    "check_offer_terms",
    "find_offer",
    "preview_offer",
]

_EMPTY = Refusal("trade/empty", "an offer must give or take something")
_DUPLICATE = Refusal("trade/duplicate_square", "a square is listed twice")


def can_offer(state: State, seat: int) -> bool:
    """A seat may propose before rolling, or while it is paused for a debt (R10, R11: a
    debtor may trade during its pause, also one opened by another seat's card)."""
    return (
        not state.finished
        and window(state, seat) is not None
        and sum(1 for o in state.offers if o.frm == seat) < state.config.max_open_offers
    )


def _check_side(
    state: State, holder: int, cash: int, squares: tuple[int, ...], who: str
) -> Refusal | None:
    if cash < 0:
        return Refusal("trade/negative_cash", f"{who} cash cannot be negative")
    if state.seats[holder].cash < cash:
        return Refusal("trade/insufficient_cash", f"{who} side does not have {cash} in cash")
    # Cash promised as the leading bid of an auction cannot be traded away (R23.14).
    pending = state.pending
    if (
        isinstance(pending, AuctionPending)
        and pending.leader == holder
        and state.seats[holder].cash - cash < pending.bid
    ):
        return Refusal("trade/cash_committed", f"{who} side's cash backs an auction bid")
    if len(set(squares)) != len(squares):
        return _DUPLICATE
    for square in squares:
        if square not in PROPERTY_SLOT:
            return Refusal("property/unknown", f"square {square} is not a property")
        if prop(state, square).owner != holder:
            return Refusal("trade/not_owned", f"square {square} is not held by the {who} side")
        if group_has_buildings(state, square):
            return Refusal(
                "trade/has_buildings", f"square {square}'s group has buildings; sell them first"
            )
    return None


def check_offer_terms(state: State, frm: int, to: int, terms: Terms) -> Refusal | None:
    """Holdings, cash and fairness; used when offering and again when accepting."""
    refusal = _check_side(
        state, frm, terms.give_cash, terms.give_squares, "proposer's"
    ) or _check_side(state, to, terms.take_cash, terms.take_squares, "receiver's")
    if refusal:
        return refusal
    give = trade_side_value(state, terms.give_cash, terms.give_squares)
    take = trade_side_value(state, terms.take_cash, terms.take_squares)
    if give == 0 and take == 0:
        return _EMPTY
    if are_allies(state, frm, to):
        return None
    small, large = min(give, take), max(give, take)
    if small * 100 < large * state.config.fairness_pct:
        return Refusal(
            "trade/unfair",
            f"the smaller side ({small}) must be worth at least "
            f"{state.config.fairness_pct}% of the larger ({large})",
        )
    return None


def check_offer(state: State, command: OfferTrade) -> Refusal | None:
    """The guard of ``OfferTrade``."""
    seat, to = command.seat, command.to
    if not can_offer(state, seat):
        if window(state, seat) is not None:
            return Refusal(
                "trade/too_many_offers",
                f"at most {state.config.max_open_offers} open offers at once",
            )
        return Refusal(
            "trade/not_now", "offers are made on your turn before rolling, or in your payment pause"
        )
    if not 0 <= to < len(state.seats) or to == seat:
        return Refusal("trade/bad_receiver", f"seat {to} cannot receive your offer")
    if state.seats[to].out:
        return Refusal("trade/bad_receiver", f"seat {to} is out of the game")
    return check_offer_terms(state, seat, to, command.terms)


class OfferPreview(NamedTuple):
    """What a proposer sees before sending an offer: both sides' R10 values and whether
    the offer would be accepted now (the same guard as `OfferTrade`)."""

    give_value: int
    """The proposer's side: cash + price (half price when mortgaged) of its squares."""
    take_value: int
    share_pct: int
    """The smaller side's value in whole percent of the larger's (100 when both are 0)."""
    fairness_pct: int
    """The smaller side must be worth at least this share of the larger (R10)."""
    allies: bool
    """Team mates trade freely: the fairness rule does not apply to them."""
    refusal: Refusal | None
    """Why `OfferTrade` with these terms would be refused now; None when it would not."""


def _side_value(state: State, cash: int, squares: tuple[int, ...]) -> int:
    """R10 value of a side, counting only squares that are properties (an unknown square
    is the refusal's business, not a crash)."""
    return trade_side_value(state, max(0, cash), tuple(sq for sq in squares if sq in PROPERTY_SLOT))


def preview_offer(state: State, seat: int, to: int, terms: Terms) -> OfferPreview:
    """The verdict the offer dialog shows, computed by the guard the table applies."""
    command = OfferTrade(seat, to, *terms)
    valid_receiver = 0 <= to < len(state.seats) and to != seat
    give = _side_value(state, terms.give_cash, terms.give_squares)
    take = _side_value(state, terms.take_cash, terms.take_squares)
    small, large = min(give, take), max(give, take)
    return OfferPreview(
        give_value=give,
        take_value=take,
        share_pct=100 if large == 0 else small * 100 // large,
        fairness_pct=state.config.fairness_pct,
        allies=valid_receiver and are_allies(state, seat, to),
        refusal=check_offer(state, command),
    )


def find_offer(state: State, offer_id: str) -> Offer | None:
    for offer in state.offers:
        if offer.id == offer_id:
            return offer
    return None


def check_answer(state: State, seat: int, offer_id: str, *, accepting: bool) -> Refusal | None:
    """The guard of accepting or rejecting an offer: it must be open and made to ``seat``;
    an acceptance re-checks the terms (R10)."""
    offer = find_offer(state, offer_id)
    if offer is None:
        return Refusal("trade/not_open", f"offer {offer_id} is not open")
    if offer.to != seat:
        if accepting:
            return Refusal("trade/not_yours", f"offer {offer_id} was not made to you")
        return Refusal("trade/not_yours", "only the receiver can do that")
    if accepting:
        return check_offer_terms(state, offer.frm, offer.to, offer.terms)
    return None


def check_cancel(state: State, seat: int, offer_id: str) -> Refusal | None:
    offer = find_offer(state, offer_id)
    if offer is None:
        return Refusal("trade/not_open", f"offer {offer_id} is not open")
    if offer.frm != seat:
        return Refusal("trade/not_yours", "only the proposer can do that")
    return None
