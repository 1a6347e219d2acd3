"""The public core: ``new_game``, ``decide``/``apply``, ``evolve``, ``replay``, timeouts.

``decide`` checks a command in a fixed order (is the game running? is the seat in it? is
this its decision?) and returns the events it causes, or raises a ``RulesError`` with a
stable code; the state passed in is never changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from . import flow, payment, trade, turn
from .assets import unmortgage_cost
from .board import PROPERTY_SLOT, SQUARES
from .commands import (
    AcceptOffer,
    Bid,
    Build,
    Buy,
    CancelOffer,
    ChooseBus,
    Command,
    DeclareBankruptcy,
    Decline,
    JackpotBet,
    JackpotDecline,
    Mortgage,
    OfferTrade,
    Pass,
    Pay,
    PayBail,
    RejectOffer,
    Resign,
    Roll,
    SeatCommand,
    Sell,
    Teleport,
    Timeout,
    Unmortgage,
)
from .context import Ctx
from .errors import RulesError
from .events import (
    BANK,
    BuildingBuilt,
    Event,
    MortgageLifted,
    OfferClosed,
    OfferMade,
    PropertyTransferred,
    SeatActed,
    Transfer,
    TurnSkipped,
)
from .evolve import apply_in_place
from .guards import GUARDS, Guard
from .modes import ModeConfig, get_mode
from .progression import capped_boost
from .rng import randbelow, seed_state
from .state import (
    RULES_VERSION,
    SCHEMA_VERSION,
    AuctionPending,
    BusPending,
    BuyPending,
    JackpotPending,
    OfferEnd,
    PaymentPending,
    RollPending,
    Script,
    SeatState,
    State,
    TeleportPending,
    Then,
    freeze,
    initial_props,
    thaw,
)


@dataclass(frozen=True, slots=True)
class SeatSetup:
    """What a seat brings to a new game: its collectible-card boosts (R20)."""

    boosts: dict[int, int] = field(default_factory=dict)


def seed_commitment(seed: int) -> str:
    """SHA-256 of the seed, published at creation and checked against the revealed seed."""
    return hashlib.sha256(str(seed).encode()).hexdigest()


def new_game(
    mode: str | ModeConfig,
    seats: int | Sequence[SeatSetup],
    seed: int,
    *,
    first_seat: int | None = None,
    script: Script | None = None,
    now: float = 0.0,
) -> State:
    """A new game on square 0 with the starting cash; the first seat is drawn (R3)."""
    config = get_mode(mode) if isinstance(mode, str) else mode
    setups = [SeatSetup() for _ in range(seats)] if isinstance(seats, int) else list(seats)
    count = len(setups)
    if count not in config.allowed_seats:
        allowed = ", ".join(str(n) for n in config.allowed_seats)
        raise RulesError(
            "setup/seats", f"{config.name} is played with {allowed} seats, not {count}"
        )
    rng = seed_state(seed)
    if first_seat is None:
        first_seat, rng = randbelow(rng, count)
    elif not 0 <= first_seat < count:
        raise RulesError("setup/first_seat", f"first_seat must be a seat from 0 to {count - 1}")
    # Read-only mappings: the boosts a seat brings are fixed when the game starts (R20).
    boosts = tuple(
        MappingProxyType({sq: capped_boost(pct) for sq, pct in setup.boosts.items()})
        for setup in setups
    )
    for seat_boosts in boosts:
        for sq in seat_boosts:
            if sq not in PROPERTY_SLOT:
                raise RulesError("setup/card", f"a card names square {sq}, not a property")
    state = State(
        schema_version=SCHEMA_VERSION,
        rules_version=RULES_VERSION,
        config=config,
        seed_commitment=seed_commitment(seed),
        seats=tuple(
            SeatState(seat=i, cash=config.starting_cash, team=(i % 2) if config.teams else None)
            for i in range(count)
        ),
        props=initial_props(),
        boosts=boosts,
        rng=rng,
        script=script or Script(),
        first_seat=first_seat,
        round=1,
        current_seat=first_seat,
        pending=RollPending(first_seat, now + config.turn_seconds),
        turn_deadline=now + config.turn_seconds,
    )
    return state


# -- deadlines -------------------------------------------------------------------------------


def next_deadline(state: State) -> float | None:
    """The earliest moment at which a timeout is due, or None."""
    if state.finished:
        return None
    times = [o.deadline for o in state.offers]
    if state.pending is not None:
        times.append(state.pending.deadline)
    return min(times) if times else None


def awaiting(state: State) -> list[int]:
    """Seats with a decision open now: the pending seat (the auction's bidder), and the
    receivers of open offers."""
    if state.finished:
        return []
    seats = [state.pending.seat] if state.pending is not None else []
    for offer in state.offers:
        if offer.to not in seats:
            seats.append(offer.to)
    return seats


def advance(state: State, now: float) -> tuple[State, list[Event]]:
    """Fire every deadline due at or before ``now``, each at its own time, in order."""
    events: list[Event] = []
    while True:
        due = next_deadline(state)
        if due is None or due > now:
            return state, events
        state, fired = apply(state, Timeout(), due)
        events.extend(fired)


# -- decide ----------------------------------------------------------------------------------


def apply(state: State, command: Command, now: float) -> tuple[State, list[Event]]:
    """Check ``command`` at time ``now``; return the next state and the events."""
    ctx = Ctx(state, now)
    _dispatch(ctx, command)
    return ctx.result(), ctx.events


def apply_on_draft(ctx: Ctx, command: Command, now: float) -> list[Event]:
    """Apply ``command`` to the context's draft itself, for drivers of whole games
    (``simulate``) that need no state of their own between decisions. A refused command
    raises before anything changes: every guard runs before the first event."""
    ctx.now = now
    ctx.events = []
    _dispatch(ctx, command)
    return ctx.events


def perform(ctx: Ctx, command: SeatCommand) -> None:
    """Carry out a seat's command that is known to be allowed, without checking it: for
    commands the library chose itself (``simulate`` playing the simple policy, whose
    every command is one of ``legal_commands``, tested). Everything from outside the
    library goes through ``apply`` and its guards. The game must be running."""
    seat = command.seat
    if ctx.s.seats[seat].missed_turns:
        ctx.emit(SeatActed, seat)
    if len(command) == 1:
        # Most commands are only their seat: a plain call costs a third of ``*command``.
        ACTIONS[type(command)](ctx, seat)
    else:
        ACTIONS[type(command)](ctx, *command)


def decide(state: State, command: Command, now: float) -> list[Event]:
    return apply(state, command, now)[1]


def replay(initial: State, events: Iterable[Event]) -> State:
    """The state after every event of a game (or of any stretch of it), from the state
    before the first of them."""
    s = thaw(initial)
    for event in events:
        apply_in_place(s, event)
    return freeze(s)


# -- what each accepted command does (its guard in ``guards`` has passed) ----------------


def _pending(ctx: Ctx) -> Any:
    return ctx.s.pending


def _pay_bail(ctx: Ctx, seat: int) -> None:
    bail = ctx.s.config.bail
    payment.require(ctx, seat, bail, ((BANK, bail),), "bail", then=Then.ROLL)


def _build(ctx: Ctx, seat: int, square: int) -> None:
    ctx.emit(Transfer, seat, BANK, SQUARES[square].building_cost, "building")
    ctx.emit(BuildingBuilt, seat, square, ctx.s.props[PROPERTY_SLOT[square]].buildings + 1)


def _unmortgage(ctx: Ctx, seat: int, square: int) -> None:
    ctx.emit(Transfer, seat, BANK, unmortgage_cost(ctx.s.config, square), "unmortgage")
    ctx.emit(MortgageLifted, seat, square)


def _offer(ctx: Ctx, *fields: Any) -> None:
    command = OfferTrade(*fields)
    s = ctx.s
    terms = command.terms
    ctx.emit(
        OfferMade,
        f"o{s.offers_made + 1}",
        command.seat,
        command.to,
        *terms,
        ctx.now + s.config.offer_seconds,
    )


def _accept(ctx: Ctx, seat: int, offer_id: str) -> None:
    offer = trade.find_offer(ctx.s, offer_id)
    assert offer is not None
    if offer.give_cash:
        ctx.emit(Transfer, offer.frm, offer.to, offer.give_cash, "trade")
    if offer.take_cash:
        ctx.emit(Transfer, offer.to, offer.frm, offer.take_cash, "trade")
    for square in offer.give_squares:
        ctx.emit(PropertyTransferred, offer.frm, offer.to, square)
    for square in offer.take_squares:
        ctx.emit(PropertyTransferred, offer.to, offer.frm, square)
    ctx.emit(OfferClosed, offer_id, OfferEnd.ACCEPTED)


Action = Callable[..., None]

#: every seat command: what it does once its guard (``guards.GUARDS``) has passed
ACTIONS: dict[type[Any], Action] = {
    Roll: turn.roll,
    PayBail: _pay_bail,
    Buy: lambda ctx, seat: turn.buy(ctx, seat, _pending(ctx).square),
    Decline: lambda ctx, seat: turn.decline(ctx, seat, _pending(ctx).square, automatic=False),
    Bid: flow.bid,
    Pass: lambda ctx, seat: flow.pass_(ctx, seat, automatic=False),
    Build: _build,
    Sell: payment.sell_building,
    Mortgage: payment.mortgage,
    Unmortgage: _unmortgage,
    Pay: lambda ctx, seat: flow.pay(ctx, ctx.s.pending),
    DeclareBankruptcy: lambda ctx, seat: flow.bankrupt(ctx, ctx.s.pending),
    Resign: flow.resign,
    JackpotBet: lambda ctx, seat, numbers: turn.play_jackpot(ctx, seat, tuple(sorted(numbers))),
    JackpotDecline: lambda ctx, seat: turn.decline_jackpot(ctx, seat, automatic=False),
    ChooseBus: turn.choose_bus,
    Teleport: turn.teleport,
    OfferTrade: _offer,
    AcceptOffer: _accept,
    RejectOffer: lambda ctx, seat, offer: ctx.emit(OfferClosed, offer, OfferEnd.REJECTED),
    CancelOffer: lambda ctx, seat, offer: ctx.emit(OfferClosed, offer, OfferEnd.CANCELLED),
}
assert set(ACTIONS) == set(GUARDS), "every command needs a guard and an action"
_RULES: dict[type[Any], tuple[Guard, Action]] = {
    kind: (GUARDS[kind], action) for kind, action in ACTIONS.items()
}


def _dispatch(ctx: Ctx, command: Command) -> None:
    s = ctx.s
    if s.finished:
        raise RulesError("game/finished", "the game is over")
    if isinstance(command, Timeout):
        _timeout(ctx)
        return
    rule = _RULES.get(type(command))
    if rule is None:
        raise RulesError("command/unknown_type", f"unknown command {command!r}")
    seat = command.seat
    if not 0 <= seat < len(s.seats):
        raise RulesError("seat/unknown", f"there is no seat {seat} at this table")
    st = s.seats[seat]
    if st.out:
        raise RulesError("seat/out", f"seat {seat} is out of the game")
    guard, action = rule
    # Most commands are only their seat: a plain call costs a third of ``*command``.
    only_seat = len(command) == 1
    refusal = guard(s, seat) if only_seat else guard(s, *command)
    if refusal is not None:
        raise refusal.error()
    # The rest is ``perform``, written out: this runs for every command from outside.
    if st.missed_turns:
        ctx.emit(SeatActed, seat)
    if only_seat:
        action(ctx, seat)
    else:
        action(ctx, *command)


def _timeout(ctx: Ctx) -> None:
    """R16: the earliest due deadline fires; forced decisions are auto-played."""
    s = ctx.s
    due = next_deadline(s)
    if due is None or ctx.now < due:
        raise RulesError("timeout/not_due", "no deadline is due yet")
    pending = s.pending
    for offer in s.offers:
        if offer.deadline == due and (pending is None or offer.deadline < pending.deadline):
            ctx.emit(OfferClosed, offer.id, OfferEnd.EXPIRED)
            return
    assert pending is not None
    seat = pending.seat
    match pending:
        case RollPending():
            # A turn with no roll at all is a missed turn; an extra roll (after doubles)
            # left to time out just ends a turn the seat did play.
            missed = s.seats[seat].missed_turns + (1 if s.dice is None else 0)
            ctx.emit(TurnSkipped, seat, missed)
            if s.dice is None and missed >= s.config.missed_turns_to_resign:
                flow.resign(ctx, seat)
            else:
                turn.end_turn(ctx)
        case BuyPending():
            turn.decline(ctx, seat, pending.square, automatic=True)
        case AuctionPending():
            flow.pass_(ctx, seat, automatic=True)
        case PaymentPending():
            flow.pay_on_timeout(ctx, pending)
        case JackpotPending():
            turn.decline_jackpot(ctx, seat, automatic=True)
        case BusPending():
            turn.choose_bus(ctx, seat, "sum", automatic=True)
        case TeleportPending():
            # The first option is the square the player stands on (see legal_commands).
            turn.teleport(ctx, seat, s.seats[seat].position, automatic=True)
        case _:
            raise AssertionError(f"unhandled pending {pending!r}")


__all__ = [
    "SeatSetup",
    "advance",
    "apply",
    "awaiting",
    "decide",
    "new_game",
    "next_deadline",
    "replay",
    "seed_commitment",
]
