"""The flow of a turn (R4, R5, R13, R14, R15, R19): roll, move, resolve the square, and
what comes after (another roll, the X jump, the end of the turn).

Functions here take the decision context and emit events; when a decision is needed they
set it pending and return. ``landed`` is the one continuation every resolution ends in.
"""

from __future__ import annotations

from . import auction, endgame, payment
from .assets import opponents, prop, rent_due
from .board import (
    BOARD_SIZE,
    GROUP_SQUARES,
    IS_PROPERTY,
    PROPERTY_SLOT,
    PROPERTY_SQUARES,
    SQUARES,
    SquareKind,
    distance,
    nearest_ahead,
)
from .cards import CARDS, REPAIR_PER_BUILDING, REPAIR_PER_FULL_STREET
from .chance import draw_card, draw_dice, draw_jackpot_die, draw_speed_die
from .context import Ctx
from .events import (
    BANK,
    POT,
    BusChosen,
    BusOffered,
    BuyOffered,
    CardDrawn,
    DiceRolled,
    JackpotDeclined,
    JackpotOffered,
    JackpotPlayed,
    JailRollFailed,
    JumpSkipped,
    LeftJail,
    MortgageExpired,
    MortgageReminder,
    Moved,
    OfferClosed,
    PropertyBought,
    PropertyDeclined,
    RollOffered,
    SentToJail,
    Teleported,
    TeleportOffered,
    Transfer,
    TurnEnded,
    TurnStarted,
)
from .modes import MAX_SEATS, Feature
from .state import JailExit, JailReason, MoveHow, OfferEnd, SpeedFace, Then

# Enum members read through their class cost a lookup each time; the hot paths use these.
_ROLL, _BUS, _CARD, _JUMP = MoveHow.ROLL, MoveHow.BUS, MoveHow.CARD, MoveHow.JUMP
_X, _BUS_FACE = SpeedFace.X, SpeedFace.BUS
_START, _TAX, _EVENT = SquareKind.START, SquareKind.TAX, SquareKind.EVENT
_GO_TO_JAIL, _JACKPOT = SquareKind.GO_TO_JAIL, SquareKind.JACKPOT


def bank_sink(ctx: Ctx) -> int:
    """Where taxes and card payments to the bank go: the Fortune Pot in Fortuna (R18)."""
    return POT if ctx.s.config.has(Feature.FORTUNE_POT) else BANK


# -- turn boundaries ---------------------------------------------------------------------


def start_turn(ctx: Ctx, seat: int, round_no: int) -> None:
    s = ctx.s
    expiry = s.config.mortgage_expiry_rounds
    if expiry is not None:
        for p in s.props:
            if p.owner == seat and p.mortgaged:
                left = expiry - (round_no - p.mortgaged_round)
                if left <= 0:
                    ctx.emit(MortgageExpired, seat, p.square)
                else:
                    ctx.emit(MortgageReminder, seat, p.square, left)
    ctx.emit(TurnStarted, seat, round_no, ctx.now + s.config.turn_seconds)


#: per table size, per seat: the other seats in turn order after it
SEATS_AFTER: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(tuple((seat + step) % n for step in range(1, n)) for seat in range(n))
    for n in range(1, MAX_SEATS + 1)
}


def next_active_seat(ctx: Ctx, after: int) -> int:
    seats = ctx.s.seats
    for candidate in SEATS_AFTER[len(seats)][after]:
        if not seats[candidate].out:
            return candidate
    return after


def end_turn(ctx: Ctx) -> None:
    """Close the current turn and start the next seat's, counting rounds (R3, R20)."""
    s = ctx.s
    seat = s.current_seat
    # Offers are made during a turn (by its player, or by a debtor in a pause within
    # it) and expire with it (R10, R23.12).
    if s.offers:
        for offer in s.offers:
            ctx.emit(OfferClosed, offer.id, OfferEnd.TURN_ENDED)
    ctx.emit(TurnEnded, seat)
    nxt = next_active_seat(ctx, seat)
    n = len(s.seats)
    # A round completes when the turn order crosses the first seat again.
    to_first = (s.first_seat - seat) % n or n
    round_no = s.round
    if to_first <= ((nxt - seat) % n or n):
        cfg = s.config
        if round_no >= cfg.round_limit:
            endgame.finish(ctx, "round_limit")
            return
        round_no += 1
        if cfg.has(Feature.LUNAR_NEW_YEAR) and round_no % cfg.new_year_every == 0:
            for st in s.seats:
                if not st.out:
                    ctx.emit(Transfer, BANK, st.seat, cfg.new_year_gift, "new_year")
    start_turn(ctx, nxt, round_no)


def offer_roll(ctx: Ctx, seat: int, deadline: float | None = None) -> None:
    """Another roll in this turn; a fresh clock unless ``deadline`` keeps the old one."""
    ctx.emit(
        RollOffered, seat, ctx.now + ctx.s.config.turn_seconds if deadline is None else deadline
    )


def landed(ctx: Ctx) -> None:
    """Everything of the last move is resolved: jump, roll again, or end the turn."""
    s = ctx.s
    if s.finished:
        return
    seat = s.current_seat
    st = s.seats[seat]
    if st.out or st.in_jail:
        end_turn(ctx)
        return
    if s.x_jump:
        target = x_jump_target(ctx, seat)
        if target is None:
            ctx.emit(JumpSkipped, seat)
        else:
            move_to(ctx, seat, target, _JUMP)
            return
    if s.roll_again:
        offer_roll(ctx, seat)
    else:
        end_turn(ctx)


# -- rolling -------------------------------------------------------------------------------


def roll(ctx: Ctx, seat: int) -> None:
    s = ctx.s
    cfg = s.config
    in_jail = s.seats[seat].in_jail
    white, rng_after, script_after = draw_dice(s.rng, s.script)
    a, b = white
    third: SpeedFace | None = None
    from_round = cfg.third_die_from_round
    if from_round is not None and s.round >= from_round and not in_jail:
        third, _, _ = draw_speed_die(rng_after, script_after)
    doubles = s.doubles
    roll_again = False
    if not in_jail and a == b:
        roll_again = True
        if third is None or third.number != a:  # triples are no doubles (R19)
            doubles += 1
    ctx.emit(DiceRolled, seat, white, third, doubles, roll_again, third is _X)
    total = a + b
    if total == cfg.lucky_total and cfg.has(Feature.LUCKY_EIGHT):
        ctx.emit(Transfer, BANK, seat, cfg.lucky_payout, "lucky_eight")
    if total == cfg.unlucky_total and cfg.has(Feature.UNLUCKY_FOUR):
        payment.require(
            ctx, seat, cfg.unlucky_cost, ((POT, cfg.unlucky_cost),), "unlucky_four", then=Then.DICE
        )
        return
    continue_roll(ctx)


def continue_roll(ctx: Ctx) -> None:
    """Resolve the roll in ``state.dice`` (after any Unlucky Four payment)."""
    s = ctx.s
    seat = s.current_seat
    st = s.seats[seat]
    assert s.dice is not None
    a, b = s.dice
    if st.in_jail:
        if a == b:
            ctx.emit(LeftJail, seat, JailExit.DOUBLES)
            move_by(ctx, seat, a + b, _ROLL)
            return
        attempts = st.jail_rolls + 1
        ctx.emit(JailRollFailed, seat, attempts)
        if attempts >= s.config.max_jail_rolls:
            bail = s.config.bail
            payment.require(ctx, seat, bail, ((BANK, bail),), "bail", then=Then.MOVE, steps=a + b)
        else:
            end_turn(ctx)
        return
    if s.doubles >= 3:
        ctx.emit(SentToJail, seat, JailReason.THREE_DOUBLES)
        end_turn(ctx)
        return
    third = s.third
    if third is not None and third.number == a == b:
        ctx.emit(TeleportOffered, seat, ctx.now + s.config.turn_seconds)
    elif third is _BUS_FACE:
        ctx.emit(BusOffered, seat, ctx.now + s.config.turn_seconds)
    else:
        extra = third.number if third is not None else 0
        move_by(ctx, seat, a + b + extra, _ROLL)


def choose_bus(ctx: Ctx, seat: int, move: str, automatic: bool = False) -> None:
    assert ctx.s.dice is not None
    a, b = ctx.s.dice
    steps = {"sum": a + b, "first": a, "second": b}[move]
    ctx.emit(BusChosen, seat, move, automatic)
    move_by(ctx, seat, steps, _BUS)


def teleport(ctx: Ctx, seat: int, square: int, automatic: bool = False) -> None:
    ctx.emit(Teleported, seat, square, automatic)
    land(ctx, seat)


# -- moving --------------------------------------------------------------------------------


def move_by(ctx: Ctx, seat: int, steps: int, how: MoveHow) -> None:
    frm = ctx.s.seats[seat].position
    # Landing exactly on Start is paid by resolving the square (salary + bonus).
    passed = frm + steps > BOARD_SIZE
    ctx.emit(Moved, seat, frm, (frm + steps) % BOARD_SIZE, passed, how)
    if passed:
        ctx.emit(Transfer, BANK, seat, ctx.s.config.salary, "salary")
    land(ctx, seat)


def move_to(ctx: Ctx, seat: int, target: int, how: MoveHow) -> None:
    frm = ctx.s.seats[seat].position
    steps = distance(frm, target) or BOARD_SIZE
    move_by(ctx, seat, steps, how)


#: for each square, the other properties in the order met when moving forward from it
#: (the square itself is never a jump target: the jump goes forward, R19)
PROPERTIES_AHEAD: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted((sq for sq in PROPERTY_SQUARES if sq != here), key=lambda sq: distance(here, sq)))
    for here in range(BOARD_SIZE)
)


def x_jump_target(ctx: Ctx, seat: int) -> int | None:
    """Nearest unowned property ahead, else nearest opponent-owned one (R19)."""
    s = ctx.s
    ahead = PROPERTIES_AHEAD[s.seats[seat].position]
    for sq in ahead:
        if prop(s, sq).owner is None:
            return sq
    rivals = set(opponents(s, seat))
    for sq in ahead:
        owner = prop(s, sq).owner
        if owner is not None and owner in rivals:
            return sq
    return None


# -- resolving a square --------------------------------------------------------------------


def land(ctx: Ctx, seat: int) -> None:
    s = ctx.s
    square = s.seats[seat].position
    sq = SQUARES[square]
    if IS_PROPERTY[square]:
        owner = s.props[PROPERTY_SLOT[square]].owner
        if owner is None:
            if s.seats[seat].cash >= sq.price:
                ctx.emit(BuyOffered, seat, square, ctx.now + s.config.turn_seconds)
            else:
                ctx.emit(PropertyDeclined, seat, square, True)
                if auction.start(ctx, square, seat):
                    landed(ctx)
            return
        rent = rent_due(s, square, seat)
        if rent > 0:
            payment.require(ctx, seat, rent, ((owner, rent),), "rent")
        else:
            landed(ctx)
        return
    kind = sq.kind
    if kind is _START:
        cfg = s.config
        ctx.emit(Transfer, BANK, seat, cfg.salary + cfg.landing_bonus, "start_landing")
        landed(ctx)
    elif kind is _TAX:
        payment.require(ctx, seat, sq.tax, ((bank_sink(ctx), sq.tax),), "tax")
    elif kind is _EVENT:
        draw_event_card(ctx, seat)
    elif kind is _GO_TO_JAIL:
        ctx.emit(SentToJail, seat, JailReason.SQUARE)
        end_turn(ctx)
    elif kind is _JACKPOT:
        land_on_jackpot(ctx, seat)
    else:  # Just visiting
        landed(ctx)


def buy(ctx: Ctx, seat: int, square: int) -> None:
    price = SQUARES[square].price
    ctx.emit(Transfer, seat, BANK, price, "purchase")
    ctx.emit(PropertyBought, seat, square, price)
    landed(ctx)


def decline(ctx: Ctx, seat: int, square: int, automatic: bool) -> None:
    ctx.emit(PropertyDeclined, seat, square, automatic)
    if auction.start(ctx, square, seat):
        landed(ctx)


# -- Jackpot (R14, R18) ------------------------------------------------------------------


def land_on_jackpot(ctx: Ctx, seat: int) -> None:
    s = ctx.s
    if s.pot > 0 and s.config.has(Feature.FORTUNE_POT):
        ctx.emit(Transfer, POT, seat, s.pot, "fortune_pot")
    if s.config.jackpot_enabled and s.seats[seat].cash >= s.config.jackpot_stake:
        ctx.emit(JackpotOffered, seat, ctx.now + s.config.turn_seconds)
    else:
        landed(ctx)


def play_jackpot(ctx: Ctx, seat: int, numbers: tuple[int, ...]) -> None:
    s = ctx.s
    cfg = s.config
    die, _, _ = draw_jackpot_die(s.rng, s.script)
    won = die in numbers
    ctx.emit(Transfer, seat, BANK, cfg.jackpot_stake, "jackpot_stake")
    ctx.emit(JackpotPlayed, seat, numbers, die, won)
    if won:
        ctx.emit(Transfer, BANK, seat, cfg.jackpot_payouts[len(numbers) - 1], "jackpot_win")
    landed(ctx)


def decline_jackpot(ctx: Ctx, seat: int, automatic: bool) -> None:
    ctx.emit(JackpotDeclined, seat, automatic)
    landed(ctx)


# -- event cards (R15) ---------------------------------------------------------------------


def draw_event_card(ctx: Ctx, seat: int) -> None:
    s = ctx.s
    number, reshuffled, _, _ = draw_card(s.rng, s.script, s.drawn_cards)
    card = CARDS[number]
    ctx.emit(CardDrawn, seat, number, card.text, reshuffled)
    if card.bank > 0:
        ctx.emit(Transfer, BANK, seat, card.bank, "card")
        landed(ctx)
    elif card.bank < 0:
        payment.require(ctx, seat, -card.bank, ((bank_sink(ctx), -card.bank),), "card")
    elif card.each_opponent > 0:
        _collect_from_each_opponent(ctx, seat, card.each_opponent)
    elif card.each_opponent < 0:
        share = -card.each_opponent
        creditors = tuple((opp, share) for opp in opponents(s, seat))
        if creditors:
            payment.require(ctx, seat, share * len(creditors), creditors, "card")
        else:
            landed(ctx)
    elif card.repairs:
        total = 0
        for p in s.props:
            if p.owner == seat and p.buildings:
                full = p.buildings == 5
                total += REPAIR_PER_FULL_STREET if full else REPAIR_PER_BUILDING * p.buildings
        if total:
            payment.require(ctx, seat, total, ((bank_sink(ctx), total),), "card")
        else:
            landed(ctx)
    elif card.advance_to is not None:
        move_to(ctx, seat, card.advance_to, _CARD)
    elif card.advance_to_group is not None:
        here = s.seats[seat].position
        move_to(ctx, seat, nearest_ahead(here, GROUP_SQUARES[card.advance_to_group]), _CARD)
    elif card.back:
        frm = s.seats[seat].position
        ctx.emit(Moved, seat, frm, (frm - card.back) % BOARD_SIZE, False, _CARD)
        land(ctx, seat)
    elif card.jail:
        ctx.emit(SentToJail, seat, JailReason.CARD)
        end_turn(ctx)


def _collect_from_each_opponent(ctx: Ctx, seat: int, amount: int) -> None:
    """Opponents who can pay do so at once; each who cannot gets a pause of their own,
    resolved one after another before play continues (R15)."""
    queue: list[tuple[int, int, int]] = []
    for opp in opponents(ctx.s, seat):
        if ctx.s.seats[opp].cash >= amount:
            ctx.emit(Transfer, opp, seat, amount, "card")
        else:
            queue.append((opp, amount, seat))
    if queue:
        payment.open_queued(ctx, tuple(queue), then=Then.LANDED)
    else:
        landed(ctx)
