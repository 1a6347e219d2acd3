"""One readable line per interesting event, for the terminal demo and logs."""

from __future__ import annotations

from .board import SQUARES
from .events import (
    AuctionEnded,
    BuildingBuilt,
    CardDrawn,
    DiceRolled,
    Event,
    GameFinished,
    JackpotPlayed,
    Moved,
    PaymentMade,
    PropertyBought,
    PropertyMortgaged,
    SeatWentOut,
    SentToJail,
    TurnStarted,
)


def describe(event: Event) -> str | None:
    match event:
        case TurnStarted(seat, round_no, _):
            return f"-- round {round_no}, seat {seat} --"
        case DiceRolled(seat, (a, b), third, _, _, _):
            extra = f" + {third}" if third else ""
            return f"seat {seat} rolls {a}+{b}{extra}"
        case Moved(seat, _, to, passed, how) if how != "roll":
            salary = ", passing Start" if passed else ""
            return f"seat {seat} moves to {SQUARES[to].name} ({how}{salary})"
        case PropertyBought(seat, square, price):
            return f"seat {seat} buys {SQUARES[square].name} for {price}"
        case AuctionEnded(square, winner, price):
            if winner is None:
                return f"nobody bids for {SQUARES[square].name}"
            return f"seat {winner} wins {SQUARES[square].name} at auction for {price}"
        case PaymentMade(seat, amount, reason, _):
            return f"seat {seat} pays {amount} ({reason})"
        case CardDrawn(seat, _, text, _):
            return f"seat {seat} draws: {text}"
        case SentToJail(seat, why):
            return f"seat {seat} goes to jail ({why.replace('_', ' ')})"
        case BuildingBuilt(seat, square, count):
            return f"seat {seat} builds on {SQUARES[square].name} ({count})"
        case PropertyMortgaged(seat, square):
            return f"seat {seat} mortgages {SQUARES[square].name}"
        case JackpotPlayed(seat, numbers, die, won):
            outcome = "won" if won else "lost"
            return f"seat {seat} bets on {list(numbers)} at the Jackpot: {die}, {outcome}"
        case SeatWentOut(seat, how, _):
            return f"seat {seat} is out ({how})"
        case GameFinished(winner, _, reason, round_no):
            return f"seat {winner} wins in round {round_no} ({reason.replace('_', ' ')})"
    return None


__all__ = ["describe"]
