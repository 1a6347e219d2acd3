"""Messages of the progression service: request-reply on `opolyx.progression.<query>`.

Every request names the asking player in `player_id`. Only the gateway (which alone asserts
a player's identity) and the lobby (`boosts`) may send here (permissions.py); the service
never trusts a player id from anywhere else. Replies are the model named below or
`ErrorReply` with one of the codes of this module (or the envelope's `request/*` codes).

| subject | request | reply |
|---|---|---|
| `PROFILE` | `ProfileRequest` | `Profile` (the asking player, with recent credited games) |
| `PUBLIC_PROFILE` | `PublicProfileRequest` | `PublicProfile` |
| `CARDS` | `CardsRequest` | `CardsReply` |
| `MISSIONS` | `MissionsRequest` | `MissionsReply` |
| `LEADERBOARD` | `LeaderboardRequest` | `LeaderboardReply` |
| `FOLLOW` / `UNFOLLOW` | `FollowRequest` | `FollowReply` |
| `FOLLOWING` | `FollowingRequest` | `FollowingReply` |
| `CREDIT` | `GameCreditRequest` | `GameCreditReply` (what one game paid: the post-game screen) |
| `BOOSTS` | `BoostsRequest` | `BoostsReply` (the lobby, when a game starts) |
| `PRESENCE` | `PresenceReport` | `PresenceAck` (the gateway: who is connected) |
| `FLAGS` | `FlagsRequest` | `FlagsReply` (alt-farming flags, for operators) |

Everything here is bounded: lists have a maximum length, strings a maximum size, so no reply
grows with a player's history (the leaderboard is at most 100 rows plus the player's own).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from opolyx_contracts.envelope import Message, OkReply
from opolyx_contracts.subjects import progression

__all__ = [
    "BOOSTS",
    "CARDS",
    "CREDIT",
    "FLAGS",
    "FOLLOW",
    "FOLLOWING",
    "FOLLOW_LIMIT",
    "FOLLOW_LIMIT_REACHED",
    "FOLLOW_SELF",
    "LEADERBOARD",
    "LEADERBOARD_LIMIT",
    "MAX_REQUEST_BYTES",
    "MISSIONS",
    "PRESENCE",
    "PROFILE",
    "PUBLIC_PROFILE",
    "QUERIES",
    "UNFOLLOW",
    "UNKNOWN_PLAYER",
    "BoostsReply",
    "BoostsRequest",
    "CardView",
    "CardsReply",
    "CardsRequest",
    "FarmingFlagView",
    "FlagsReply",
    "FlagsRequest",
    "FollowReply",
    "FollowRequest",
    "FollowedPlayer",
    "FollowingReply",
    "FollowingRequest",
    "GameCredit",
    "GameCreditReply",
    "GameCreditRequest",
    "LeaderboardEntry",
    "LeaderboardReply",
    "LeaderboardRequest",
    "MissionView",
    "MissionsReply",
    "MissionsRequest",
    "PresenceAck",
    "PresenceReport",
    "Profile",
    "ProfileRequest",
    "PublicProfile",
    "PublicProfileRequest",
    "RankName",
    "RarityName",
    "XpBreakdown",
]

# --- subjects ------------------------------------------------------------------------------

PROFILE = progression("profile")
PUBLIC_PROFILE = progression("public_profile")
CARDS = progression("cards")
MISSIONS = progression("missions")
LEADERBOARD = progression("leaderboard")
FOLLOW = progression("follow")
UNFOLLOW = progression("unfollow")
FOLLOWING = progression("following")
CREDIT = progression("credit")
BOOSTS = progression("boosts")
PRESENCE = progression("presence")
FLAGS = progression("flags")
QUERIES: tuple[str, ...] = (
    PROFILE,
    PUBLIC_PROFILE,
    CARDS,
    MISSIONS,
    LEADERBOARD,
    FOLLOW,
    UNFOLLOW,
    FOLLOWING,
    CREDIT,
    BOOSTS,
    PRESENCE,
    FLAGS,
)

MAX_REQUEST_BYTES = 64 * 1024
"""Largest request body the service reads (the largest real one, a presence report of 1,000
players, is about 40 KB); a bigger one is refused with `request/invalid`."""
FOLLOW_LIMIT = 500
"""How many players one player may follow."""
LEADERBOARD_LIMIT = 100

# --- error codes ---------------------------------------------------------------------------

UNKNOWN_PLAYER = "progression/unknown_player"
"""The named player has never played a credited game nor been seen by the gateway."""
FOLLOW_SELF = "progression/follow_self"
FOLLOW_LIMIT_REACHED = "progression/follow_limit"

PlayerId = Annotated[str, Field(min_length=1, max_length=128)]
DisplayName = Annotated[str, Field(min_length=1, max_length=64)]
TableId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,128}$")]
RankName = Literal["Bronze", "Silver", "Gold", "Platinum", "Diamond", "Master"]
RarityName = Literal["common", "uncommon", "rare", "epic", "legendary"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


# --- profile -------------------------------------------------------------------------------


class ProfileRequest(Message):
    player_id: PlayerId
    display_name: DisplayName | None = None
    """The name the gateway knows; stored (a player's name follows their latest session)."""


class XpBreakdown(_Value):
    placement: int
    groups: int
    survival: int


class CardView(_Value):
    card_id: int
    square: int
    """Board index of the property square the card names."""
    rarity: RarityName
    boost_pct: int
    source: Literal["level", "win"]
    """Dropped for reaching a level (`level`) or for winning `table_id`."""
    level: int | None
    """The level whose reaching dropped the card (source `level`)."""
    table_id: str
    """The game whose credit dropped the card."""
    seed: int
    """The recorded draw seed: `draw_card(SeededDraws(seed))` re-derives the card (audit)."""
    drawn_at: float


class GameCredit(_Value):
    """What one finished game paid one player (the post-game screen)."""

    table_id: str
    mode: str
    rounds: int
    place: int
    paid: bool
    """False when the game ended before round 20, is a practice game or was flagged (see
    `reason`)."""
    reason: Literal["paid", "too_short", "practice", "flagged"]
    xp: int
    """XP of the game itself (R20), 0 when not paid."""
    xp_breakdown: XpBreakdown
    mission_xp: int
    """XP of missions this game completed."""
    missions_completed: list[str] = Field(max_length=16)
    level_before: int
    level_after: int
    cards: list[CardView] = Field(max_length=16)
    credited_at: float


class Profile(OkReply):
    player_id: str
    display_name: str | None
    total_xp: int
    level: int
    rank: RankName
    level_xp: int
    """Total XP at which the current level began."""
    next_level_xp: int
    """Total XP the next level needs (the XP bar runs from `level_xp` to this)."""
    weekly_xp: int
    """XP earned this ISO week (UTC)."""
    games_credited: int
    cards: int
    followers: int
    following: int
    recent_games: list[GameCredit] = Field(max_length=5)
    """The latest credited games, newest first."""


class PublicProfileRequest(Message):
    player_id: PlayerId
    """Who asks (to say whether they follow the target)."""
    target_id: PlayerId


class PublicProfile(OkReply):
    player_id: str
    display_name: str | None
    total_xp: int
    level: int
    rank: RankName
    weekly_xp: int
    games_credited: int
    cards: int
    followers: int
    following: int
    followed_by_you: bool


# --- cards ---------------------------------------------------------------------------------


class CardsRequest(Message):
    player_id: PlayerId


class CardsReply(OkReply):
    cards: list[CardView] = Field(max_length=2000)
    """Newest first (a player gains a card per win and per few levels: bounded in practice;
    the service caps the list at 2,000)."""
    best_by_square: dict[int, int]
    """Square -> the boost (percent) the player brings to a game there (R20)."""


# --- missions ------------------------------------------------------------------------------


class MissionsRequest(Message):
    player_id: PlayerId


class MissionView(_Value):
    mission_id: str
    """Stable id from the catalogue, e.g. `daily.win_game`; the client translates it."""
    period: Literal["daily", "weekly"]
    period_key: str
    """`2026-12-01` (UTC day) or `2026-W49` (ISO week)."""
    goal: int
    progress: int
    completed: bool
    reward_xp: int
    ends_at: float
    """When the period ends (Unix seconds, UTC)."""


class MissionsReply(OkReply):
    missions: list[MissionView] = Field(max_length=16)


# --- leaderboards --------------------------------------------------------------------------


class LeaderboardRequest(Message):
    player_id: PlayerId
    scope: Literal["weekly", "following"] = "weekly"
    """`weekly`: everyone; `following`: the players the asker follows, and the asker."""
    week: str | None = Field(default=None, pattern=r"^\d{4}-W\d{2}$")
    """ISO week (`2026-W49`); the current one when absent."""
    limit: int = Field(default=LEADERBOARD_LIMIT, ge=1, le=LEADERBOARD_LIMIT)


class LeaderboardEntry(_Value):
    position: int
    """1 for the most XP; players with equal XP share a position."""
    player_id: str
    display_name: str | None
    level: int
    rank: RankName
    xp: int
    """XP earned in the week."""


class LeaderboardReply(OkReply):
    scope: Literal["weekly", "following"]
    week: str
    entries: list[LeaderboardEntry] = Field(max_length=LEADERBOARD_LIMIT)
    own: LeaderboardEntry | None
    """The asker's row (also when outside the top); None before they earned XP that week."""
    players: int
    """How many players earned XP that week (in the scope)."""


# --- follows -------------------------------------------------------------------------------


class FollowRequest(Message):
    player_id: PlayerId
    target_id: PlayerId


class FollowReply(OkReply):
    target_id: str
    following: bool
    """Whether the asker follows the target now."""
    followers: int
    """The target's follower count."""
    following_count: int
    """How many players the asker follows."""


class FollowingRequest(Message):
    player_id: PlayerId


class FollowedPlayer(_Value):
    player_id: str
    display_name: str | None
    level: int
    rank: RankName
    online: bool
    """Connected to a gateway now (the gateway's presence reports)."""
    table_id: str | None
    """The unfinished game the player sits in (to offer watching it), if any."""
    followed_at: float


class FollowingReply(OkReply):
    players: list[FollowedPlayer] = Field(max_length=FOLLOW_LIMIT)
    followers: int
    following: int


# --- post-game -----------------------------------------------------------------------------


class GameCreditRequest(Message):
    player_id: PlayerId
    table_id: TableId


class GameCreditReply(OkReply):
    status: Literal["credited", "pending"]
    """`pending` until the service has credited the game (it follows GAMES moments later)."""
    credit: GameCredit | None


# --- boosts (the lobby, when a game starts) ------------------------------------------------


class BoostsRequest(Message):
    """The card boosts (R20) of the humans of a starting game; fixed from then on."""

    players: list[PlayerId] = Field(max_length=6)
    table_id: TableId | None = None
    """The table the game will run on: the service then shows these players as in that game
    (for followers) until GAMES says they are out or it finished."""


class BoostsReply(OkReply):
    boosts: dict[str, dict[int, int]] = Field(default_factory=dict)
    """player id -> property square -> rent percentage; a player not named has none."""


# --- presence (the gateway) ----------------------------------------------------------------


class PresenceReport(Message):
    """Who is connected to one gateway instance: sent on connect/disconnect and every
    `presence_interval` seconds for everyone connected (a player not reported within the
    service's `presence_ttl_seconds` counts as offline)."""

    online: list[PlayerId] = Field(default_factory=list, max_length=1000)
    offline: list[PlayerId] = Field(default_factory=list, max_length=1000)
    names: dict[str, DisplayName] = Field(default_factory=dict, max_length=1000)
    """Display names of players in `online`, when known."""


class PresenceAck(OkReply):
    pass


# --- alt-farming flags (operators) ---------------------------------------------------------


class FlagsRequest(Message):
    limit: int = Field(default=100, ge=1, le=500)


class FarmingFlagView(_Value):
    flag_id: int
    table_id: str
    """The game that completed the pattern; it paid no XP."""
    kind: Literal["one_way_value", "resignation_pattern"]
    giver_id: str
    receiver_id: str
    games: list[str] = Field(max_length=64)
    """The games of the pattern, oldest first."""
    value: int
    """Total value moved from giver to receiver over those games (0 for resignations)."""
    detail: str
    flagged_at: float


class FlagsReply(OkReply):
    flags: list[FarmingFlagView] = Field(max_length=500)
