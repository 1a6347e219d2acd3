"""How a bot decides: given the state, its seat, its legal commands and its style, pick one.

``choose`` only ever returns one of ``legal``, or a trade offer it checked with the rules
library's own offer check, so a bot can never break a rule whatever its style.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from opolyx_rules import (
    BOARD_SIZE,
    GO_TO_JAIL,
    GROUP_SQUARES,
    SQUARES,
    STREET_GROUPS,
    AcceptOffer,
    AuctionPending,
    Bid,
    Build,
    Buy,
    BuyPending,
    ChooseBus,
    Command,
    DeclareBankruptcy,
    Decline,
    JackpotBet,
    JackpotDecline,
    Mortgage,
    Offer,
    OfferTrade,
    Pass,
    Pay,
    PayBail,
    PaymentPending,
    RejectOffer,
    Roll,
    Sell,
    SquareKind,
    State,
    Teleport,
    Unmortgage,
    base_rent,
    can_offer,
    check_offer,
    net_worth,
    property_state,
    rent_due,
    rent_tax_withheld,
    unmortgage_cost,
)

from opolyx_bots.styles import STYLES, Style
from opolyx_bots.valuation import (
    completed_groups,
    friendly,
    liquidity,
    reserve,
    square_value,
    trade_gain,
    with_transfer,
)

__all__ = ["choose", "evaluate_offer", "propose_trade"]

#: commands a bot never picks while anything else is legal
_LAST_RESORT = frozenset({"DeclareBankruptcy", "Resign", "CancelOffer"})


def choose(
    state: State,
    seat: int,
    legal: Sequence[Command],
    style: Style,
    rng: random.Random,
) -> Command | None:
    """The bot's command for ``seat`` now, or None when it has nothing to do."""
    if not legal:
        return None
    # Answer offers addressed to this seat first: the proposer is waiting.
    for command in legal:
        if isinstance(command, AcceptOffer):
            offer = _find_offer(state, command.offer)
            if offer is not None and evaluate_offer(state, offer, style) >= 0:
                return command
            return RejectOffer(seat, command.offer)
    for command in legal:
        if isinstance(command, RejectOffer):
            return command

    pending = state.pending
    picked: Command | None = None
    if pending is not None and pending.seat == seat:
        if isinstance(pending, PaymentPending):
            picked = _payment(state, seat, pending, legal, style)
        elif isinstance(pending, BuyPending):
            picked = _buy(state, seat, pending, legal, style)
        elif isinstance(pending, AuctionPending):
            picked = _auction(state, seat, pending, legal, style)
        elif pending.kind == "jackpot":
            picked = _jackpot(state, seat, legal, style, rng)
        elif pending.kind == "bus":
            picked = _bus(state, seat, legal, style)
        elif pending.kind == "teleport":
            picked = _teleport(state, seat, legal, style)
        elif pending.kind == "roll":
            picked = _before_roll(state, seat, legal, style, rng)
    if picked is not None:
        return picked
    return _fallback(legal)


def _fallback(legal: Sequence[Command]) -> Command | None:
    """A safe legal command: the least harmful of what is allowed."""
    preference = (Pay, Roll, Pass, Decline, JackpotDecline, RejectOffer, ChooseBus, Teleport)
    for kind in preference:
        for command in legal:
            if isinstance(command, kind):
                return command
    for command in legal:
        if type(command).__name__ not in _LAST_RESORT:
            return command
    # Only resigning or cancelling is possible: nothing is asked of this seat now.
    return None


def _find_offer(state: State, offer_id: str) -> Offer | None:
    return next((o for o in state.offers if o.id == offer_id), None)


def _of(legal: Sequence[Command], kind: type) -> list[Command]:
    return [c for c in legal if isinstance(c, kind)]


# buying and auctions -------------------------------------------------------------------


def _buy(
    state: State, seat: int, pending: BuyPending, legal: Sequence[Command], style: Style
) -> Command | None:
    if not _of(legal, Buy):
        return None
    price = SQUARES[pending.square].price
    cash = state.seats[seat].cash
    keep = reserve(state, seat, style)
    value = square_value(state, seat, pending.square, style)
    # Properties keep their worth (and can be mortgaged): buy unless it leaves us exposed.
    safe = cash - price >= style.reserve // 3 and liquidity(state, seat) - price >= keep
    if safe or (value >= 1.4 * price and cash - price >= 0):
        return Buy(seat)
    return Decline(seat) if _of(legal, Decline) else None


def _auction(
    state: State, seat: int, pending: AuctionPending, legal: Sequence[Command], style: Style
) -> Command | None:
    if not _of(legal, Bid):
        return None
    square = pending.square
    mine = square_value(state, seat, square, style) * style.auction_premium
    # Worth paying something to keep a group out of an opponent's hands.
    block = max(
        (
            0.6 * square_value(state, other.seat, square, style)
            for other in state.seats
            if not other.out and not friendly(state, other.seat, seat)
        ),
        default=0.0,
    )
    cash = state.seats[seat].cash
    affordable = min(
        cash - style.reserve // 3, liquidity(state, seat) - reserve(state, seat, style)
    )
    ceiling = min(max(mine, block), affordable)
    if pending.minimum <= ceiling:
        return Bid(seat)
    return Pass(seat)


# the payment pause ---------------------------------------------------------------------


def _payment(
    state: State, seat: int, pending: PaymentPending, legal: Sequence[Command], style: Style
) -> Command | None:
    if state.seats[seat].cash >= pending.amount and _of(legal, Pay):
        return Pay(seat)
    bankrupt = _of(legal, DeclareBankruptcy)
    if bankrupt:
        # Offered only when selling and mortgaging everything could not cover the debt.
        return bankrupt[0]
    raise_cash = _raise_funds(state, seat, legal, style)
    if raise_cash is not None:
        return raise_cash
    for kind in (Pay, DeclareBankruptcy):
        found = _of(legal, kind)
        if found:
            return found[0]
    return None


def _raise_funds(state: State, seat: int, legal: Sequence[Command], style: Style) -> Command | None:
    """Sensible order: mortgage what earns least (loose properties, utilities first), then
    sell buildings where they earn least, then mortgage complete groups."""
    groups = completed_groups(state, seat)
    mortgages = [c for c in legal if isinstance(c, Mortgage)]
    loose = [c for c in mortgages if SQUARES[c.square].group not in groups]
    if loose:
        return min(loose, key=lambda c: (square_value(state, seat, c.square, style), c.square))
    sells = [c for c in legal if isinstance(c, Sell)]
    if sells:
        return min(sells, key=lambda c: (_rent_per_building(c.square), c.square))
    if mortgages:
        return min(mortgages, key=lambda c: (SQUARES[c.square].price, c.square))
    return None


def _rent_per_building(square: int) -> int:
    sq = SQUARES[square]
    return sq.rents[-1] // max(1, sq.building_cost)


# before the roll: jail, lifting, building, trading ------------------------------------


def _before_roll(
    state: State, seat: int, legal: Sequence[Command], style: Style, rng: random.Random
) -> Command | None:
    me = state.seats[seat]
    keep = reserve(state, seat, style)
    growing = _builds_below_three(state, legal)
    lift = _lift(state, seat, legal, style, keep, loose=not growing)
    if lift is not None:
        return lift
    build = _build(state, seat, legal, style, keep)
    if build is not None:
        return build
    fund = _fund_building(state, seat, legal, style, growing)
    if fund is not None:
        return fund
    # Propose at most on every third round of ours, so a refused offer is not repeated
    # turn after turn at the same people.
    if state.round % 3 == seat % 3 and rng.random() < style.trade_rate:
        offer = propose_trade(state, seat, style)
        if offer is not None:
            return offer
    bail = _of(legal, PayBail)
    if me.in_jail and bail:
        unowned = sum(1 for p in state.props if p.owner is None)
        # Bail buys the chance to pick up properties; otherwise jail is a safe place.
        stay = (
            not style.bail_early
            or unowned < 6
            or _rounds_left(state) <= 3
            or me.cash - state.config.bail < keep
        )
        if not stay:
            return bail[0]
    rolls = _of(legal, Roll)
    return rolls[0] if rolls else None


def _lift(
    state: State, seat: int, legal: Sequence[Command], style: Style, keep: int, loose: bool
) -> Command | None:
    """Lift a mortgage: group streets first (they block building); loose properties only
    when nothing is being built up (never undo the mortgages that pay for houses)."""
    options = [c for c in legal if isinstance(c, Unmortgage)]
    # Lifting costs interest; too close to the round limit it never pays back.
    if not options or _rounds_left(state) <= 5:
        return None
    cash = state.seats[seat].cash
    groups = {
        g
        for g in STREET_GROUPS
        if all(property_state(state, q).owner == seat for q in GROUP_SQUARES[g])
    }
    best = max(
        options,
        key=lambda c: (SQUARES[c.square].group in groups, SQUARES[c.square].price, -c.square),
    )
    cost = unmortgage_cost(state.config, best.square)
    in_group = SQUARES[best.square].group in groups
    if not in_group and not loose:
        return None
    # Once the rent tax takes most of every rent, lifting only costs the interest
    # (net worth counts a mortgaged property at half price either way).
    if not in_group and rent_tax_withheld(state.config, state.round, 100) >= 50:
        return None
    # A mortgaged street of a complete group blocks building on the whole group.
    margin = 0 if in_group else style.lift_margin
    if cash - cost >= keep + margin:
        return best
    return None


def _build(
    state: State, seat: int, legal: Sequence[Command], style: Style, keep: int
) -> Command | None:
    options = [c for c in legal if isinstance(c, Build)]
    if not options:
        return None
    cash = state.seats[seat].cash

    def gain(command: Build) -> float:
        sq = SQUARES[command.square]
        now = property_state(state, command.square)
        current = base_rent(state, command.square)
        return (sq.rents[now.buildings + 1] - current) / sq.building_cost

    best = max(options, key=lambda c: (gain(c), -c.square))
    cost = SQUARES[best.square].building_cost
    # Up to three buildings rent rises steeply: build them on a thin cushion.
    cushion = keep * style.build_reserve_factor
    if property_state(state, best.square).buildings < 3:
        cushion = min(cushion, _thin_cushion(style))
    if cash - cost >= cushion:
        return best
    return None


def _thin_cushion(style: Style) -> float:
    return style.reserve * style.build_reserve_factor / 2


def _builds_below_three(state: State, legal: Sequence[Command]) -> list[Build]:
    return [
        c for c in legal if isinstance(c, Build) and property_state(state, c.square).buildings < 3
    ]


def _fund_building(
    state: State, seat: int, legal: Sequence[Command], style: Style, growing: list[Build]
) -> Command | None:
    """Mortgage loose properties to put up to three buildings on a complete group (they
    earn far more there; a mortgage keeps net worth, it only gives up that rent)."""
    if not growing:
        return None
    cost = min(SQUARES[c.square].building_cost for c in growing)
    groups = completed_groups(state, seat)
    loose = [c for c in legal if isinstance(c, Mortgage) and SQUARES[c.square].group not in groups]
    if not loose:
        return None
    raisable = sum(SQUARES[c.square].mortgage_value for c in loose)
    if state.seats[seat].cash + raisable - cost < _thin_cushion(style):
        return None
    return min(loose, key=lambda c: (square_value(state, seat, c.square, style), c.square))


# Jackpot, Bus, teleport ----------------------------------------------------------------


def _jackpot(
    state: State, seat: int, legal: Sequence[Command], style: Style, rng: random.Random
) -> Command | None:
    bets = [c for c in legal if isinstance(c, JackpotBet)]
    declines = _of(legal, JackpotDecline)
    stake = state.config.jackpot_stake
    cash = state.seats[seat].cash
    # The bet is fair; in the last fifth of the game a seat that trails on net worth wants
    # the variance (the round limit decides on net worth), a leader does not.
    late = _rounds_left(state) <= max(3, state.config.round_limit // 5)
    desperate = late and _trailing(state, seat) and cash >= stake
    wants = bets and (
        desperate
        or (
            style.jackpot_rate > 0
            and rng.random() < style.jackpot_rate
            and cash - stake >= reserve(state, seat, style)
        )
    )
    if desperate and bets:
        return rng.choice([c for c in bets if len(c.numbers) == 1] or bets)
    if wants:
        # Every size is fair; a gambler likes the big payout of a single number.
        size = 1 if rng.random() < 0.6 else rng.choice((2, 3))
        sized = [c for c in bets if len(c.numbers) == size] or bets
        return rng.choice(sized)
    return declines[0] if declines else None


def _rounds_left(state: State) -> int:
    return state.config.round_limit - state.round


def _trailing(state: State, seat: int) -> bool:
    """Someone outside the seat's side is worth more (R20 net worth)."""
    mine = net_worth(state, seat)
    return any(
        net_worth(state, other.seat) > mine
        for other in state.seats
        if not other.out and not friendly(state, other.seat, seat)
    )


def landing_score(state: State, seat: int, square: int, style: Style, passes_start: bool) -> float:
    """How good it is for ``seat`` to end a move on ``square`` (money-like units)."""
    score = float(state.config.salary) if passes_start else 0.0
    sq = SQUARES[square]
    me = state.seats[seat]
    if sq.is_property:
        p = property_state(state, square)
        if p.owner is None:
            if me.cash - sq.price >= reserve(state, seat, style) // 2:
                score += 300 + square_value(state, seat, square, style) - sq.price
        elif not friendly(state, p.owner, seat):
            score -= rent_due(state, square, seat) or base_rent(state, square)
    elif sq.kind is SquareKind.TAX:
        score -= sq.tax
    elif sq.kind is SquareKind.GO_TO_JAIL or square == GO_TO_JAIL:
        score -= 600
    elif sq.kind is SquareKind.START:
        score += state.config.landing_bonus
    elif sq.kind is SquareKind.EVENT:
        score -= 50
    return score


def _bus(state: State, seat: int, legal: Sequence[Command], style: Style) -> Command | None:
    options = [c for c in legal if isinstance(c, ChooseBus)]
    if not options or state.dice is None:
        return None
    position = state.seats[seat].position
    first, second = state.dice
    steps = {"sum": first + second, "first": first, "second": second}

    def score(command: ChooseBus) -> float:
        target = position + steps.get(command.move, first + second)
        return landing_score(state, seat, target % BOARD_SIZE, style, target >= BOARD_SIZE)

    return max(options, key=lambda c: (score(c), c.move == "sum"))


def _teleport(state: State, seat: int, legal: Sequence[Command], style: Style) -> Command | None:
    options = [c for c in legal if isinstance(c, Teleport)]
    if not options:
        return None
    return max(
        options,
        key=lambda c: (landing_score(state, seat, c.square, style, False), -c.square),
    )


# trades --------------------------------------------------------------------------------


def evaluate_offer(state: State, offer: Offer, style: Style) -> float:
    """>= 0 when the receiver should accept. Never gives an opponent a colour group unless
    the receiver completes one too (so never a group for a utility)."""
    me, other = offer.to, offer.frm
    after = with_transfer(
        state,
        offer.frm,
        offer.to,
        offer.give_cash,
        offer.give_squares,
        offer.take_cash,
        offer.take_squares,
    )
    if state.seats[me].cash < offer.take_cash:
        return -1.0
    if not friendly(state, other, me):
        theirs = completed_groups(after, other) - completed_groups(state, other)
        mine = completed_groups(after, me) - completed_groups(state, me)
        if theirs and not mine:
            return -1.0
    return float(trade_gain(state, after, me, other, style))


def propose_trade(state: State, seat: int, style: Style) -> OfferTrade | None:
    """A legal offer that completes a colour group for both sides, with the cash that makes
    it worth accepting for a plainly valuing receiver; in Team mode, a gift completing an
    ally's group. None when nothing makes sense. (Buying an opponent's last piece alone
    hands them nothing but gives us a group: bots refuse that, so they do not propose it.)
    """
    if not can_offer(state, seat) or any(o.frm == seat for o in state.offers):
        return None
    budget = max(0, state.seats[seat].cash - reserve(state, seat, style))
    best: tuple[float, OfferTrade] | None = None
    for other in state.seats:
        if other.out or other.seat == seat:
            continue
        if friendly(state, other.seat, seat):
            gift = _gift_to_ally(state, seat, other.seat)
            if gift is not None:
                return gift
            continue
        for give, take in _swaps(state, seat, other.seat):
            offer = _priced_offer(state, seat, other.seat, give, take, budget, style)
            if offer is None:
                continue
            after = with_transfer(
                state, seat, other.seat, offer.give_cash, give, offer.take_cash, take
            )
            gain = trade_gain(state, after, seat, other.seat, style)
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, offer)
    return None if best is None else best[1]


def _priced_offer(
    state: State,
    seat: int,
    other: int,
    give: tuple[int, ...],
    take: tuple[int, ...],
    budget: int,
    style: Style,
) -> OfferTrade | None:
    """Add the cash the receiver needs to accept, if it stays worth it and fair. The
    receiver is assumed to value things plainly (the balanced style), whatever ours is."""
    bare = Offer("?", seat, other, 0, give, 0, take, 0.0)
    receiver_gain = evaluate_offer(state, bare, STYLES["balanced"])
    if receiver_gain == -1.0:
        return None
    cash = 0 if receiver_gain >= 0 else -(int(receiver_gain) // 100) * 100 + 100
    give_value = sum(SQUARES[q].price for q in give)
    take_value = sum(SQUARES[q].price for q in take)
    # fairness (R10): the smaller side at least half the larger
    cash = max(cash, (take_value + 1) // 2 - give_value)
    if cash > budget or (give_value + cash) > 2 * take_value:
        return None
    offer = OfferTrade(seat, other, cash, give, 0, take)
    if check_offer(state, offer) is not None:
        return None
    return offer


def _gift_to_ally(state: State, seat: int, ally: int) -> OfferTrade | None:
    """Team mode: hand an ally the pieces that complete their group (allies may give)."""
    for group in STREET_GROUPS:
        if not _tradeable_group(state, group, ally, seat):
            continue
        props = [property_state(state, q) for q in GROUP_SQUARES[group]]
        if not any(p.owner == ally for p in props):
            continue
        give = tuple(p.square for p in props if p.owner == seat)
        offer = OfferTrade(seat, ally, 0, give, 0, ())
        if check_offer(state, offer) is None:
            return offer
    return None


def _swaps(state: State, seat: int, other: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(squares to give, squares to take) pairs completing one group for each side."""
    wanted = [g for g in STREET_GROUPS if _tradeable_group(state, g, seat, other)]
    givable = [g for g in STREET_GROUPS if _tradeable_group(state, g, other, seat)]
    swaps = []
    for want in wanted:
        take = tuple(q for q in GROUP_SQUARES[want] if property_state(state, q).owner == other)
        for give_group in givable:
            if give_group == want:
                continue
            give = tuple(
                q for q in GROUP_SQUARES[give_group] if property_state(state, q).owner == seat
            )
            swaps.append((give, take))
    return swaps


def _tradeable_group(state: State, group: str, a: int, b: int) -> bool:
    props = [property_state(state, q) for q in GROUP_SQUARES[group]]
    return all(p.owner in (a, b) and p.buildings == 0 for p in props) and any(
        p.owner == b for p in props
    )
