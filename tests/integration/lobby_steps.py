"""What the integration tests ask of the lobby and the table as a client does."""

from __future__ import annotations

import json
import uuid
from typing import Any

from nats.aio.client import Client
from opolyx_contracts.envelope import encode
from opolyx_contracts.game import parse_command
from opolyx_contracts.lobby import LobbyCommand
from opolyx_contracts.subjects import LOBBY_CMD, table_command
from opolyx_contracts.table import TableCommand


async def lobby(nc: Client, **body: Any) -> dict[str, Any]:
    """The lobby's reply to one command (`LobbyCommand` fields), whatever it says."""
    msg = await nc.request(LOBBY_CMD, encode(LobbyCommand.model_validate(body)), timeout=10)
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


async def lobby_ok(nc: Client, **body: Any) -> dict[str, Any]:
    """The lobby's reply to one command, which must have been carried out."""
    reply = await lobby(nc, **body)
    assert reply.get("ok"), reply
    return reply


async def resign(nc: Client, table_id: str, player_id: str) -> None:
    """The player leaves the game at once (resigning carries no version)."""
    command = TableCommand(
        command_id=uuid.uuid4().hex,
        player_id=player_id,
        command=parse_command({"type": "resign"}),
        expected_version=None,
    )
    answer = json.loads(
        (await nc.request(table_command(table_id), encode(command), timeout=10)).data
    )
    assert answer["ok"], answer
