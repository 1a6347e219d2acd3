"""Everything the gateway knows about the other services' wire formats, in one place.

Table: ``opolyx_contracts.table`` (commands, views, events). Lobby: request-reply on
``opolyx.lobby.cmd`` with ``{"v", "type": <action>, "player_id", "name", ...}`` answered by
``{"v", "ok": true, ...}`` or an error reply. Chat and progression: request-reply, optional.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import nats.errors
from nats.aio.client import Client as NatsClient
from opentelemetry import trace
from opolyx_contracts import subjects
from opolyx_contracts.envelope import CONTRACT_VERSION
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import LobbyRequest
from opolyx_contracts.lobby import LobbyCommand
from opolyx_contracts.table import TableCommand, TableEvents, TableView, ViewRequest
from opolyx_service.telemetry import inject_headers
from pydantic import ValidationError

from opolyx_gateway.errors import GatewayError

__all__ = [
    "Upstream",
    "parse_table_events",
]


_tracer = trace.get_tracer("opolyx.gateway")


def parse_table_events(data: bytes) -> TableEvents | None:
    """The events of one command as stored, or None for a message this gateway cannot read."""
    try:
        return TableEvents.model_validate_json(data)
    except ValidationError:
        return None


def _reply_dict(data: bytes, what: str) -> dict[str, Any]:
    try:
        reply = json.loads(data)
    except ValueError:
        raise GatewayError("upstream/bad_reply", f"the {what} sent an unreadable reply") from None
    if not isinstance(reply, dict):
        raise GatewayError("upstream/bad_reply", f"the {what} sent an unreadable reply")
    if reply.get("ok") is False:
        error = reply.get("error") or {}
        raise GatewayError(
            str(error.get("code", "upstream/error")),
            str(error.get("message", f"the {what} refused the request")),
        )
    return reply


class Upstream:
    """Request-reply to the lobby, the tables, chat and progression over one NATS connection."""

    def __init__(self, nc: NatsClient, timeout: float) -> None:
        self.nc = nc
        self.timeout = timeout

    async def _request(self, subject: str, body: dict[str, Any], what: str) -> dict[str, Any]:
        with _tracer.start_as_current_span(f"gateway -> {what}") as span:
            span.set_attribute("messaging.destination.name", subject)
            return await self._send(subject, body, what)

    async def _send(self, subject: str, body: dict[str, Any], what: str) -> dict[str, Any]:
        try:
            msg = await self.nc.request(
                subject, json.dumps(body).encode(), timeout=self.timeout, headers=inject_headers()
            )
        except nats.errors.NoRespondersError:
            raise GatewayError(UNAVAILABLE, f"the {what} is not running; try again soon") from None
        except nats.errors.TimeoutError:
            raise GatewayError(UNAVAILABLE, f"the {what} did not answer in time") from None
        return _reply_dict(msg.data, what)

    async def lobby(self, request: LobbyRequest, player_id: str, name: str) -> dict[str, Any]:
        """A lobby command as the token's player (``opolyx_contracts.lobby.LobbyCommand``)."""
        bot = request.action in ("add_bot", "remove_bot")
        command = LobbyCommand(
            type=request.action,
            player_id=player_id,
            name=name,
            room_id=request.room,
            mode=request.mode,
            seats=request.seats,
            public=not request.private,
            invite_code=request.invite,
            bot_id=request.target if bot else None,
            target=None if bot else request.target,
        )
        reply = await self._request(
            subjects.LOBBY_CMD, command.model_dump(mode="json", exclude_none=True), "lobby"
        )
        return {k: v for k, v in reply.items() if k not in ("v", "ok")}

    async def table_command(
        self,
        table_id: str,
        player_id: str,
        command: dict[str, Any],
        expected_version: int | None,
    ) -> dict[str, Any]:
        body = TableCommand(
            command_id=uuid.uuid4().hex,
            player_id=player_id,
            command=command,
            expected_version=expected_version,
        )
        reply = await self._request(
            subjects.table_command(table_id), body.model_dump(mode="json"), "table"
        )
        return {k: reply[k] for k in ("seq", "version", "events") if k in reply}

    async def table_view(self, table_id: str, seat: int | None) -> TableView:
        reply = await self._request(
            subjects.table_view(table_id),
            ViewRequest(seat=seat).model_dump(mode="json"),
            "table",
        )
        try:
            return TableView.model_validate(reply)
        except ValidationError:
            raise GatewayError("upstream/bad_reply", "the table sent an unreadable view") from None

    async def chat_post(self, room: str, player_id: str, name: str, text: str) -> dict[str, Any]:
        body = {"v": CONTRACT_VERSION, "player_id": player_id, "name": name, "text": text}
        reply = await self._request(subjects.chat_post(room), body, "chat service")
        return {k: v for k, v in reply.items() if k not in ("v", "ok")}

    async def profile(self, player_id: str) -> dict[str, Any] | None:
        """The progression service's profile of a player, or None when it does not run."""
        try:
            reply = await self._request(
                subjects.progression("profile"),
                {"v": CONTRACT_VERSION, "player_id": player_id},
                "progression service",
            )
        except GatewayError as exc:
            if exc.code == UNAVAILABLE:
                return None
            raise
        return {k: v for k, v in reply.items() if k not in ("v", "ok")}
