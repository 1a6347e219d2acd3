"""What the integration tests ask of the lobby and the table as a client does."""

from __future__ import annotations

import json
import uuid
from typing import Any

from nats.aio.client import Client
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import LobbyCommand
from opolyx_contracts.subjects import LOBBY_CMD
from opolyx_testing.table_client import TableClient


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
    """The player leaves the game at once (resigning carries no version). Asked as a client
    must (`TableClient`): again, with the same command id, while no instance serves the
    table's partition. Right after a start the two instances of a takeover test may still
    be sharing partitions out, and a bare request once met "no responders"."""
    answer = await TableClient(nc, timeout=10).command(
        table_id, player_id, {"type": "resign"}, command_id=uuid.uuid4().hex
    )
    assert answer["ok"], answer
