"""The operator endpoint: reported messages with their context, behind a bearer token.

    GET /operator/reports?limit=100     Authorization: Bearer <OPOLYX_CHAT__OPERATOR__TOKEN>

No token configured means every request is refused (503): reports name players and quote
what they said, so the endpoint is never open by default.
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
from opolyx_contracts.chat import ChatReports

from opolyx_chat.settings import OperatorSection
from opolyx_chat.store import ChatStore

__all__ = ["OperatorServer", "create_operator_app"]


def create_operator_app(store: ChatStore, settings: OperatorSection) -> Litestar:
    token = settings.token.get_secret_value() if settings.token else None

    def authorize(request: Request[Any, Any, Any]) -> None:
        if not token:
            raise ServiceUnavailableException("no operator token is configured")
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.encode(), token.encode()):
            raise NotAuthorizedException("a valid operator bearer token is required")

    @get("/operator/reports")
    async def list_reports(
        request: Request[Any, Any, Any], limit: int = Parameter(default=100, ge=1, le=500)
    ) -> dict[str, Any]:
        authorize(request)
        return ChatReports(reports=await store.list_reports(limit)).model_dump(mode="json")

    return Litestar(route_handlers=[list_reports], openapi_config=None)


class OperatorServer:
    """Runs the operator app on its own port (uvicorn, in this process's event loop)."""

    def __init__(self, store: ChatStore, settings: OperatorSection) -> None:
        self.settings = settings
        config = uvicorn.Config(
            create_operator_app(store, settings),
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
        for server in getattr(self._server, "servers", []):
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
