"""Replays of finished games, as the gateway serves them over HTTP (issue 16).

- `GET /api/replays/{table_id}` -> `ReplaySummary`: who played, the seed commitment and
  the revealed seed, the timeline (one `TimelineMark` per step), the analytics.
- `GET /api/replays/{table_id}/steps?start=N` -> `ReplayPage`: the public state at each
  of up to `page_size` steps from N, with the events that follow it (the log).
- `GET /api/replays/{table_id}/file` -> `ReplayFile`: the whole game, for
  `opolyx-rules verify FILE` (the format is specified in docs/DICE.md).
- `POST /api/replays/{table_id}/fork` `ForkRequest` -> `ForkResult`: a private practice
  game against bots from a step's position ("play from here").
- `GET /api/players/{player_id}/games` -> `PastGames`: a player's finished games and those
  of the players they follow.

A step is the position at the start of a turn (step 0: the game's first state); the last
step is the position at the end of the game. Events are the rules library's JSON
(`opolyx_contracts.game` types them); states its public view.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply
from opolyx_contracts.subjects import progression

__all__ = [
    "PAST_GAMES",
    "PAST_GAMES_LIMIT",
    "REPLAY_BAD_STEP",
    "REPLAY_ERROR_CODES",
    "REPLAY_FORMAT",
    "REPLAY_FORMAT_VERSION",
    "REPLAY_NOT_FINISHED",
    "REPLAY_NOT_FOUND",
    "REPLAY_UNREADABLE",
    "Auction",
    "ForkRequest",
    "ForkResult",
    "ForkSource",
    "GameAnalytics",
    "Highlights",
    "PastGame",
    "PastGames",
    "PastGamesReply",
    "PastGamesRequest",
    "RentLedger",
    "ReplayBatch",
    "ReplayFile",
    "ReplayPage",
    "ReplaySeat",
    "ReplayStep",
    "ReplaySummary",
    "TimelineMark",
    "Trade",
]

REPLAY_NOT_FOUND = "replay/not_found"
REPLAY_NOT_FINISHED = "replay/not_finished"
"""The game is still running: its replay opens when it ends."""
REPLAY_UNREADABLE = "replay/unreadable"
"""A stored message of the game does not parse (the game is not served, never guessed)."""
REPLAY_BAD_STEP = "replay/bad_step"
"""A step the game does not have, or one a practice game cannot start from."""
REPLAY_ERROR_CODES: tuple[str, ...] = (
    REPLAY_NOT_FOUND,
    REPLAY_NOT_FINISHED,
    REPLAY_UNREADABLE,
    REPLAY_BAD_STEP,
)

REPLAY_FORMAT: Final = "opolyx-replay"
REPLAY_FORMAT_VERSION: Final = 1
PAST_GAMES_LIMIT = 50
"""Most games one past-games list holds (each list: own, followed)."""
MAX_PAGE_SIZE = 100
"""Most steps one page holds (a step's state is about 4 KB of JSON)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class ReplaySeat(_Frozen):
    seat: int
    player_id: str
    name: str | None = None
    bot: bool = False
    boosts: dict[int, int] = Field(default_factory=dict)


class TimelineMark(_Frozen):
    """One step of the timeline: the turn that starts there (the last: the game's end)."""

    step: int
    round: int
    seat: int
    """Whose turn starts at this step (at the last step: who played last)."""
    end: bool = False


class Trade(_Frozen):
    round: int
    offer: str
    frm: int
    to: int
    give_cash: int
    give_squares: list[int]
    take_cash: int
    take_squares: list[int]
    give_value: int
    """R10 value of what `frm` gave (cash + price, half for a mortgaged property)."""
    take_value: int


class RentLedger(_Frozen):
    paid: list[int]
    received: list[int]
    payments: list[int]
    by_square: dict[int, int]


class Auction(_Frozen):
    round: int
    square: int
    winner: int
    price: int
    list_price: int


class Highlights(_Frozen):
    largest_rent: dict[str, int] | None
    """{amount, payer, owner, square, round}"""
    longest_jail: dict[str, int] | None
    """{seat, turns, round}: turns of the seat's own spent in jail"""
    luckiest_jackpot: dict[str, int] | None
    """{seat, amount, round}"""


class GameAnalytics(_Frozen):
    """`opolyx_rules.analytics.game_analytics` of a game."""

    seats: int
    landings: list[int]
    landings_by_seat: list[list[int]]
    rounds: list[int]
    net_worth: list[list[int]]
    """Per seat, its net worth at the start and at the end of each round in `rounds`."""
    trades: list[Trade]
    rent: RentLedger
    auctions: list[Auction]
    highlights: Highlights


class ReplaySummary(_Frozen):
    table_id: str
    mode: str
    rules_version: str
    practice: bool
    """A practice game (forked from a replay): no XP."""
    seats: list[ReplaySeat]
    seed_commitment: str
    seed: int
    seed_text: str
    """The seed in decimal: a JSON reader with 53-bit numbers (JavaScript) loses its digits."""
    first_seat_drawn: bool
    """The first seat was drawn from the seed (every game except a fork from a position)."""
    rounds: int
    winner: int | None
    placement: list[int]
    started_at: float
    finished_at: float
    steps: int
    page_size: int
    timeline: list[TimelineMark]
    analytics: GameAnalytics
    forked_from: str | None = None


class ReplayStep(_Frozen):
    step: int
    round: int
    seat: int
    state: dict[str, Any]
    """The public view at this step."""
    net_worth: list[int]
    """Each seat's net worth at this step (R20)."""
    events: list[dict[str, Any]]
    """The events from this step to the next (empty at the last step)."""


class ReplayPage(_Frozen):
    table_id: str
    start: int
    steps: list[ReplayStep]


class ReplayBatch(_Frozen):
    """One command of the game and the events it caused."""

    command: dict[str, Any]
    """The rules command as the table applied it (the seat filled in; timeouts too)."""
    at: float
    """Game time (seconds since the start) it was applied at."""
    events: list[dict[str, Any]]


class ReplayFile(_Frozen):
    """Everything needed to check a game offline (docs/DICE.md)."""

    format: Literal["opolyx-replay"] = REPLAY_FORMAT
    format_version: Literal[1] = REPLAY_FORMAT_VERSION
    table_id: str
    mode: str
    rules_version: str
    practice: bool = False
    seats: list[ReplaySeat]
    seed_commitment: str
    seed: int
    seed_text: str
    """The seed in decimal (for readers whose JSON numbers have 53 bits)."""
    first_seat_drawn: bool
    initial: dict[str, Any]
    """The public view at game time 0 (as the game's `table_created` event published it)."""
    batches: list[ReplayBatch]


class ForkSource(_Frozen):
    """Where a forked game starts: a step of a finished game (`CreateTable.fork`)."""

    table_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,128}$")
    step: int = Field(ge=0, le=1_000_000)


class ForkRequest(_Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int = Field(ge=0, le=1_000_000)
    seat: int | None = Field(default=None, ge=0, le=5)
    """The seat to play; by default the player's own seat in that game, else the seat whose
    turn it is."""


class ForkResult(_Frozen):
    room_id: str
    table_id: str
    seat: int


class PastGame(_Frozen):
    table_id: str
    mode: str
    finished_at: float
    rounds: int
    place: int
    player_id: str
    """Whose game it is (the player asked for, or one they follow)."""
    name: str | None = None
    replay: str | None = None
    """The replay page's link, `/replay.html?table=<id>` (the gateway fills it in)."""


class PastGames(_Frozen):
    """`GET /api/players/{player_id}/games`: a player's finished games, newest first, and
    the latest games of the players they follow."""

    player_id: str
    games: list[PastGame] = Field(max_length=PAST_GAMES_LIMIT)
    followed: list[PastGame] = Field(max_length=PAST_GAMES_LIMIT)


PAST_GAMES = progression("past_games")
"""`PastGamesRequest` -> `PastGamesReply` | `ErrorReply` (the progression service)."""


class PastGamesRequest(Message):
    player_id: str = Field(min_length=1, max_length=128)
    limit: int = Field(default=20, ge=1, le=PAST_GAMES_LIMIT)


class PastGamesReply(OkReply):
    player_id: str
    games: list[PastGame] = Field(max_length=PAST_GAMES_LIMIT)
    followed: list[PastGame] = Field(max_length=PAST_GAMES_LIMIT)
