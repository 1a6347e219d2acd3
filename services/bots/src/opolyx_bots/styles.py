"""Play styles: numbers that tilt decisions. A style never changes what is legal."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["STYLES", "Style", "get_style"]


@dataclass(frozen=True, slots=True)
class Style:
    name: str
    #: cash kept back after buying, building or lifting (plus the board's danger)
    reserve: int = 1500
    #: how much of the biggest rent an opponent could charge is also kept back
    danger_weight: float = 0.5
    #: highest auction bid as a multiple of the bot's valuation of the property
    auction_premium: float = 1.0
    #: multiplier on the value of completing a colour group
    group_weight: float = 1.0
    #: build only while cash stays above reserve * this factor
    build_reserve_factor: float = 1.0
    #: chance of proposing a trade in a management window where one makes sense
    trade_rate: float = 0.3
    #: chance of betting at the Jackpot when cash allows
    jackpot_rate: float = 0.0
    #: pay bail early in the game instead of trying for doubles
    bail_early: bool = True
    #: lift mortgages only with this much cash above the reserve
    lift_margin: int = 1000


STYLES: dict[str, Style] = {
    s.name: s
    for s in (
        Style("balanced"),
        Style(
            "cautious",
            reserve=3000,
            danger_weight=1.0,
            auction_premium=0.85,
            build_reserve_factor=1.5,
            trade_rate=0.15,
            bail_early=False,
            lift_margin=2000,
        ),
        Style(
            "builder",
            reserve=1000,
            danger_weight=0.35,
            auction_premium=1.05,
            group_weight=1.3,
            build_reserve_factor=0.6,
            trade_rate=0.35,
        ),
        Style("trader", reserve=1500, group_weight=1.2, trade_rate=0.9, auction_premium=0.95),
        Style(
            "gambler",
            reserve=700,
            danger_weight=0.2,
            auction_premium=1.1,
            build_reserve_factor=0.7,
            jackpot_rate=0.5,
            lift_margin=500,
        ),
        Style(
            "shark",
            reserve=1200,
            danger_weight=0.4,
            auction_premium=1.35,
            group_weight=1.25,
            trade_rate=0.3,
        ),
    )
}


def get_style(name: str | None) -> Style:
    """The named style; an unknown or missing name plays ``balanced``."""
    return STYLES.get(name or "", STYLES["balanced"])
