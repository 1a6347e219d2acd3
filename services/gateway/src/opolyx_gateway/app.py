"""The Litestar application: REST (with OpenAPI), the websocket, and the web client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from litestar import Litestar, MediaType, Request, Response, get, post
from litestar.datastructures import CacheControlHeader, MutableScopeHeaders, State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.params import JSONBody, Parameter
from litestar.static_files import create_static_files_router
from litestar.types import Message, Scope
from nats.aio.client import Client as NatsClient
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue
from opolyx_contracts.errors import PLAYER_NOT_FOUND, RATE_LIMITED, UNAVAILABLE, ErrorBody
from opolyx_contracts.gateway import (
    AUTH_BAD_NAME,
    AUTH_REQUIRED,
    LobbyRequest,
    LobbyResult,
    PlayerPage,
)
from opolyx_service.connection import connect_nats, ensure_kv
from opolyx_service.health import (
    LIVENESS_PATH,
    METRICS_PATH,
    READINESS_PATH,
    Readiness,
    readiness_response,
)
from opolyx_service.logs import get_logger
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.runtime import ServiceRuntime
from opolyx_service.tasks import cancel_and_wait
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from pydantic import BaseModel, Field

from opolyx_gateway.admission import Admission
from opolyx_gateway.app_manifest import (
    FALLBACK_LANGUAGE,
    MANIFEST_PATH,
    app_manifest_route,
    app_manifests,
)
from opolyx_gateway.app_shell import service_worker, service_worker_route
from opolyx_gateway.auth import (
    AuthError,
    Identity,
    TokenSigner,
    new_guest_id,
    validate_display_name,
)
from opolyx_gateway.constants import board_and_modes, client_constants, constants_module
from opolyx_gateway.errors import GatewayError
from opolyx_gateway.hub import Hub
from opolyx_gateway.idempotency import RecentReplies
from opolyx_gateway.metrics import GatewayMetrics
from opolyx_gateway.presence import Presence
from opolyx_gateway.progression_routes import progression_router
from opolyx_gateway.replays import ROUTES as REPLAY_ROUTES
from opolyx_gateway.reply_fold import Holds
from opolyx_gateway.settings import GatewayOptions, GatewaySettings
from opolyx_gateway.upstream import Upstream
from opolyx_gateway.ws import ClientSession, TokenBucket, websocket_endpoint

__all__ = ["Gateway", "create_app"]

log = get_logger("opolyx.gateway")

PLAYERS_BUCKET = "gateway_players"
"""Display names of guests, so profiles can name any player who signed in."""
CONSTANTS_PATH = "/js/constants.js"

SECURITY_HEADERS = {
    # Scripts, styles and connections from this origin only: no inline script or style
    # (the page has none; the client sets styles through the CSSOM), no framing.
    "content-security-policy": "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    ),
    "x-frame-options": "DENY",  # frame-ancestors for browsers without CSP level 2
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
"""Sent with every HTTP response the gateway makes: pages, scripts, the API, errors."""


async def _add_security_headers(message: Message, scope: Scope) -> None:
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in SECURITY_HEADERS.items():
            headers[name] = value


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
    metrics: GatewayMetrics
    presence: Presence
    admission: Admission
    recent: RecentReplies
    sessions: set[ClientSession] = field(default_factory=set)
    holds: Holds = field(default_factory=Holds)
    """Sockets keeping a reply or an update back for the other half of its frame."""


class SignIn(BaseModel):
    name: str = Field(description="Display name: 2-20 letters, digits, spaces, . ' -")


class Session(BaseModel):
    token: str = Field(description="`Authorization: Bearer <token>`, and the websocket hello")
    player_id: str
    name: str
    expires_at: int = Field(description="Unix seconds")


def _gateway(state: State) -> Gateway:
    gw: Gateway | None = getattr(state, "gateway", None)
    if gw is None:
        raise GatewayError(UNAVAILABLE, "the gateway is still connecting to NATS; try again soon")
    return gw


def _identity(request: Request[Any, Any, Any]) -> Identity:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError(AUTH_REQUIRED, "send Authorization: Bearer <session token>")
    return _gateway(request.app.state).signer.verify(token.strip())


def _error_response(request: Request[Any, Any, Any], exc: Exception) -> Response[ErrorBody]:
    assert isinstance(exc, (AuthError, GatewayError))
    if isinstance(exc, AuthError):
        status = 400 if exc.code == AUTH_BAD_NAME else 401
    elif exc.code == UNAVAILABLE:
        status = 503
    elif exc.code == RATE_LIMITED:
        status = 429
    elif exc.code.endswith("not_found"):
        status = 404
    else:
        status = 400
    return Response(exc.to_body(), status_code=status)


@post("/api/session", tags=["auth"], summary="Sign in as a guest")
async def sign_in(data: JSONBody[SignIn], state: State, request: Request[Any, Any, Any]) -> Session:
    gw = _gateway(state)
    address = gw.admission.address_of(
        request.client.host if request.client else None, request.headers.get("x-forwarded-for")
    )
    if not gw.sign_in_limit.allow(address):
        raise GatewayError(RATE_LIMITED, "too many sign-ins; wait a minute")
    name = validate_display_name(data.name)
    player_id = new_guest_id()
    token, identity = gw.signer.issue(player_id, name)
    if gw.players is not None:
        try:
            await gw.players.put(player_id, name.encode())
        except Exception as exc:  # a profile without a name is not worth refusing sign-in
            log.warning("display_name_not_stored", error=repr(exc))
    return Session(token=token, player_id=player_id, name=name, expires_at=identity.expires_at)


@post(
    "/api/session/renew",
    tags=["auth"],
    summary="A fresh token for the same player (send it in a hello to keep the socket)",
    status_code=200,
)
async def renew_session(state: State, request: Request[Any, Any, Any]) -> Session:
    """A token that is still valid buys a new one with a full lifetime (never past the
    session's maximum, `max_session_seconds` from sign-in: then ``auth/session_ended``); an
    open socket adopts it with another ``hello`` (the web client does both before the old
    one expires, or the socket is closed at expiry with ``auth/expired_token``)."""
    identity = _identity(request)
    token, renewed = _gateway(state).signer.renew(identity)
    return Session(
        token=token, player_id=renewed.player_id, name=renewed.name, expires_at=renewed.expires_at
    )


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
) -> PlayerPage:
    identity = _identity(request)
    gw = _gateway(state)
    name: str | None = identity.name if player_id == identity.player_id else None
    if name is None and gw.players is not None:
        try:
            entry = await gw.players.get(player_id)
            name = entry.value.decode() if entry.value else None
        except KeyNotFoundError:
            name = None
    progression = await gw.upstream.public_profile(identity.player_id, player_id)
    if name is None and progression is None:
        raise GatewayError(PLAYER_NOT_FOUND, f"no player {player_id} is known")
    return PlayerPage(player_id=player_id, name=name, progression=progression)


@get("/api/board", tags=["game"], summary="The board and the modes (names, prices, rents)")
async def board_data() -> dict[str, Any]:
    return board_and_modes()


@get(
    CONSTANTS_PATH,
    media_type="text/javascript; charset=utf-8",
    include_in_schema=False,
    cache_control=CacheControlHeader(no_cache=True),
)
async def client_constants_module(state: State) -> str:
    """The web client's constants (modes, kinds, reasons, codes, board) as an ES module."""
    module: str = state.constants_module
    return module


@get(LIVENESS_PATH, tags=["health"], summary="Liveness: the process serves requests")
async def live() -> dict[str, str]:
    return {"status": "alive"}


@get(READINESS_PATH, tags=["health"], summary="Readiness: started, NATS connected, not draining")
async def ready(state: State) -> Response[bytes]:
    status, body = await readiness_response(state.readiness)
    return Response(body, status_code=status, media_type=MediaType.JSON)


@get(METRICS_PATH, include_in_schema=False)
async def metrics(state: State) -> Response[bytes]:
    return Response(generate_latest(state.registry), media_type=CONTENT_TYPE_LATEST)


def create_app(settings: GatewaySettings, runtime: ServiceRuntime | None = None) -> Litestar:
    """The gateway as an ASGI app. It serves at once; NATS is reached in the background
    (with backoff) and readiness says when it is: until then requests that need it get
    `service/unavailable`. `runtime` (the service skeleton's) lends its metrics registry
    and readiness; without one (tests) the app keeps its own."""
    options = settings.gateway
    registry = runtime.registry if runtime is not None else CollectorRegistry()
    service_metrics = (
        runtime.metrics
        if runtime is not None
        else ServiceMetrics(registry, settings.service_name, settings.resolved_instance_id())
    )
    readiness = runtime.readiness if runtime is not None else Readiness()
    metrics_ = GatewayMetrics(registry, service_metrics)

    async def connect(app: Litestar) -> Gateway:
        nc = await connect_nats(
            settings.nats,
            f"{settings.service_name}-{settings.resolved_instance_id()}",
            on_attempt=lambda ok: service_metrics.connect_attempts.labels(
                "connected" if ok else "failed"
            ).inc(),
        )
        players: KeyValue | None
        try:
            players = await ensure_kv(
                nc.jetstream(), PLAYERS_BUCKET, replicas=settings.jetstream.replicas
            )
        except Exception as exc:
            log.warning("player_names_bucket_missing", error=repr(exc))
            players = None
        upstream = Upstream(
            nc,
            settings.nats.request_timeout,
            tracing=settings.telemetry.traces != "none",
            on_retry=metrics_.table_retries.inc,
            recent_commands=options.recent_commands,
        )
        hub = Hub(
            nc,
            upstream,
            options.replay_limit,
            options.max_spectators_per_table,
            on_replay_read=metrics_.replay_reads.inc,
        )
        await hub.start()
        assert options.active_key_id is not None
        signer = TokenSigner(
            options.signing_keys,
            options.active_key_id,
            options.token_ttl_seconds,
            options.max_session_seconds,
        )
        gw = Gateway(
            options,
            signer,
            nc,
            upstream,
            hub,
            players,
            AddressLimit(options.sign_ins_per_minute),
            metrics_,
            Presence(upstream),
            Admission(
                options.max_sockets_per_address,
                options.flood_cooldown_seconds,
                options.trusted_proxies,
            ),
            RecentReplies(options.recent_replies_seconds, options.recent_replies),
        )
        gw.presence.start()
        metrics_.watch(gw.sessions, hub.feeds)
        app.state.gateway = gw
        log.info("gateway_connected")
        return gw

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        connecting = asyncio.create_task(connect(app))
        # The process's `serve` watches this: refused credentials end the process (exit 1)
        # instead of leaving a gateway that is never ready.
        app.state.connecting = connecting
        readiness.add_check(
            "nats",
            lambda: (
                connecting.done()
                and not connecting.cancelled()
                and connecting.exception() is None
                and connecting.result().nc.is_connected
            ),
        )
        try:
            yield
        finally:
            if connecting.done():
                with contextlib.suppress(BaseException):  # refused credentials: logged already
                    connecting.result()
            else:
                # Not `cancel(); await`: a connect attempt inside nats-py can swallow one
                # cancellation (tasks.py), and the retry loop then outlived the signal.
                await cancel_and_wait(connecting, settings.shutdown_grace)
            gw: Gateway | None = getattr(app.state, "gateway", None)
            if gw is not None:
                for session in list(gw.sessions):
                    session.close(1001, "server shutting down")
                try:
                    await gw.presence.stop()
                    await gw.hub.stop()
                    await gw.nc.drain()
                except Exception as exc:  # NATS already gone: nothing left to flush
                    log.warning("nats_closed_without_draining", error=repr(exc))
                    await gw.nc.close()

    constants = constants_module(client_constants())
    manifests = app_manifests(options.static_dir)
    return Litestar(
        route_handlers=[
            sign_in,
            renew_session,
            whoami,
            list_rooms,
            player_profile,
            progression_router,
            board_data,
            client_constants_module,
            app_manifest_route,
            service_worker_route,
            live,
            ready,
            metrics,
            websocket_endpoint,
            *REPLAY_ROUTES,
            create_static_files_router(
                path="/",
                directories=[options.static_dir],
                html_mode=True,
                include_in_schema=False,
            ),
        ],
        lifespan=[lifespan],
        state=State(
            {
                "constants_module": constants,
                "app_manifests": manifests,
                "service_worker": service_worker(
                    options.static_dir,
                    {CONSTANTS_PATH: constants, MANIFEST_PATH: manifests[FALLBACK_LANGUAGE]},
                ),
                "readiness": readiness,
                "registry": registry,
            }
        ),
        exception_handlers={AuthError: _error_response, GatewayError: _error_response},
        # The document only: the interactive viewers load scripts from a CDN and inline,
        # which the content security policy refuses.
        openapi_config=OpenAPIConfig(
            title="opolyx gateway",
            version="0.1.0",
            path="/schema",
            render_plugins=[JsonRenderPlugin()],
        ),
        before_send=[_add_security_headers],
        debug=False,
        logging_config=None,  # the shared structlog setup (opolyx_service.logs) stays in charge
    )
