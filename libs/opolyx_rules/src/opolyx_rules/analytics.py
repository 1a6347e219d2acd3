"""Post-game analytics: one pure pass over a game's events (issue 16).

``game_analytics(initial, events)`` replays the events from the game's first state and
collects, as plain JSON values:

- ``landings``: for each of the 40 squares, how often a pawn ended a move there (rolls,
  cards, jumps, the Bus, teleports); ``landings_by_seat`` the same per seat.
- ``net_worth``: per seat, its net worth (R20, ``assets.net_worth``) at the start and at
  the end of every round (``rounds`` names the round each column ends).
- ``trades``: every accepted trade with both sides and their R10 values at acceptance.
- ``rent``: rent paid and received per seat, and collected per property square (the
  square the payer stood on, where rent is always charged).
- ``auctions``: every auction won, with its price.
- ``highlights``: the largest rent, the longest jail stay (in the seat's own turns) and
  the luckiest Jackpot (the largest win), or None where the game had none.

Nothing here changes a game; the numbers come from the same handlers that build every
state (``evolve``), so they always agree with the replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .assets import net_worth, trade_side_value
from .board import BOARD_SIZE, SQUARES
from .events import (
    AuctionEnded,
    Event,
    LeftJail,
    Moved,
    OfferClosed,
    OfferMade,
    SeatWentOut,
    SentToJail,
    Teleported,
    Transfer,
    TurnStarted,
)
from .evolve import apply_in_place
from .state import State, thaw

__all__ = ["game_analytics"]

_RENT = "rent"
_JACKPOT_WIN = "jackpot_win"


def game_analytics(initial: State, events: Iterable[Event]) -> dict[str, Any]:
    """The analytics of the game that starts at ``initial`` and goes through ``events``."""
    s = thaw(initial)
    seats = len(s.seats)
    landings = [0] * BOARD_SIZE
    by_seat = [[0] * BOARD_SIZE for _ in range(seats)]
    worth: list[list[int]] = [[net_worth(s, seat)] for seat in range(seats)]
    rounds: list[int] = [0]
    offers: dict[str, OfferMade] = {}
    trades: list[dict[str, Any]] = []
    rent_paid = [0] * seats
    rent_received = [0] * seats
    rent_by_square: dict[int, int] = {}
    rent_count = [0] * seats
    auctions: list[dict[str, Any]] = []
    largest_rent: dict[str, Any] | None = None
    jailed_at: dict[int, int] = {}
    """seat -> its turns started so far when it was sent to jail"""
    turns = [0] * seats
    longest_jail: dict[str, Any] | None = None
    luckiest: dict[str, Any] | None = None
    round_no = s.round

    def close_round() -> None:
        rounds.append(round_no)
        for seat in range(seats):
            worth[seat].append(net_worth(s, seat))

    def jail_stay_over(seat: int) -> None:
        nonlocal longest_jail
        since = jailed_at.pop(seat, None)
        if since is None:
            return
        stay = turns[seat] - since
        if longest_jail is None or stay > longest_jail["turns"]:
            longest_jail = {"seat": seat, "turns": stay, "round": round_no}

    for event in events:
        kind = type(event)
        if kind is TurnStarted:
            assert isinstance(event, TurnStarted)
            if event.round != round_no:
                close_round()
                round_no = event.round
            turns[event.seat] += 1
        elif kind is Moved:
            assert isinstance(event, Moved)
            landings[event.to] += 1
            by_seat[event.seat][event.to] += 1
        elif kind is Teleported:
            assert isinstance(event, Teleported)
            landings[event.square] += 1
            by_seat[event.seat][event.square] += 1
        elif kind is Transfer:
            assert isinstance(event, Transfer)
            if event.reason == _RENT and event.frm >= 0:
                square = s.seats[event.frm].position
                rent_paid[event.frm] += event.amount
                rent_count[event.frm] += 1
                if event.to >= 0:
                    rent_received[event.to] += event.amount
                rent_by_square[square] = rent_by_square.get(square, 0) + event.amount
                if largest_rent is None or event.amount > largest_rent["amount"]:
                    largest_rent = {
                        "amount": event.amount,
                        "payer": event.frm,
                        "owner": event.to,
                        "square": square,
                        "round": round_no,
                    }
            elif (
                event.reason == _JACKPOT_WIN
                and event.to >= 0
                and (luckiest is None or event.amount > luckiest["amount"])
            ):
                luckiest = {"seat": event.to, "amount": event.amount, "round": round_no}
        elif kind is OfferMade:
            assert isinstance(event, OfferMade)
            offers[event.offer] = event
        elif kind is OfferClosed:
            assert isinstance(event, OfferClosed)
            offer = offers.pop(event.offer, None)
            if offer is not None and event.how == "accepted":
                # Valued before the offer's own transfers are applied: as both sides saw it.
                trades.append(
                    {
                        "round": round_no,
                        "offer": offer.offer,
                        "frm": offer.frm,
                        "to": offer.to,
                        "give_cash": offer.give_cash,
                        "give_squares": list(offer.give_squares),
                        "take_cash": offer.take_cash,
                        "take_squares": list(offer.take_squares),
                        "give_value": trade_side_value(s, offer.give_cash, offer.give_squares),
                        "take_value": trade_side_value(s, offer.take_cash, offer.take_squares),
                    }
                )
        elif kind is AuctionEnded:
            assert isinstance(event, AuctionEnded)
            if event.winner is not None:
                auctions.append(
                    {
                        "round": round_no,
                        "square": event.square,
                        "winner": event.winner,
                        "price": event.price,
                        "list_price": SQUARES[event.square].price,
                    }
                )
        elif kind is SentToJail:
            assert isinstance(event, SentToJail)
            jailed_at[event.seat] = turns[event.seat]
        elif kind is LeftJail:
            assert isinstance(event, LeftJail)
            jail_stay_over(event.seat)
        elif kind is SeatWentOut:
            assert isinstance(event, SeatWentOut)
            jail_stay_over(event.seat)
        # Applied after looking at it: a trade is valued (and a rent's square read)
        # in the state before the event.
        apply_in_place(s, event)
    for seat in list(jailed_at):
        jail_stay_over(seat)
    close_round()
    return {
        "seats": seats,
        "landings": landings,
        "landings_by_seat": by_seat,
        "rounds": rounds,
        "net_worth": worth,
        "trades": trades,
        "rent": {
            "paid": rent_paid,
            "received": rent_received,
            "payments": rent_count,
            "by_square": {str(sq): amount for sq, amount in sorted(rent_by_square.items())},
        },
        "auctions": auctions,
        "highlights": {
            "largest_rent": largest_rent,
            "longest_jail": longest_jail,
            "luckiest_jackpot": luckiest,
        },
    }
