"""``evolve(state, event)``: the only place where a state changes. It never checks
anything and never fails on an event that ``decide`` produced. One small handler per
event type, found through a table (faster than a long ``match``).

``apply_in_place`` mutates a *private copy* (the engine's scratch state, or the copy
``evolve`` makes); shared tuples inside it are replaced, never mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .board import JAIL, PROPERTY_SLOT
from .chance import draw_card, draw_dice, draw_jackpot_die, draw_speed_die
from .events import (
    BANK,
    EVENT_TYPES,
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
    Draft,
    JackpotPending,
    MoveHow,
    Offer,
    PaymentPending,
    PropState,
    RollPending,
    SeatState,
    SpeedFace,
    State,
    TeleportPending,
    Then,
    freeze,
    thaw,
)


def evolve(state: State, event: Event) -> State:
    """The state after ``event``; ``state`` itself is left unchanged."""
    s = thaw(state)
    apply_in_place(s, event)
    return freeze(s)


def apply_in_place(s: Draft, event: Event) -> None:
    """Apply ``event`` to ``s``, which must be a private copy (see module docstring)."""
    HANDLERS[type(event)](s, event)


# Every handler reads its event by position only, never by field name: ``Ctx.emit`` hands
# it the plain tuple of the fields it builds the event from. Unpacking a plain tuple is
# one fast step; reading a field of a NamedTuple (by name, by index or by unpacking) takes
# Python's slow general path, several times the cost, on every event of every game.

#: builds a NamedTuple from a tuple of all its fields: for the seats and decisions the
#: handlers build (``_replace`` costs three times more, the constructor twice as much,
#: counted in instructions)
_tuple_new = tuple.__new__


def _set_seat(s: Draft, seat: SeatState) -> None:
    seats = list(s.seats)
    seats[seat[0]] = seat
    s.seats = tuple(seats)


def _set_prop(s: Draft, prop: PropState) -> None:
    props = list(s.props)
    props[PROPERTY_SLOT[prop[0]]] = prop
    s.props = tuple(props)


def _prop(s: Draft, square: int) -> PropState:
    return s.props[PROPERTY_SLOT[square]]


def _clear_pending(s: Draft, e: Any) -> None:
    s.pending = None


def _nothing(s: Draft, e: Any) -> None:
    """Events that only inform (the state already says it all)."""


def _transfer(s: Draft, e: Transfer) -> None:
    frm, to, amount, _ = e
    if frm >= 0 or to >= 0:
        # Money moves in most commands: the changed seats are built directly (cash is
        # field 1 of SeatState; unpacking all fields costs less than slicing them).
        seats = list(s.seats)
        if frm >= 0:
            seat, cash, position, in_jail, rolls, out, order, missed, team = seats[frm]
            seats[frm] = _tuple_new(
                SeatState, (seat, cash - amount, position, in_jail, rolls, out, order, missed, team)
            )
        if to >= 0:
            seat, cash, position, in_jail, rolls, out, order, missed, team = seats[to]
            seats[to] = _tuple_new(
                SeatState, (seat, cash + amount, position, in_jail, rolls, out, order, missed, team)
            )
        s.seats = tuple(seats)
    if frm == POT:
        s.pot -= amount
    if to == POT:
        s.pot += amount
    # BANK is the unbounded source and sink; nothing to record.


_NOTHING_BUILT: frozenset[int] = frozenset()


def _turn_started(s: Draft, e: TurnStarted) -> None:
    seat, round_no, deadline = e
    s.current_seat = seat
    s.round = round_no
    s.pending = _tuple_new(RollPending, (seat, deadline))
    s.turn_deadline = deadline
    s.doubles = 0
    s.roll_again = False
    s.x_jump = False
    s.built = _NOTHING_BUILT
    s.dice = None
    s.third = None


def _roll_offered(s: Draft, e: RollOffered) -> None:
    seat, deadline = e
    s.pending = _tuple_new(RollPending, (seat, deadline))
    s.turn_deadline = deadline
    s.roll_again = False


def _dice_rolled(s: Draft, e: DiceRolled) -> None:
    _, white, third, s.doubles, s.roll_again, s.x_jump = e
    _, s.rng, s.script = draw_dice(s.rng, s.script)
    if third is not None:
        _, s.rng, s.script = draw_speed_die(s.rng, s.script)
        third = SpeedFace(third)
    s.dice = white
    s.third = third
    s.pending = None


def _moved(s: Draft, e: Moved) -> None:
    moved, _, to, _, how = e
    seats = list(s.seats)
    seat, cash, _, in_jail, rolls, out, order, missed, team = seats[moved]
    seats[moved] = _tuple_new(SeatState, (seat, cash, to, in_jail, rolls, out, order, missed, team))
    s.seats = tuple(seats)
    if how == _JUMP:
        s.x_jump = False
    s.pending = None


_JUMP = MoveHow.JUMP


def _jump_skipped(s: Draft, e: JumpSkipped) -> None:
    s.x_jump = False


def _buy_offered(s: Draft, e: BuyOffered) -> None:
    seat, square, deadline = e
    s.pending = _tuple_new(BuyPending, (seat, deadline, square))


def _property_bought(s: Draft, e: PropertyBought) -> None:
    seat, square, _ = e
    _set_prop(s, _prop(s, square)._replace(owner=seat))
    s.pending = None


def _auction_started(s: Draft, e: AuctionStarted) -> None:
    square, decliner, order, bidder, minimum, deadline = e
    s.pending = AuctionPending(
        bidder, deadline, square, decliner, order, 0, None, minimum, frozenset()
    )


def _auction_bid(s: Draft, e: AuctionBid) -> None:
    seat, amount, next_bidder, minimum, deadline = e
    auction = s.pending
    assert isinstance(auction, AuctionPending)
    s.pending = auction._replace(
        seat=next_bidder, deadline=deadline, bid=amount, leader=seat, minimum=minimum
    )


def _auction_passed(s: Draft, e: AuctionPassed) -> None:
    seat, _, next_bidder, deadline = e
    auction = s.pending
    assert isinstance(auction, AuctionPending)
    s.pending = auction._replace(
        seat=next_bidder,
        deadline=deadline,
        leader=None if seat == auction.leader else auction.leader,
        passed=auction.passed | {seat},
    )


def _auction_ended(s: Draft, e: AuctionEnded) -> None:
    square, winner, _ = e
    if winner is not None:
        _set_prop(s, _prop(s, square)._replace(owner=winner))
    s.pending = None


def _payment_required(s: Draft, e: PaymentRequired) -> None:
    seat, amount, creditors, reason, deadline, then, steps, queue = e
    if type(then) is not Then:
        # Events built by the engine already hold the enum; only parsed ones hold a
        # string (building an enum from its value costs ten times more than this check).
        then = Then(then)
    s.pending = _tuple_new(
        PaymentPending, (seat, deadline, amount, creditors, reason, then, steps, queue)
    )


def _jackpot_offered(s: Draft, e: JackpotOffered) -> None:
    seat, deadline = e
    s.pending = JackpotPending(seat, deadline)


def _jackpot_played(s: Draft, e: JackpotPlayed) -> None:
    _, s.rng, s.script = draw_jackpot_die(s.rng, s.script)
    s.pending = None


def _bus_offered(s: Draft, e: BusOffered) -> None:
    seat, deadline = e
    s.pending = BusPending(seat, deadline)


def _teleport_offered(s: Draft, e: TeleportOffered) -> None:
    seat, deadline = e
    s.pending = TeleportPending(seat, deadline)


def _teleported(s: Draft, e: Teleported) -> None:
    seat, square, _ = e
    _set_seat(s, s.seats[seat]._replace(position=square))
    s.pending = None


def _card_drawn(s: Draft, e: CardDrawn) -> None:
    _, card, _, _ = e
    _, reshuffled, s.rng, s.script = draw_card(s.rng, s.script, s.drawn_cards)
    s.drawn_cards = (0 if reshuffled else s.drawn_cards) | (1 << card)
    s.last_card = card


def _sent_to_jail(s: Draft, e: SentToJail) -> None:
    seat, _ = e
    _set_seat(s, s.seats[seat]._replace(position=JAIL, in_jail=True, jail_rolls=0))
    s.roll_again = False
    s.x_jump = False
    s.pending = None


def _left_jail(s: Draft, e: LeftJail) -> None:
    seat, _ = e
    _set_seat(s, s.seats[seat]._replace(in_jail=False, jail_rolls=0))


def _jail_roll_failed(s: Draft, e: JailRollFailed) -> None:
    seat, attempts = e
    _set_seat(s, s.seats[seat]._replace(jail_rolls=attempts))
    s.pending = None


def _building_built(s: Draft, e: BuildingBuilt) -> None:
    _, square, buildings = e
    _set_prop(s, _prop(s, square)._replace(buildings=buildings))
    s.built = s.built | {square}


def _building_sold(s: Draft, e: BuildingSold) -> None:
    _, square, buildings = e
    _set_prop(s, _prop(s, square)._replace(buildings=buildings))


def _property_mortgaged(s: Draft, e: PropertyMortgaged) -> None:
    _, square = e
    _set_prop(s, _prop(s, square)._replace(mortgaged=True, mortgaged_round=s.round))


def _mortgage_lifted(s: Draft, e: MortgageLifted) -> None:
    _, square = e
    _set_prop(s, _prop(s, square)._replace(mortgaged=False, mortgaged_round=0))


def _mortgage_expired(s: Draft, e: MortgageExpired) -> None:
    _, square = e
    _set_prop(s, PropState(square=square))


def _offer_made(s: Draft, e: OfferMade) -> None:
    # The same fields in the same order: id, frm, to, the terms, deadline.
    s.offers = (*s.offers, Offer(*e))
    s.offers_made += 1


def _offer_closed(s: Draft, e: OfferClosed) -> None:
    offer_id, _ = e
    s.offers = tuple(o for o in s.offers if o.id != offer_id)


def _property_transferred(s: Draft, e: PropertyTransferred) -> None:
    _, to, square = e
    _set_prop(s, _prop(s, square)._replace(owner=to))


def _turn_skipped(s: Draft, e: TurnSkipped) -> None:
    seat, missed_turns = e
    _set_seat(s, s.seats[seat]._replace(missed_turns=missed_turns))
    s.pending = None


def _seat_acted(s: Draft, e: SeatActed) -> None:
    (seat,) = e
    _set_seat(s, s.seats[seat]._replace(missed_turns=0))


def _seat_went_out(s: Draft, e: SeatWentOut) -> None:
    seat, _, heir = e
    s.out_count += 1
    _set_seat(s, s.seats[seat]._replace(out=True, out_order=s.out_count, in_jail=False))
    s.props = tuple(
        (p._replace(owner=heir) if heir is not None else PropState(square=p.square))
        if p.owner == seat
        else p
        for p in s.props
    )


def _turn_ended(s: Draft, e: TurnEnded) -> None:
    s.pending = None
    s.roll_again = False
    s.x_jump = False


def _game_finished(s: Draft, e: GameFinished) -> None:
    winner, placement, reason, _ = e
    s.finished = True
    s.winner = winner
    s.placement = placement
    s.finish_reason = reason
    s.pending = None
    s.offers = ()


#: per event class (the key ``Ctx.emit`` is given): its handler
HANDLERS: dict[Callable[..., Event], Callable[[Draft, Any], None]] = {
    Transfer: _transfer,
    TurnStarted: _turn_started,
    RollOffered: _roll_offered,
    DiceRolled: _dice_rolled,
    Moved: _moved,
    JumpSkipped: _jump_skipped,
    BuyOffered: _buy_offered,
    PropertyBought: _property_bought,
    PropertyDeclined: _clear_pending,
    AuctionStarted: _auction_started,
    AuctionBid: _auction_bid,
    AuctionPassed: _auction_passed,
    AuctionEnded: _auction_ended,
    PaymentRequired: _payment_required,
    PaymentMade: _clear_pending,
    PaymentCancelled: _clear_pending,
    JackpotOffered: _jackpot_offered,
    JackpotPlayed: _jackpot_played,
    JackpotDeclined: _clear_pending,
    BusOffered: _bus_offered,
    BusChosen: _clear_pending,
    TeleportOffered: _teleport_offered,
    Teleported: _teleported,
    CardDrawn: _card_drawn,
    SentToJail: _sent_to_jail,
    LeftJail: _left_jail,
    JailRollFailed: _jail_roll_failed,
    BuildingBuilt: _building_built,
    BuildingSold: _building_sold,
    PropertyMortgaged: _property_mortgaged,
    MortgageLifted: _mortgage_lifted,
    MortgageReminder: _nothing,
    MortgageExpired: _mortgage_expired,
    OfferMade: _offer_made,
    OfferClosed: _offer_closed,
    PropertyTransferred: _property_transferred,
    TurnSkipped: _turn_skipped,
    SeatActed: _seat_acted,
    SeatWentOut: _seat_went_out,
    TurnEnded: _turn_ended,
    GameFinished: _game_finished,
}
assert set(HANDLERS) == set(EVENT_TYPES.values()), "every event type needs a handler"

__all__ = ["BANK", "POT", "apply_in_place", "evolve"]
