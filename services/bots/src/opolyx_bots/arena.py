"""The arena: bot styles play whole games against each other and against the rules
library's simple built-in policy, straight on the rules library (no NATS), and the win
rates are printed with 95% Wilson confidence intervals."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from opolyx_rules import (
    Command,
    State,
    apply,
    awaiting,
    legal_commands,
    new_game,
    simple_policy,
)

from opolyx_bots.strategy import choose
from opolyx_bots.styles import STYLES

__all__ = ["SIMPLE", "ArenaResult", "Tally", "play", "run_arena", "summary", "wilson"]

SIMPLE = "simple"
Decider = Callable[[State, int], Command]


def bot_decider(style_name: str, rng: random.Random) -> Decider:
    style = STYLES[style_name]

    def decide(state: State, seat: int) -> Command:
        command = choose(state, seat, legal_commands(state, seat), style, rng)
        assert command is not None, f"{style_name} had no decision for seat {seat}"
        return command

    return decide


def decider_for(name: str, rng: random.Random) -> Decider:
    # The library's simple policy (it turns down every offer it receives).
    return simple_policy if name == SIMPLE else bot_decider(name, rng)


def play(
    mode: str, entrants: Sequence[str], seed: int, max_commands: int = 100_000
) -> tuple[State, int]:
    """One game; returns the final state and the number of commands played.

    Receivers of open offers answer before the game moves on, as a table would let them.
    """
    rng = random.Random(seed * 7919 + 1)
    deciders = [decider_for(name, rng) for name in entrants]
    state = new_game(mode, len(entrants), seed)
    now = 0.0
    commands = 0
    while not state.finished and commands < max_commands:
        waiting = awaiting(state)
        receivers = [s for s in waiting if any(o.to == s for o in state.offers)]
        seat = receivers[0] if receivers else waiting[0]
        now += 1.0
        state, _ = apply(state, deciders[seat](state, seat), now)
        commands += 1
    return state, commands


def winners(state: State) -> set[int]:
    """Seats credited with the win (Team: every seat of the winning side)."""
    if state.winner is None:
        return set()
    if state.config.teams:
        side = state.seats[state.winner].team
        return {s.seat for s in state.seats if s.team == side}
    return {state.winner}


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Tally:
    games: int = 0
    wins: int = 0

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)


@dataclass
class ArenaResult:
    title: str
    fair_share: float
    tallies: dict[str, Tally] = field(default_factory=dict)
    games: int = 0
    commands: int = 0
    seconds: float = 0.0

    def record(self, name: str, won: bool) -> None:
        tally = self.tallies.setdefault(name, Tally())
        tally.games += 1
        tally.wins += int(won)

    def lines(self) -> list[str]:
        out = [
            f"{self.title}: {self.games} games, fair share {self.fair_share:.0%}, "
            f"{self.commands / max(self.seconds, 1e-9):,.0f} commands/s",
            f"  {'style':<10} {'seats':>6} {'wins':>6} {'win rate':>9}  95% CI",
        ]
        ranked = sorted(self.tallies.items(), key=lambda kv: -kv[1].rate)
        for name, tally in ranked:
            low, high = tally.interval()
            out.append(
                f"  {name:<10} {tally.games:>6} {tally.wins:>6} {tally.rate:>9.1%}  "
                f"[{low:.1%}, {high:.1%}]"
            )
        return out


def _seat_count(mode: str, seats: int) -> int:
    if mode == "team" and seats not in (4, 6):
        return 4
    return seats


def _play_into(result: ArenaResult, mode: str, entrants: list[str], seed: int) -> None:
    """Play one game and count it in ``result``: a win for every seat that won."""
    state, commands = play(mode, entrants, seed)
    won = winners(state)
    for seat, name in enumerate(entrants):
        result.record(name, seat in won)
    result.games += 1
    result.commands += commands


def run_vs_simple(mode: str, style: str, games: int, seats: int, seed: int) -> ArenaResult:
    """One seat of ``style`` against simple-policy seats, rotating the bot's seat."""
    seats = _seat_count(mode, seats)
    result = ArenaResult(f"{style} vs {seats - 1} x simple ({mode})", 1 / seats)
    started = time.perf_counter()
    for game in range(games):
        entrants = [SIMPLE] * seats
        bot_seat = game % seats
        entrants[bot_seat] = style
        _play_into(result, mode, entrants, seed + game)
    result.seconds = time.perf_counter() - started
    return result


def run_mixed(mode: str, games: int, seats: int, seed: int) -> ArenaResult:
    """Every style and the simple policy rotate through the seats of each game."""
    seats = _seat_count(mode, seats)
    names = [*STYLES, SIMPLE]
    result = ArenaResult(f"mixed field ({mode}, {seats} seats)", 1 / seats)
    started = time.perf_counter()
    order = random.Random(seed)
    for game in range(games):
        entrants = order.sample(names, seats) if seats <= len(names) else names[:seats]
        _play_into(result, mode, entrants, seed + game)
    result.seconds = time.perf_counter() - started
    return result


def run_arena(
    mode: str, games: int, seats: int = 4, seed: int = 1, styles: Sequence[str] | None = None
) -> list[ArenaResult]:
    results = [run_mixed(mode, games, seats, seed)]
    for style in styles or list(STYLES):
        results.append(run_vs_simple(mode, style, games, seats, seed + 100_000))
    return results


def summary(results: Sequence[ArenaResult]) -> str:
    """Which style did best against the simple policy, and whether the margin is clear
    (the lower end of its 95% interval above the fair share)."""
    versus = [r for r in results if r.title.split(" ", 2)[1:2] == ["vs"]]
    if not versus:
        return "no style was played against the simple policy"

    def bot_tally(result: ArenaResult) -> tuple[str, Tally]:
        return next((n, t) for n, t in result.tallies.items() if n != SIMPLE)

    best = max(versus, key=lambda r: bot_tally(r)[1].rate)
    name, tally = bot_tally(best)
    low, high = tally.interval()
    seats = round(1 / best.fair_share)
    per_simple_seat = (1 - tally.rate) / (seats - 1)
    verdict = "clearly beats" if low > best.fair_share else "does not clearly beat"
    return (
        f"best style: {name} wins {tally.rate:.1%} [{low:.1%}, {high:.1%}] of games against "
        f"{seats - 1} simple-policy seats (fair share {best.fair_share:.0%}; each simple seat "
        f"{per_simple_seat:.1%}): {name} {verdict} the simple policy"
    )
