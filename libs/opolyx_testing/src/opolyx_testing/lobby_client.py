"""Send lobby commands the way the gateway does (`opolyx.lobby.cmd`, gateway role).

    lobby = LobbyClient(await nats_server.connect("gateway"))
    room = await lobby.ok(type="create", player_id="p1", name="Ada", mode="classic", seats=6)
    await lobby.ok(type="join", player_id="p2", name="Bea", room_id=room["room"]["room_id"])
    await lobby.wait_free(["p1", "p2"], timeout=10)   # no room, no game: may play again

Requests are retried while no lobby instance answers (one restarting).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import LobbyCommand
from opolyx_contracts.subjects import LOBBY_CMD

__all__ = ["LobbyClient"]


class LobbyClient:
    def __init__(self, nc: Client, timeout: float = 10.0, retry_for: float = 20.0) -> None:
        self.nc = nc
        self.timeout = timeout
        self.retry_for = retry_for

    async def send(self, **fields: Any) -> dict[str, Any]:
        """One `LobbyCommand` (its fields as keywords); the decoded reply, ok or not."""
        body = encode(LobbyCommand.model_validate(fields))
        deadline = time.monotonic() + self.retry_for
        while True:
            try:
                msg = await self.nc.request(LOBBY_CMD, body, timeout=self.timeout)
            except (NoRespondersError, NatsTimeoutError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
                continue
            reply: dict[str, Any] = json.loads(msg.data)
            return reply

    async def ok(self, **fields: Any) -> dict[str, Any]:
        """Like `send`, failing the test when the lobby refuses."""
        reply = await self.send(**fields)
        if not reply.get("ok"):
            raise AssertionError(f"lobby refused {fields.get('type')}: {reply}")
        return reply

    async def wait_free(self, players: list[str], timeout: float) -> dict[str, dict[str, Any]]:
        """Wait until no player has a room or a game; returns each one's last `mine` reply
        (the caller asserts on them)."""
        deadline = time.monotonic() + timeout
        replies: dict[str, dict[str, Any]] = {}
        waiting = list(players)
        while waiting:
            for player in list(waiting):
                replies[player] = mine = await self.send(type="mine", player_id=player)
                if mine.get("ok") and mine.get("room") is None and mine.get("table_id") is None:
                    waiting.remove(player)
            if not waiting or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        return replies
