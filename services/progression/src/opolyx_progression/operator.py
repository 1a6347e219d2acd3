"""The operator endpoint: alt-farming flags with their evidence, behind a bearer token.

    GET /operator/flags?limit=100     Authorization: Bearer <OPOLYX_PROGRESSION__OPERATOR__TOKEN>

No token configured means every request is refused (503): an operator endpoint that is
open by default would publish who was flagged to anyone who finds the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from typing import Any

import uvicorn
from litestar import Litestar, Request, get
from litestar.exceptions import NotAuthorizedException, ServiceUnavailableException
from litestar.params import Parameter
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression import reads
from opolyx_progression.settings import OperatorSection

__all__ = ["OperatorServer", "create_operator_app"]


def create_operator_app(engine: AsyncEngine, settings: OperatorSection) -> Litestar:
    token = settings.token.get_secret_value() if settings.token else None

    def authorize(request: Request[Any, Any, Any]) -> None:
        if not token:
            raise ServiceUnavailableException("no operator token is configured")
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.encode(), token.encode()):
            raise NotAuthorizedException("a valid operator bearer token is required")

    @get("/operator/flags")
    async def list_flags(
        request: Request[Any, Any, Any], limit: int = Parameter(default=100, ge=1, le=500)
    ) -> dict[str, Any]:
        authorize(request)
        async with engine.connect() as conn:
            found = await reads.flags(conn, limit)
        return found.model_dump(mode="json")

    return Litestar(route_handlers=[list_flags], openapi_config=None)


class OperatorServer:
    """Runs the operator app on its own port (uvicorn, in this process's event loop)."""

    def __init__(self, engine: AsyncEngine, settings: OperatorSection) -> None:
        self.settings = settings
        config = uvicorn.Config(
            create_operator_app(engine, settings),
            host=settings.host,
            port=settings.port,
            log_config=None,
            access_log=False,
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        servers = getattr(self._server, "servers", [])
        for server in servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self.settings.port

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raise why it could not start
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5.0)
            self._task = None
