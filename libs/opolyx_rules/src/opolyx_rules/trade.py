"""Trades (R10): offers of cash and properties, the fairness rule, at most three open
offers per proposer, and the re-check on acceptance."""

from __future__ import annotations

from .assets import are_allies, group_has_buildings, prop, trade_side_value
from .board import PROPERTY_SLOT
from .commands import OfferTrade
from .errors import RulesError
from .management import window
from .state import AuctionPending, Offer, State


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
) -> RulesError | None:
    if cash < 0:
        return RulesError("trade/negative_cash", f"{who} cash cannot be negative")
    if state.seats[holder].cash < cash:
        return RulesError("trade/insufficient_cash", f"{who} side does not have {cash} in cash")
    # Cash promised as the leading bid of an auction cannot be traded away.
    pending = state.pending
    if (
        isinstance(pending, AuctionPending)
        and pending.leader == holder
        and state.seats[holder].cash - cash < pending.bid
    ):
        return RulesError("trade/cash_committed", f"{who} side's cash backs an auction bid")
    if len(set(squares)) != len(squares):
        return RulesError("trade/duplicate_square", "a square is listed twice")
    for square in squares:
        if square not in PROPERTY_SLOT:
            return RulesError("property/unknown", f"square {square} is not a property")
        if prop(state, square).owner != holder:
            return RulesError("trade/not_owned", f"square {square} is not held by the {who} side")
        if group_has_buildings(state, square):
            return RulesError(
                "trade/has_buildings", f"square {square}'s group has buildings; sell them first"
            )
    return None


def check_offer_terms(
    state: State,
    frm: int,
    to: int,
    give_cash: int,
    give_squares: tuple[int, ...],
    take_cash: int,
    take_squares: tuple[int, ...],
) -> RulesError | None:
    """Holdings, cash and fairness; used when offering and again when accepting."""
    error = _check_side(state, frm, give_cash, give_squares, "proposer's") or _check_side(
        state, to, take_cash, take_squares, "receiver's"
    )
    if error:
        return error
    give = trade_side_value(state, give_cash, give_squares)
    take = trade_side_value(state, take_cash, take_squares)
    if give == 0 and take == 0:
        return RulesError("trade/empty", "an offer must give or take something")
    if are_allies(state, frm, to):
        return None
    small, large = min(give, take), max(give, take)
    if small * 100 < large * state.config.fairness_pct:
        return RulesError(
            "trade/unfair",
            f"the smaller side ({small}) must be worth at least "
            f"{state.config.fairness_pct}% of the larger ({large})",
        )
    return None


def check_offer(state: State, command: OfferTrade) -> RulesError | None:
    seat, to = command.seat, command.to
    if not can_offer(state, seat):
        if window(state, seat) is not None:
            return RulesError(
                "trade/too_many_offers",
                f"at most {state.config.max_open_offers} open offers at once",
            )
        return RulesError(
            "trade/not_now", "offers are made on your turn before rolling, or in your payment pause"
        )
    if not 0 <= to < len(state.seats) or to == seat:
        return RulesError("trade/bad_receiver", f"seat {to} cannot receive your offer")
    if state.seats[to].out:
        return RulesError("trade/bad_receiver", f"seat {to} is out of the game")
    return check_offer_terms(
        state,
        seat,
        to,
        command.give_cash,
        command.give_squares,
        command.take_cash,
        command.take_squares,
    )


def find_offer(state: State, offer_id: str) -> Offer | None:
    for offer in state.offers:
        if offer.id == offer_id:
            return offer
    return None
