"""Modes as frozen configuration (RULES.md R2): the economy plus a few switches.

A mode is data, never a subclass. Every number of the rules that a mode could change
lives here, so the engine reads ``state.config.<field>`` instead of literals. Rules that
only some modes play are feature flags (``Feature``), each switching one rule, tested
with ``config.has(Feature.X)``: a new mode combines flags and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Flag, auto


class Feature(Flag):
    """Rules beyond Classic, one flag each (R17, R18)."""

    NONE = 0
    #: R17: two sides; allies pay no rent, trade freely, inherit; the side wins
    TEAMS = auto()
    #: R18.1: white dice totalling ``lucky_total`` pay ``lucky_payout``
    LUCKY_EIGHT = auto()
    #: R18.2: taxes and card payments to the bank feed a pot that square 20 pays out
    FORTUNE_POT = auto()
    #: R18.3: every ``new_year_every`` rounds each active seat gets ``new_year_gift``
    LUNAR_NEW_YEAR = auto()
    #: R18.4: white dice totalling ``unlucky_total`` cost ``unlucky_cost`` into the pot
    UNLUCKY_FOUR = auto()


#: the largest table of any mode (R2: 2-6 seats); tables of seats are built up to it
MAX_SEATS = 6

FORTUNA_RULES = (
    Feature.LUCKY_EIGHT | Feature.FORTUNE_POT | Feature.LUNAR_NEW_YEAR | Feature.UNLUCKY_FOUR
)


@dataclass(frozen=True, slots=True)
class ModeConfig:
    name: str
    #: seat counts allowed (Team: only 4 or 6)
    allowed_seats: tuple[int, ...] = (2, 3, 4, 5, 6)
    starting_cash: int = 15000
    salary: int = 2000
    landing_bonus: int = 1000
    round_limit: int = 500
    #: first round of the rent tax, round it reaches its full share; None: never (R6)
    rent_tax_start: int | None = 100
    rent_tax_full: int | None = 200
    #: withheld share at full tax, as a fraction num/den (0.99)
    rent_tax_max_num: int = 99
    rent_tax_max_den: int = 100
    turn_seconds: float = 75.0
    payment_seconds: float = 75.0
    auction_bid_seconds: float = 10.0
    offer_seconds: float = 30.0
    #: round from which Speed's third die is rolled; None: never (R19)
    third_die_from_round: int | None = None
    even_building: bool = True
    #: rounds after which an unlifted mortgage expires; None: never (R9)
    mortgage_expiry_rounds: int | None = None
    #: interest charged on lifting a mortgage, in percent of the mortgage value
    mortgage_interest_pct: int = 10
    jackpot_enabled: bool = True
    jackpot_stake: int = 1000
    #: payout by count of numbers chosen (1, 2, 3): exactly fair (R14)
    jackpot_payouts: tuple[int, int, int] = (6000, 3000, 2000)
    bail: int = 500
    max_jail_rolls: int = 3
    auction_step: int = 100
    max_open_offers: int = 3
    #: the smaller side of a trade must be worth at least this percent of the larger
    fairness_pct: int = 50
    missed_turns_to_resign: int = 2
    features: Feature = Feature.NONE
    #: Team mode (R17), derived from ``features`` (read on every rent and trade)
    teams: bool = field(init=False, repr=False, compare=False)
    #: Fortuna numbers (R18)
    lucky_total: int = 8
    lucky_payout: int = 888
    unlucky_total: int = 4
    unlucky_cost: int = 400
    new_year_every: int = 12
    new_year_gift: int = 1200

    def __post_init__(self) -> None:
        if not all(2 <= n <= MAX_SEATS for n in self.allowed_seats):
            raise ValueError(f"a mode seats 2 to {MAX_SEATS}, not {self.allowed_seats}")
        object.__setattr__(self, "teams", Feature.TEAMS in self.features)

    def has(self, feature: Feature) -> bool:
        # Flag membership is plain bit arithmetic on the values (Flag's own ``in`` costs
        # several times more, and rules ask on every tax, card and round).
        return self.features._value_ & feature._value_ == feature._value_

    @property
    def fortuna(self) -> bool:
        """Whether any of Fortuna's four rules (R18) is played."""
        return bool(self.features & FORTUNA_RULES)


CLASSIC = ModeConfig(name="classic")
BLITZ = replace(CLASSIC, name="blitz", round_limit=25, rent_tax_start=None, rent_tax_full=None)
SPEED = replace(
    CLASSIC,
    name="speed",
    round_limit=300,
    rent_tax_start=40,
    rent_tax_full=100,
    turn_seconds=45.0,
    third_die_from_round=7,
    even_building=False,
    mortgage_expiry_rounds=10,
)
TEAM = replace(CLASSIC, name="team", allowed_seats=(4, 6), features=Feature.TEAMS)
HALAL = replace(CLASSIC, name="halal", mortgage_interest_pct=0, jackpot_enabled=False)
FORTUNA = replace(CLASSIC, name="fortuna", features=FORTUNA_RULES)

MODES: dict[str, ModeConfig] = {m.name: m for m in (CLASSIC, BLITZ, SPEED, TEAM, HALAL, FORTUNA)}


def get_mode(name: str) -> ModeConfig:
    """The mode called ``name``; raises ``KeyError`` naming the known modes."""
    try:
        return MODES[name]
    except KeyError:
        raise KeyError(f"unknown mode {name!r}; known modes: {', '.join(MODES)}") from None
