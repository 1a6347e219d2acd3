"""``evolve(state, event)``: the only place where a state changes. It never checks
anything and never fails on an event that ``decide`` produced.

``apply_in_place`` mutates a *private copy* (the engine's scratch state, or the copy
``evolve`` makes); shared tuples inside it are replaced, never mutated.
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from .board import JAIL, PROPERTY_SLOT
from .chance import draw_card, draw_dice, draw_jackpot_die, draw_speed_die
from .events import (
    BANK,
    POT,
    AuctionBid,
    AuctionEnded,
    AuctionPassed,
    AuctionStarted,
    BuildingBuilt,
    BuildingSold,
    BusChosen,
    BusOffered,
    BuyOffered,
    CardDrawn,
    DiceRolled,
    Event,
    GameFinished,
    JackpotDeclined,
    JackpotOffered,
    JackpotPlayed,
    JailRollFailed,
    JumpSkipped,
    LeftJail,
    MortgageExpired,
    MortgageLifted,
    MortgageReminder,
    Moved,
    OfferClosed,
    OfferMade,
    PaymentCancelled,
    PaymentMade,
    PaymentRequired,
    PropertyBought,
    PropertyDeclined,
    PropertyMortgaged,
    PropertyTransferred,
    RollOffered,
    SeatActed,
    SeatWentOut,
    SentToJail,
    Teleported,
    TeleportOffered,
    Transfer,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
)
from .state import (
    AuctionPending,
    BusPending,
    BuyPending,
    JackpotPending,
    Offer,
    PaymentPending,
    PropState,
    RollPending,
    SeatState,
    State,
    TeleportPending,
)


def evolve(state: State, event: Event) -> State:
    """The state after ``event``; ``state`` itself is left unchanged."""
    s = state.copy()
    apply_in_place(s, event)
    return s


def _set_seat(s: State, seat: SeatState) -> None:
    seats = list(s.seats)
    seats[seat.seat] = seat
    s.seats = tuple(seats)


def _set_prop(s: State, prop: PropState) -> None:
    props = list(s.props)
    props[PROPERTY_SLOT[prop.square]] = prop
    s.props = tuple(props)


def _prop(s: State, square: int) -> PropState:
    return s.props[PROPERTY_SLOT[square]]


def apply_in_place(s: State, event: Event) -> None:
    match event:
        case Transfer(frm, to, amount, _):
            if frm >= 0:
                seat = s.seats[frm]
                _set_seat(s, seat._replace(cash=seat.cash - amount))
            elif frm == POT:
                s.pot -= amount
            if to >= 0:
                seat = s.seats[to]
                _set_seat(s, seat._replace(cash=seat.cash + amount))
            elif to == POT:
                s.pot += amount
            # BANK is the unbounded source and sink; nothing to record.
        case TurnStarted(seat, round_no, deadline):
            s.current_seat = seat
            s.round = round_no
            s.pending = RollPending(seat, deadline)
            s.doubles = 0
            s.roll_again = False
            s.x_jump = False
            s.built = frozenset()
            s.dice = None
            s.third = None
        case RollOffered(seat, deadline):
            s.pending = RollPending(seat, deadline)
            s.roll_again = False
        case DiceRolled(seat, white, third, doubles, roll_again, x_jump):
            _, s.rng, s.script = draw_dice(s.rng, s.script)
            if third is not None:
                _, s.rng, s.script = draw_speed_die(s.rng, s.script)
            s.dice = white
            s.third = third
            s.doubles = doubles
            s.roll_again = roll_again
            s.x_jump = x_jump
            s.pending = None
        case Moved(seat, _, to, _, how):
            _set_seat(s, s.seats[seat]._replace(position=to))
            if how == "jump":
                s.x_jump = False
            s.pending = None
        case JumpSkipped():
            s.x_jump = False
        case BuyOffered(seat, square, deadline):
            s.pending = BuyPending(seat, deadline, square)
        case PropertyBought(seat, square, _):
            _set_prop(s, _prop(s, square)._replace(owner=seat))
            s.pending = None
        case PropertyDeclined():
            s.pending = None
        case AuctionStarted(square, decliner, order, bidder, minimum, deadline):
            s.pending = AuctionPending(
                bidder, deadline, square, decliner, order, 0, None, minimum, frozenset()
            )
        case AuctionBid(seat, amount, next_bidder, minimum, deadline):
            auction = s.pending
            assert isinstance(auction, AuctionPending)
            s.pending = replace(
                auction,
                seat=next_bidder,
                deadline=deadline,
                bid=amount,
                leader=seat,
                minimum=minimum,
            )
        case AuctionPassed(seat, _, next_bidder, deadline):
            auction = s.pending
            assert isinstance(auction, AuctionPending)
            leader = None if seat == auction.leader else auction.leader
            s.pending = replace(
                auction,
                seat=next_bidder,
                deadline=deadline,
                leader=leader,
                passed=auction.passed | {seat},
            )
        case AuctionEnded(square, winner, _):
            if winner is not None:
                _set_prop(s, _prop(s, square)._replace(owner=winner))
            s.pending = None
        case PaymentRequired(seat, amount, creditors, reason, deadline, then, steps, queue):
            s.pending = PaymentPending(
                seat, deadline, amount, creditors, reason, then, steps, queue
            )
        case PaymentMade() | PaymentCancelled():
            s.pending = None
        case JackpotOffered(seat, deadline):
            s.pending = JackpotPending(seat, deadline)
        case JackpotPlayed():
            _, s.rng, s.script = draw_jackpot_die(s.rng, s.script)
            s.pending = None
        case JackpotDeclined():
            s.pending = None
        case BusOffered(seat, deadline):
            s.pending = BusPending(seat, deadline)
        case BusChosen():
            s.pending = None
        case TeleportOffered(seat, deadline):
            s.pending = TeleportPending(seat, deadline)
        case Teleported(seat, square, _):
            _set_seat(s, s.seats[seat]._replace(position=square))
            s.pending = None
        case CardDrawn(_, card, _, _):
            _, reshuffled, s.rng, s.script = draw_card(s.rng, s.script, s.drawn_cards)
            s.drawn_cards = (0 if reshuffled else s.drawn_cards) | (1 << card)
            s.last_card = card
        case SentToJail(seat, _):
            _set_seat(s, s.seats[seat]._replace(position=JAIL, in_jail=True, jail_rolls=0))
            s.roll_again = False
            s.x_jump = False
            s.pending = None
        case LeftJail(seat, _):
            _set_seat(s, s.seats[seat]._replace(in_jail=False, jail_rolls=0))
        case JailRollFailed(seat, attempts):
            _set_seat(s, s.seats[seat]._replace(jail_rolls=attempts))
            s.pending = None
        case BuildingBuilt(_, square, buildings):
            _set_prop(s, _prop(s, square)._replace(buildings=buildings))
            s.built = s.built | {square}
        case BuildingSold(_, square, buildings):
            _set_prop(s, _prop(s, square)._replace(buildings=buildings))
        case PropertyMortgaged(_, square):
            _set_prop(s, _prop(s, square)._replace(mortgaged=True, mortgaged_round=s.round))
        case MortgageLifted(_, square):
            _set_prop(s, _prop(s, square)._replace(mortgaged=False, mortgaged_round=0))
        case MortgageExpired(_, square):
            _set_prop(s, PropState(square=square))
        case MortgageReminder():
            pass
        case OfferMade(offer_id, frm, to, give_cash, give_squares, take_cash, take_squares, dl):
            s.offers = (
                *s.offers,
                Offer(offer_id, frm, to, give_cash, give_squares, take_cash, take_squares, dl),
            )
            s.offers_made += 1
        case OfferClosed(offer_id, _):
            s.offers = tuple(o for o in s.offers if o.id != offer_id)
        case PropertyTransferred(_, to, square):
            _set_prop(s, _prop(s, square)._replace(owner=to))
        case TurnSkipped(seat, missed):
            _set_seat(s, s.seats[seat]._replace(missed_turns=missed))
            s.pending = None
        case SeatActed(seat):
            _set_seat(s, s.seats[seat]._replace(missed_turns=0))
        case SeatWentOut(seat, _, heir):
            s.out_count += 1
            _set_seat(
                s,
                s.seats[seat]._replace(out=True, out_order=s.out_count, in_jail=False),
            )
            s.props = tuple(
                (p._replace(owner=heir) if heir is not None else PropState(square=p.square))
                if p.owner == seat
                else p
                for p in s.props
            )
        case TurnEnded():
            s.pending = None
            s.roll_again = False
            s.x_jump = False
        case GameFinished(winner, placement, reason, _):
            s.finished = True
            s.winner = winner
            s.placement = placement
            s.finish_reason = reason
            s.pending = None
            s.offers = ()
        case _:
            assert_never(event)


__all__ = ["BANK", "POT", "apply_in_place", "evolve"]
