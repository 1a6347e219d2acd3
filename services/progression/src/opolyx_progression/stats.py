"""Per-seat statistics of one finished game, read from its event stream (pure).

Missions need more than the result (auctions won, rent collected, ...), and the integrity
check needs who moved value to whom. Both come from the game's events as the table stored
them in TABLE_EVENTS; this module turns those batches into numbers and never does I/O.

Values of properties here are list prices from the board (data, not a rule): the integrity
check only needs "how much moved, and which way", not the fairness rule's exact figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from opolyx_contracts.game import (
    AuctionEnded,
    BuildingBuilt,
    OfferClosed,
    OfferMade,
    PropertyBought,
    SeatWentOut,
    Transfer,
)
from opolyx_contracts.table import TableEvents
from opolyx_rules.board import SQUARES

__all__ = ["GameStats", "PairTransfer", "SeatStats", "game_stats"]


@dataclass
class SeatStats:
    """What one seat did during a game (counts and sums, all from events)."""

    properties_bought: int = 0
    """Bought at list price or won at auction."""
    auctions_won: int = 0
    rent_collected: int = 0
    """Rent received, after the rent tax."""
    buildings_built: int = 0
    trades_completed: int = 0
    """Accepted trade offers the seat was a party to."""
    resigned: bool = False
    bankrupt: bool = False


@dataclass(frozen=True)
class PairTransfer:
    """Value that moved between two seats in one game: net, from `giver` to `receiver`."""

    giver: int
    receiver: int
    kind: str
    """`trade` (net value of accepted offers), `bankruptcy` (cash paid to a creditor when
    going bankrupt) or `resignation` (the giver resigned and the receiver won)."""
    value: int


@dataclass
class GameStats:
    seats: dict[int, SeatStats] = field(default_factory=dict)
    transfers: list[PairTransfer] = field(default_factory=list)
    finish_reason: str | None = None
    """The rules' reason (`last_standing`, `round_limit`), None when the stream lacks it."""
    last_seq: int = 0
    """The last per-table sequence these stats include."""

    def seat(self, seat: int) -> SeatStats:
        return self.seats.setdefault(seat, SeatStats())


def _price(squares: Iterable[int]) -> int:
    return sum(SQUARES[sq].price for sq in squares if 0 <= sq < len(SQUARES))


def game_stats(batches: Iterable[TableEvents], winner: int | None = None) -> GameStats:
    """Fold a table's event batches (in stream order) into per-seat statistics.

    Batches may repeat (a redelivered read): a batch whose `last_seq` is not beyond what
    was already counted is skipped, so counting is idempotent. `winner` (from the finished
    message) names who a resigning seat gave the game to.
    """
    stats = GameStats()
    offers: dict[str, OfferMade] = {}
    trade_net: dict[tuple[int, int], int] = {}
    bankruptcy_cash: dict[tuple[int, int], int] = {}
    resigned: list[int] = []
    for batch in batches:
        if batch.last_seq <= stats.last_seq:
            continue
        for record in batch.events:
            if record.seq <= stats.last_seq:
                continue
            event = record.event
            match event:
                case PropertyBought(seat=seat):
                    stats.seat(seat).properties_bought += 1
                case AuctionEnded(winner=int() as auction_winner):
                    won = stats.seat(auction_winner)
                    won.auctions_won += 1
                    won.properties_bought += 1
                case Transfer(frm=frm, to=to, amount=amount, reason="rent") if to >= 0:
                    stats.seat(to).rent_collected += amount
                case Transfer(frm=frm, to=to, amount=amount, reason="bankruptcy") if (
                    to >= 0 and frm >= 0 and amount > 0
                ):
                    key = (frm, to)
                    bankruptcy_cash[key] = bankruptcy_cash.get(key, 0) + amount
                case BuildingBuilt(seat=seat):
                    stats.seat(seat).buildings_built += 1
                case OfferMade():
                    offers[event.offer] = event
                case OfferClosed(offer=offer_id, how="accepted") if offer_id in offers:
                    offer = offers.pop(offer_id)
                    stats.seat(offer.frm).trades_completed += 1
                    stats.seat(offer.to).trades_completed += 1
                    given = offer.give_cash + _price(offer.give_squares)
                    taken = offer.take_cash + _price(offer.take_squares)
                    key = (offer.frm, offer.to)
                    trade_net[key] = trade_net.get(key, 0) + given - taken
                case OfferClosed(offer=offer_id):
                    offers.pop(offer_id, None)
                case SeatWentOut(seat=seat, how="bankrupt"):
                    stats.seat(seat).bankrupt = True
                case SeatWentOut(seat=seat, how="resigned"):
                    stats.seat(seat).resigned = True
                    resigned.append(seat)
                case _ if event.type == "game_finished":
                    # Matched by its type: the model's class name is being changed (it
                    # clashes with the table contract's GameFinished message).
                    stats.finish_reason = str(getattr(event, "reason", "")) or None
                case _:
                    pass
        stats.last_seq = batch.last_seq
    stats.transfers = _net_transfers(trade_net, bankruptcy_cash, resigned, winner)
    return stats


def _net_transfers(
    trade_net: dict[tuple[int, int], int],
    bankruptcy_cash: dict[tuple[int, int], int],
    resigned: list[int],
    winner: int | None,
) -> list[PairTransfer]:
    out: list[PairTransfer] = []
    pairs = {tuple(sorted(key)) for key in trade_net}
    for low, high in sorted(pairs):
        # Offers go both ways within a pair: net them so one figure says who gained.
        net = trade_net.get((low, high), 0) - trade_net.get((high, low), 0)
        if net > 0:
            out.append(PairTransfer(low, high, "trade", net))
        elif net < 0:
            out.append(PairTransfer(high, low, "trade", -net))
    for (giver, receiver), value in sorted(bankruptcy_cash.items()):
        out.append(PairTransfer(giver, receiver, "bankruptcy", value))
    if winner is not None:
        for seat in resigned:
            if seat != winner:
                out.append(PairTransfer(seat, winner, "resignation", 0))
    return out
