"""An operator's HTTP endpoint beside a service: its own port, behind a bearer token.

Chat (reported messages) and progression (alt-farming flags) each show operators what
players must not see. The shape is shared: a Litestar app on a port of its own (never the
public gateway), served by uvicorn in the service's event loop, and every route calling
`require_bearer` first. No token configured means every request is refused (503): what these
endpoints show names players, so none is open by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from typing import Any

import uvicorn
from litestar import Litestar, Request
from litestar.exceptions import NotAuthorizedException, ServiceUnavailableException
from pydantic import BaseModel, SecretStr

__all__ = ["OperatorServer", "OperatorSettings", "require_bearer"]


class OperatorSettings(BaseModel):
    token: SecretStr | None = None
    """Bearer token of the operator endpoint (from a Secret); unset: the endpoint refuses all."""
    host: str = "127.0.0.1"
    """Interface of the operator HTTP endpoint (0.0.0.0 in a container)."""
    port: int = 0
    """Port of the operator endpoint; 0 picks a free one, -1 disables."""


def require_bearer(request: Request[Any, Any, Any], token: SecretStr | None) -> None:
    """Refuse the request unless it carries `Authorization: Bearer <token>` (compared in
    constant time)."""
    expected = token.get_secret_value() if token else ""
    if not expected:
        raise ServiceUnavailableException("no operator token is configured")
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.encode(), expected.encode()):
        raise NotAuthorizedException("a valid operator bearer token is required")


class OperatorServer:
    """Runs an operator app on its own port (uvicorn, in this process's event loop)."""

    def __init__(self, app: Litestar, settings: OperatorSettings) -> None:
        self.settings = settings
        config = uvicorn.Config(
            app,
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
