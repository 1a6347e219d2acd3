"""The 16 event cards of R15 as data. Effects are applied by ``turn.apply_card``."""

from __future__ import annotations

from typing import NamedTuple


class Card(NamedTuple):
    number: int
    text: str
    #: collect from (>0) or pay to (<0) the bank
    bank: int = 0
    #: collect from (>0) or pay to (<0) each opponent
    each_opponent: int = 0
    repairs: bool = False
    #: advance to this square (forward, salary when passing Start)
    advance_to: int | None = None
    #: advance to the nearest square of this board group ahead
    advance_to_group: str | None = None
    back: int = 0
    jail: bool = False


REPAIR_PER_BUILDING = 250
REPAIR_PER_FULL_STREET = 1000

CARDS: dict[int, Card] = {
    c.number: c
    for c in (
        Card(1, "Collect 1000 from the bank", bank=1000),
        Card(2, "Collect 2000 from the bank", bank=2000),
        Card(3, "Pay 500 to the bank", bank=-500),
        Card(4, "Pay 1500 to the bank", bank=-1500),
        Card(5, "Pay 2500 to the bank", bank=-2500),
        Card(6, "Collect 500 from each opponent", each_opponent=500),
        Card(7, "Pay 500 to each opponent", each_opponent=-500),
        Card(
            8,
            "Repairs: pay 250 per building, 1000 per street with 5 buildings",
            repairs=True,
        ),
        Card(9, "Advance to Start", advance_to=0),
        Card(10, "Advance to square 11", advance_to=11),
        Card(11, "Advance to square 24", advance_to=24),
        Card(12, "Advance to square 39", advance_to=39),
        Card(13, "Advance to the nearest dealership", advance_to_group="dealer"),
        Card(14, "Advance to the nearest utility", advance_to_group="utility"),
        Card(15, "Go back 3 squares", back=3),
        Card(16, "Go to jail", jail=True),
    )
}
