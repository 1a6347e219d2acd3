"""Event batches of a game as a table stores them, built from the contract models (test helper;
the finished games themselves come from `opolyx_testing.finished_games`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from opolyx_contracts.table import TableEvents
from opolyx_testing.finished_games import WEDNESDAY


@dataclass
class EventLog:
    """Rules events, grouped into batches as a table stores them (per-table seq from 1)."""

    table_id: str
    batches: list[TableEvents] = field(default_factory=list)
    _seq: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _offers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, *events: dict[str, Any]) -> EventLog:
        records = [{"seq": next(self._seq), "version": 1, "event": e} for e in events]
        self.batches.append(
            TableEvents.model_validate(
                {
                    "table_id": self.table_id,
                    "source": "rules",
                    "first_seq": records[0]["seq"],
                    "last_seq": records[-1]["seq"],
                    "version": 1,
                    "events": records,
                    "at": WEDNESDAY,
                }
            )
        )
        return self

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else 0

    def buy(self, seat_no: int, square: int, price: int = 600) -> EventLog:
        return self.add(
            {"type": "transfer", "frm": seat_no, "to": -1, "amount": price, "reason": "purchase"},
            {"type": "property_bought", "seat": seat_no, "square": square, "price": price},
        )

    def rent(self, payer: int, owner: int, amount: int) -> EventLog:
        return self.add(
            {"type": "transfer", "frm": payer, "to": owner, "amount": amount, "reason": "rent"}
        )

    def auction_won(self, winner: int, square: int, price: int) -> EventLog:
        return self.add(
            {"type": "auction_ended", "square": square, "winner": winner, "price": price}
        )

    def trade(
        self,
        frm: int,
        to: int,
        *,
        give_cash: int = 0,
        give_squares: Sequence[int] = (),
        take_cash: int = 0,
        take_squares: Sequence[int] = (),
        accepted: bool = True,
    ) -> EventLog:
        offer = f"o{next(self._offers)}"
        self.add(
            {
                "type": "offer_made",
                "offer": offer,
                "frm": frm,
                "to": to,
                "give_cash": give_cash,
                "give_squares": list(give_squares),
                "take_cash": take_cash,
                "take_squares": list(take_squares),
                "deadline": 10.0,
            }
        )
        return self.add(
            {"type": "offer_closed", "offer": offer, "how": "accepted" if accepted else "rejected"}
        )

    def bankrupt_to(self, seat_no: int, creditor: int, cash: int) -> EventLog:
        return self.add(
            {
                "type": "transfer",
                "frm": seat_no,
                "to": creditor,
                "amount": cash,
                "reason": "bankruptcy",
            },
            {"type": "seat_went_out", "seat": seat_no, "how": "bankrupt", "heir": None},
        )

    def resign(self, seat_no: int) -> EventLog:
        return self.add({"type": "seat_went_out", "seat": seat_no, "how": "resigned", "heir": None})

    def build(self, seat_no: int, square: int, buildings: int = 1) -> EventLog:
        return self.add(
            {"type": "building_built", "seat": seat_no, "square": square, "buildings": buildings}
        )

    def finish(self, winner: int, placement: Sequence[int], reason: str, round_no: int) -> EventLog:
        return self.add(
            {
                "type": "game_finished",
                "winner": winner,
                "placement": list(placement),
                "reason": reason,
                "round": round_no,
            }
        )
