"""The operator endpoint: reported messages with their context, behind a bearer token.

    GET /operator/reports?limit=100     Authorization: Bearer <OPOLYX_CHAT__OPERATOR__TOKEN>

Served by the skeleton's `OperatorServer`; no token configured means every request is
refused (503): reports name players and quote what they said.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, get
from litestar.params import Parameter
from opolyx_contracts.chat import ChatReports
from opolyx_service.operator import OperatorServer, OperatorSettings, require_bearer

from opolyx_chat.store import ChatStore

__all__ = ["create_operator_app", "operator_server"]


def create_operator_app(store: ChatStore, settings: OperatorSettings) -> Litestar:
    @get("/operator/reports")
    async def list_reports(
        request: Request[Any, Any, Any], limit: int = Parameter(default=100, ge=1, le=500)
    ) -> dict[str, Any]:
        require_bearer(request, settings.token)
        return ChatReports(reports=await store.list_reports(limit)).model_dump(mode="json")

    return Litestar(route_handlers=[list_reports], openapi_config=None)


def operator_server(store: ChatStore, settings: OperatorSettings) -> OperatorServer:
    return OperatorServer(create_operator_app(store, settings), settings)
