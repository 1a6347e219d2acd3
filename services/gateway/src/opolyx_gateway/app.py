"""The Litestar application: REST (with OpenAPI), the websocket, and the web client."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from litestar import Litestar, MediaType, Request, Response, get, post
from litestar.datastructures import CacheControlHeader, State
from litestar.openapi import OpenAPIConfig
from litestar.params import JSONBody, Parameter
from litestar.static_files import create_static_files_router
from litestar.status_codes import HTTP_503_SERVICE_UNAVAILABLE
from nats.aio.client import Client as NatsClient
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue
from opolyx_contracts.gateway import LobbyRequest, LobbyResult
from opolyx_service.connection import connect_nats, ensure_kv
from pydantic import BaseModel, Field

from opolyx_gateway.auth import (
    AUTH_BAD_NAME,
    AUTH_REQUIRED,
    AuthError,
    Identity,
    TokenSigner,
    new_guest_id,
    validate_display_name,
)
from opolyx_gateway.constants import board_and_modes, client_constants, constants_module
from opolyx_gateway.errors import GatewayError
from opolyx_gateway.hub import Hub
from opolyx_gateway.settings import GatewayOptions, GatewaySettings
from opolyx_gateway.upstream import Upstream
from opolyx_gateway.ws import ClientSession, TokenBucket, websocket_endpoint

__all__ = ["Gateway", "create_app"]

log = logging.getLogger("opolyx.gateway")

PLAYERS_BUCKET = "gateway_players"
"""Display names of guests, so profiles can name any player who signed in."""


@dataclass
class Metrics:
    """Per-message-type counts and latency sums, exported in Prometheus text format."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def observe(self, kind: str, seconds: float) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    def render(self, sessions: int, feeds: int) -> str:
        lines = [
            "# TYPE opolyx_gateway_sessions gauge",
            f"opolyx_gateway_sessions {sessions}",
            "# TYPE opolyx_gateway_table_feeds gauge",
            f"opolyx_gateway_table_feeds {feeds}",
            "# TYPE opolyx_gateway_messages_total counter",
        ]
        lines += [
            f'opolyx_gateway_messages_total{{type="{k}"}} {v}' for k, v in self.counts.items()
        ]
        lines.append("# TYPE opolyx_gateway_message_seconds_total counter")
        lines += [
            f'opolyx_gateway_message_seconds_total{{type="{k}"}} {v:.6f}'
            for k, v in self.seconds.items()
        ]
        return "\n".join(lines) + "\n"


class AddressLimit:
    """A token bucket per client address (a bounded number of addresses is remembered)."""

    def __init__(self, per_minute: int, remembered: int = 10_000) -> None:
        self.per_minute = per_minute
        self.remembered = remembered
        self.buckets: dict[str, TokenBucket] = {}

    def allow(self, address: str) -> bool:
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) >= self.remembered:
                self.buckets.clear()
            bucket = self.buckets[address] = TokenBucket(self.per_minute / 60, self.per_minute)
        return bucket.take()


@dataclass
class Gateway:
    """What the handlers share, built in the app's lifespan."""

    options: GatewayOptions
    signer: TokenSigner
    nc: NatsClient
    upstream: Upstream
    hub: Hub
    players: KeyValue | None
    sign_in_limit: AddressLimit
    sessions: set[ClientSession] = field(default_factory=set)
    metrics: Metrics = field(default_factory=Metrics)


class SignIn(BaseModel):
    name: str = Field(description="Display name: 2-20 letters, digits, spaces, . ' -")


class Session(BaseModel):
    token: str = Field(description="`Authorization: Bearer <token>`, and the websocket hello")
    player_id: str
    name: str
    expires_at: int = Field(description="Unix seconds")


def _gateway(state: State) -> Gateway:
    gw: Gateway = state.gateway
    return gw


def _identity(request: Request[Any, Any, Any]) -> Identity:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError(AUTH_REQUIRED, "send Authorization: Bearer <session token>")
    return _gateway(request.app.state).signer.verify(token.strip())


def _error_response(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, str]]:
    assert isinstance(exc, (AuthError, GatewayError))
    if isinstance(exc, AuthError):
        status = 400 if exc.code == AUTH_BAD_NAME else 401
    elif exc.code == "service/unavailable":
        status = 503
    elif exc.code == "request/rate_limited":
        status = 429
    elif exc.code.endswith("not_found"):
        status = 404
    else:
        status = 400
    return Response({"code": exc.code, "message": exc.message}, status_code=status)


@post("/api/session", tags=["auth"], summary="Sign in as a guest")
async def sign_in(data: JSONBody[SignIn], state: State, request: Request[Any, Any, Any]) -> Session:
    gw = _gateway(state)
    address = request.client.host if request.client else "unknown"
    if not gw.sign_in_limit.allow(address):
        raise GatewayError("request/rate_limited", "too many sign-ins; wait a minute")
    name = validate_display_name(data.name)
    player_id = new_guest_id()
    token, identity = gw.signer.issue(player_id, name)
    if gw.players is not None:
        try:
            await gw.players.put(player_id, name.encode())
        except Exception as exc:  # a profile without a name is not worth refusing sign-in
            log.warning("could not store the display name: %s", exc)
    return Session(token=token, player_id=player_id, name=name, expires_at=identity.expires_at)


@get("/api/session", tags=["auth"], summary="Who the token says I am")
async def whoami(request: Request[Any, Any, Any]) -> dict[str, Any]:
    identity = _identity(request)
    return {
        "player_id": identity.player_id,
        "name": identity.name,
        "expires_at": identity.expires_at,
    }


@get("/api/rooms", tags=["lobby"], summary="Open rooms")
async def list_rooms(request: Request[Any, Any, Any], state: State) -> LobbyResult:
    identity = _identity(request)
    listing = LobbyRequest(id=0, type="lobby", action="list")
    return await _gateway(state).upstream.lobby(listing, identity.player_id, identity.name)


@get("/api/players/{player_id:str}", tags=["players"], summary="A player's profile")
async def player_profile(
    request: Request[Any, Any, Any],
    state: State,
    player_id: Annotated[str, Parameter(pattern=r"^[A-Za-z0-9_-]{1,128}$")],
) -> dict[str, Any]:
    identity = _identity(request)
    gw = _gateway(state)
    name: str | None = identity.name if player_id == identity.player_id else None
    if name is None and gw.players is not None:
        try:
            entry = await gw.players.get(player_id)
            name = entry.value.decode() if entry.value else None
        except KeyNotFoundError:
            name = None
    progression = await gw.upstream.profile(player_id)
    if name is None and progression is None:
        raise GatewayError("player/not_found", f"no player {player_id} is known")
    return {"player_id": player_id, "name": name, "progression": progression}


@get("/api/board", tags=["game"], summary="The board and the modes (names, prices, rents)")
async def board_data() -> dict[str, Any]:
    return board_and_modes()


@get(
    "/js/constants.js",
    media_type="text/javascript; charset=utf-8",
    include_in_schema=False,
    cache_control=CacheControlHeader(no_cache=True),
)
async def client_constants_module(state: State) -> str:
    """The web client's constants (modes, kinds, reasons, codes, board) as an ES module."""
    module: str = state.constants_module
    return module


@get(["/health/live", "/livez"], tags=["health"], summary="Liveness")
async def live() -> dict[str, str]:
    return {"status": "ok"}


@get(["/health/ready", "/readyz"], tags=["health"], summary="Readiness: NATS connected")
async def ready(state: State) -> Response[dict[str, str]]:
    gw: Gateway | None = getattr(state, "gateway", None)
    if gw is None or not gw.nc.is_connected:
        return Response(
            {"status": "not ready", "reason": "NATS not connected"},
            status_code=HTTP_503_SERVICE_UNAVAILABLE,
        )
    return Response({"status": "ready"})


@get("/metrics", media_type=MediaType.TEXT, include_in_schema=False)
async def metrics(state: State) -> str:
    gw = _gateway(state)
    return gw.metrics.render(len(gw.sessions), len(gw.hub.feeds))


def create_app(settings: GatewaySettings) -> Litestar:
    """The gateway as an ASGI app; NATS is connected in its lifespan."""
    options = settings.gateway

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        try:
            nc = await asyncio.wait_for(
                connect_nats(settings.nats, settings.service_name), options.startup_timeout
            )
        except TimeoutError:
            raise RuntimeError(
                f"NATS at {settings.nats.url} did not answer within {options.startup_timeout} s"
            ) from None
        players: KeyValue | None
        try:
            players = await ensure_kv(nc.jetstream(), PLAYERS_BUCKET)
        except Exception as exc:
            log.warning("no JetStream key-value for player names: %s", exc)
            players = None
        upstream = Upstream(
            nc, settings.nats.request_timeout, tracing=settings.telemetry.traces != "none"
        )
        hub = Hub(nc, upstream, options.replay_limit)
        await hub.start()
        assert options.active_key_id is not None
        signer = TokenSigner(options.signing_keys, options.active_key_id, options.token_ttl_seconds)
        app.state.gateway = Gateway(
            options, signer, nc, upstream, hub, players, AddressLimit(options.sign_ins_per_minute)
        )
        app.state.started = time.time()
        try:
            yield
        finally:
            for session in list(app.state.gateway.sessions):
                session.close(1001, "server shutting down")
            try:
                await hub.stop()
                await nc.drain()
            except Exception as exc:  # NATS already gone: nothing left to flush
                log.warning("NATS connection closed without draining: %s", exc)
                await nc.close()

    return Litestar(
        route_handlers=[
            sign_in,
            whoami,
            list_rooms,
            player_profile,
            board_data,
            client_constants_module,
            live,
            ready,
            metrics,
            websocket_endpoint,
            create_static_files_router(
                path="/",
                directories=[options.static_dir],
                html_mode=True,
                include_in_schema=False,
            ),
        ],
        lifespan=[lifespan],
        state=State({"constants_module": constants_module(client_constants())}),
        exception_handlers={AuthError: _error_response, GatewayError: _error_response},
        openapi_config=OpenAPIConfig(title="opolyx gateway", version="0.1.0", path="/schema"),
        debug=False,
        logging_config=None,  # the shared structlog setup (opolyx_service.logs) stays in charge
    )
