"""A player for long test games: buys what it can, never builds, and trades cash every turn.

The rules library's simple policy turns every offer down and builds when rich, so its games
end in bankruptcies; a player that declines everything turns each landing into an auction
of every seat. This one keeps a six-seat game going to the round limit with plenty of
trades: before each roll the seat proposes one trade to the seat whose cash is farthest
from its own, moving cash from the richer to the poorer (the richer side gives up to twice
what it takes, so both sides stay within the fairness rule, R10), now and then with one of
its properties in the deal; receivers accept whatever the rules would accept.

    policy = TradingPolicy()
    command = policy.choose(state, seat)   # one of legal_commands(state, seat)

It remembers which turns it already proposed in (one offer per turn), so use one instance
per game.
"""

from __future__ import annotations

from opolyx_rules import (
    SQUARES,
    AcceptOffer,
    Command,
    OfferTrade,
    RejectOffer,
    Roll,
    State,
    simple_policy,
)
from opolyx_rules.state import RollPending
from opolyx_rules.trade import can_offer, check_offer, check_offer_terms

__all__ = ["TradingPolicy"]

#: cash a proposer keeps after giving
KEEP = 1000
#: smallest amount worth a trade
STEP = 100


class TradingPolicy:
    def __init__(self, property_every: int = 3) -> None:
        self.property_every = property_every
        """Every this many trades the poorer side gives a property instead of cash."""
        self.proposed: set[tuple[int, int]] = set()
        """(round, seat) of the turns a trade was proposed in."""
        self.trades = 0

    def choose(self, state: State, seat: int) -> Command:
        for offer in state.offers:
            if offer.to == seat:
                fair = check_offer_terms(state, offer.frm, offer.to, offer.terms) is None
                return AcceptOffer(seat, offer.id) if fair else RejectOffer(seat, offer.id)
        pending = state.pending
        if isinstance(pending, RollPending) and pending.seat == seat:
            turn = (state.round, seat)
            if turn not in self.proposed and can_offer(state, seat):
                self.proposed.add(turn)
                proposal = self.trade(state, seat)
                if proposal is not None:
                    self.trades += 1
                    return proposal
            return Roll(seat)  # never builds: rents stay low and nobody goes bankrupt
        return simple_policy(state, seat)

    def trade(self, state: State, seat: int) -> OfferTrade | None:
        """A fair offer moving cash towards the poorer of `seat` and its partner."""
        others = [s for s in state.seats if s.seat != seat and not s.out]
        if not others:
            return None
        mine = state.seats[seat].cash
        partner = max(others, key=lambda s: abs(s.cash - mine))
        theirs = partner.cash
        gap = abs(mine - theirs) // 2 // STEP * STEP
        if gap < 2 * STEP:
            offer = OfferTrade(seat, partner.seat, give_cash=STEP, take_cash=STEP)
        elif mine > theirs:  # give 2x, take x: the partner gains x
            give = min(gap * 2 // STEP * STEP, (mine - KEEP) // STEP * STEP)
            offer = OfferTrade(seat, partner.seat, give_cash=give, take_cash=give // 2)
        elif self.trades % self.property_every == 0 and (square := self._spare(state, seat)):
            price = SQUARES[square].price  # a property for its price in cash
            offer = OfferTrade(seat, partner.seat, give_squares=(square,), take_cash=price)
        else:  # give x, take 2x: this seat gains x
            give = min(gap, mine // STEP * STEP)
            offer = OfferTrade(seat, partner.seat, give_cash=give, take_cash=2 * give)
        return offer if check_offer(state, offer) is None else None

    @staticmethod
    def _spare(state: State, seat: int) -> int | None:
        """An unmortgaged property of `seat` whose group has no buildings (tradable)."""
        for p in state.props:
            if p.owner == seat and not p.mortgaged and p.buildings == 0:
                return p.square
        return None
