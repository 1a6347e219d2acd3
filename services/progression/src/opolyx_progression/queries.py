"""Request-reply: one body in, one reply out, for every subject of `contracts.progression`.

Every request gets an answer: the reply model, or the contract's error reply with a code
(`request/*` for a bad body, `progression/*` for a refusal, `internal/error` for a bug,
logged). A body over `MAX_REQUEST_BYTES` is refused before it is parsed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from opolyx_contracts import progression as contract
from opolyx_contracts.envelope import Message, decode, encode, error_reply
from opolyx_contracts.errors import BAD_REQUEST, ContractError
from opolyx_contracts.replay import PAST_GAMES, PastGamesReply, PastGamesRequest
from opolyx_service.errors import error_reply_for
from opolyx_service.logs import get_logger
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression import reads, social
from opolyx_progression.past_games import past_games
from opolyx_progression.settings import ProgressionSection

__all__ = ["Queries"]

log = get_logger("opolyx.progression.queries")

Clock = Callable[[], float]


class Queries:
    def __init__(
        self, engine: AsyncEngine, settings: ProgressionSection, clock: Clock = time.time
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.clock = clock
        self.tops = reads.TopCache(settings.leaderboard_cache_seconds)
        self._routes: dict[str, tuple[type[Message], Callable[[Any], Awaitable[BaseModel]]]] = {
            contract.PROFILE: (contract.ProfileRequest, self.profile),
            contract.PUBLIC_PROFILE: (contract.PublicProfileRequest, self.public_profile),
            contract.CARDS: (contract.CardsRequest, self.cards),
            contract.MISSIONS: (contract.MissionsRequest, self.missions),
            contract.LEADERBOARD: (contract.LeaderboardRequest, self.leaderboard),
            contract.FOLLOW: (contract.FollowRequest, self.follow),
            contract.UNFOLLOW: (contract.FollowRequest, self.unfollow),
            contract.FOLLOWING: (contract.FollowingRequest, self.following),
            contract.CREDIT: (contract.GameCreditRequest, self.game_credit),
            contract.BOOSTS: (contract.BoostsRequest, self.boosts),
            contract.PRESENCE: (contract.PresenceReport, self.presence),
            contract.FLAGS: (contract.FlagsRequest, self.flags),
            PAST_GAMES: (PastGamesRequest, self.past_games),
        }

    @property
    def subjects(self) -> tuple[str, ...]:
        return tuple(self._routes)

    async def answer(self, subject: str, body: bytes) -> tuple[bytes, str]:
        """The encoded reply and its outcome (`ok` or the error code, for the metrics)."""
        try:
            route = self._routes.get(subject)
            if route is None:
                raise ContractError(BAD_REQUEST, f"progression does not answer {subject}")
            if len(body) > contract.MAX_REQUEST_BYTES:
                raise ContractError(
                    BAD_REQUEST,
                    f"the request is {len(body)} bytes; at most {contract.MAX_REQUEST_BYTES}",
                )
            model, handler = route
            return encode(await handler(decode(model, body))), "ok"
        except ContractError as exc:
            return encode(error_reply(exc.code, exc.message)), exc.code
        except Exception as exc:
            reply = error_reply_for(exc, log)
            return encode(reply), reply.error.code

    # --- reads ---------------------------------------------------------------------------

    async def profile(self, request: contract.ProfileRequest) -> contract.Profile:
        now = self.clock()
        async with self.engine.begin() as conn:
            await reads.touch_player(conn, request.player_id, request.display_name, now)
            return await reads.profile(conn, request.player_id, now)

    async def public_profile(
        self, request: contract.PublicProfileRequest
    ) -> contract.PublicProfile:
        async with self.engine.connect() as conn:
            return await reads.public_profile(
                conn, request.player_id, request.target_id, self.clock()
            )

    async def cards(self, request: contract.CardsRequest) -> contract.CardsReply:
        async with self.engine.connect() as conn:
            return await reads.player_cards(conn, request.player_id)

    async def missions(self, request: contract.MissionsRequest) -> contract.MissionsReply:
        async with self.engine.connect() as conn:
            return await reads.missions(conn, request.player_id, self.clock())

    async def leaderboard(self, request: contract.LeaderboardRequest) -> contract.LeaderboardReply:
        async with self.engine.connect() as conn:
            return await reads.leaderboard(
                conn,
                request.player_id,
                request.scope,
                request.week,
                self.clock(),
                request.limit,
                cache=self.tops,
            )

    async def game_credit(self, request: contract.GameCreditRequest) -> contract.GameCreditReply:
        async with self.engine.connect() as conn:
            return await reads.game_credit(conn, request.player_id, request.table_id)

    async def flags(self, request: contract.FlagsRequest) -> contract.FlagsReply:
        async with self.engine.connect() as conn:
            return await reads.flags(conn, request.limit)

    # --- follows, presence, boosts ----------------------------------------------------

    async def follow(self, request: contract.FollowRequest) -> contract.FollowReply:
        async with self.engine.begin() as conn:
            return await social.follow(conn, request.player_id, request.target_id, self.clock())

    async def unfollow(self, request: contract.FollowRequest) -> contract.FollowReply:
        async with self.engine.begin() as conn:
            return await social.unfollow(conn, request.player_id, request.target_id)

    async def past_games(self, request: PastGamesRequest) -> PastGamesReply:
        async with self.engine.connect() as conn:
            return await past_games(conn, request.player_id, request.limit)

    async def following(self, request: contract.FollowingRequest) -> contract.FollowingReply:
        async with self.engine.connect() as conn:
            return await social.following(
                conn,
                request.player_id,
                self.clock(),
                presence_ttl=self.settings.presence_ttl_seconds,
                current_game_ttl=self.settings.current_game_ttl_seconds,
            )

    async def presence(self, request: contract.PresenceReport) -> contract.PresenceAck:
        async with self.engine.begin() as conn:
            await social.report_presence(
                conn, request.online, request.offline, request.names, self.clock()
            )
        return contract.PresenceAck()

    async def boosts(self, request: contract.BoostsRequest) -> contract.BoostsReply:
        async with self.engine.begin() as conn:
            if request.table_id is not None and request.players:
                await social.set_current_game(conn, request.players, request.table_id, self.clock())
            return contract.BoostsReply(boosts=await social.boosts(conn, request.players))
