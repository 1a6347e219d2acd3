"""The operator endpoint: alt-farming flags with their evidence, behind a bearer token.

    GET /operator/flags?limit=100     Authorization: Bearer <OPOLYX_PROGRESSION__OPERATOR__TOKEN>

Served by the skeleton's `OperatorServer`; no token configured means every request is
refused (503): an endpoint open by default would publish who was flagged.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, get
from litestar.params import Parameter
from opolyx_service.operator import OperatorServer, OperatorSettings, require_bearer
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression import reads

__all__ = ["create_operator_app", "operator_server"]


def create_operator_app(engine: AsyncEngine, settings: OperatorSettings) -> Litestar:
    @get("/operator/flags")
    async def list_flags(
        request: Request[Any, Any, Any], limit: int = Parameter(default=100, ge=1, le=500)
    ) -> dict[str, Any]:
        require_bearer(request, settings.token)
        async with engine.connect() as conn:
            found = await reads.flags(conn, limit)
        return found.model_dump(mode="json")

    return Litestar(route_handlers=[list_flags], openapi_config=None)


def operator_server(engine: AsyncEngine, settings: OperatorSettings) -> OperatorServer:
    return OperatorServer(create_operator_app(engine, settings), settings)
