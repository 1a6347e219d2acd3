"""REST routes (in OpenAPI) for the signed-in player's progression: profile, cards,
missions, leaderboards, follows and the post-game summary.

Each route asks the progression service one request of `opolyx_contracts.progression` as the
token's player (never a player id from the request) and returns its reply model as it is:
the REST shapes are the contract's. A refusal keeps the service's code
(``progression/follow_self``, ``progression/unknown_player``...); without a progression
service the answer is 503 ``service/unavailable``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from litestar import Request, Router, delete, get, put
from litestar.params import Parameter, QueryParameter
from opolyx_contracts import progression as contract
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import AUTH_REQUIRED
from pydantic import BaseModel

from opolyx_gateway.auth import AuthError, Identity
from opolyx_gateway.errors import GatewayError
from opolyx_gateway.upstream import Upstream

__all__ = ["progression_router"]

R = TypeVar("R", bound=BaseModel)
_PLAYER_ID = Parameter(pattern=r"^[A-Za-z0-9_-]{1,128}$", description="A player id")
_TABLE_ID = Parameter(pattern=r"^[A-Za-z0-9_-]{1,128}$", description="A finished game's table")


def _signed_in(request: Request[Any, Any, Any]) -> tuple[Identity, Upstream]:
    """The token's player and the gateway's upstream (the app's `Gateway`)."""
    gw = getattr(request.app.state, "gateway", None)
    if gw is None:
        raise GatewayError(UNAVAILABLE, "the gateway is still connecting to NATS; try again soon")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError(AUTH_REQUIRED, "send Authorization: Bearer <session token>")
    identity: Identity = gw.signer.verify(token.strip())
    upstream: Upstream = gw.upstream
    return identity, upstream


async def _ask(
    request: Request[Any, Any, Any],
    subject: str,
    build: type[BaseModel],
    reply: type[R],
    **fields: Any,
) -> R:
    identity, upstream = _signed_in(request)
    return await upstream.progression(subject, build(player_id=identity.player_id, **fields), reply)


@get("/me/profile", summary="My profile: XP, level, rank, recent credited games")
async def my_profile(request: Request[Any, Any, Any]) -> contract.Profile:
    identity, upstream = _signed_in(request)
    ask = contract.ProfileRequest(player_id=identity.player_id, display_name=identity.name)
    return await upstream.progression(contract.PROFILE, ask, contract.Profile)


@get("/me/cards", summary="My collectible cards, and my best boost per square")
async def my_cards(request: Request[Any, Any, Any]) -> contract.CardsReply:
    return await _ask(request, contract.CARDS, contract.CardsRequest, contract.CardsReply)


@get("/me/missions", summary="My daily and weekly missions with progress")
async def my_missions(request: Request[Any, Any, Any]) -> contract.MissionsReply:
    return await _ask(request, contract.MISSIONS, contract.MissionsRequest, contract.MissionsReply)


@get("/me/following", summary="The players I follow: online, and the game they are in")
async def my_following(request: Request[Any, Any, Any]) -> contract.FollowingReply:
    return await _ask(
        request, contract.FOLLOWING, contract.FollowingRequest, contract.FollowingReply
    )


@put("/me/following/{target_id:str}", summary="Follow a player", status_code=200)
async def follow(
    request: Request[Any, Any, Any], target_id: Annotated[str, _PLAYER_ID]
) -> contract.FollowReply:
    return await _ask(
        request, contract.FOLLOW, contract.FollowRequest, contract.FollowReply, target_id=target_id
    )


@delete("/me/following/{target_id:str}", summary="Stop following a player", status_code=200)
async def unfollow(
    request: Request[Any, Any, Any], target_id: Annotated[str, _PLAYER_ID]
) -> contract.FollowReply:
    return await _ask(
        request,
        contract.UNFOLLOW,
        contract.FollowRequest,
        contract.FollowReply,
        target_id=target_id,
    )


@get("/me/games/{table_id:str}", summary="What a finished game paid me (post-game summary)")
async def my_game(
    request: Request[Any, Any, Any], table_id: Annotated[str, _TABLE_ID]
) -> contract.GameCreditReply:
    return await _ask(
        request,
        contract.CREDIT,
        contract.GameCreditRequest,
        contract.GameCreditReply,
        table_id=table_id,
    )


@get("/leaderboard", summary="This week's leaderboard: top 100 and my own row")
async def leaderboard(
    request: Request[Any, Any, Any],
    board: Annotated[
        Literal["weekly", "following"],
        QueryParameter(
            name="scope",
            description="weekly: everyone; following: the players I follow, and me",
        ),
    ] = "weekly",
) -> contract.LeaderboardReply:
    return await _ask(
        request,
        contract.LEADERBOARD,
        contract.LeaderboardRequest,
        contract.LeaderboardReply,
        scope=board,
    )


progression_router = Router(
    path="/api",
    tags=["progression"],
    route_handlers=[
        my_profile,
        my_cards,
        my_missions,
        my_following,
        follow,
        unfollow,
        my_game,
        leaderboard,
    ],
)
