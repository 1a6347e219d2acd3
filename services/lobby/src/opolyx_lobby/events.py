"""Publishing lobby events: public rooms to everyone, every room to its members.

See `opolyx_contracts.lobby` for why private rooms' events travel on per-member subjects
only: the broadcast subject never carries them, so no gateway can leak them.
"""

from __future__ import annotations

from nats.aio.client import Client
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import LobbyEvent, LobbyEventType, lobby_member_events
from opolyx_contracts.subjects import LOBBY_EVENTS
from opolyx_service.telemetry import inject_headers

from opolyx_lobby.rooms import Room

__all__ = ["RoomEvents"]


class RoomEvents:
    def __init__(self, nc: Client) -> None:
        self.nc = nc

    async def publish(
        self,
        kind: LobbyEventType,
        room_id: str,
        *,
        after: Room | None,
        before: Room | None = None,
        table_id: str | None = None,
    ) -> None:
        """Announce a change of a room; ``before`` names who was in it (a kicked or leaving
        player is told too), ``after`` None means the room closed."""
        event = LobbyEvent(
            type=kind,
            room_id=room_id,
            room=after.detail() if after is not None else None,
            table_id=table_id,
        )
        body = encode(event)
        headers = inject_headers()
        shown = after if after is not None else before
        if shown is not None and shown.public:
            await self.nc.publish(LOBBY_EVENTS, body, headers=headers)
        audience: dict[str, None] = {}
        for room in (before, after):
            if room is not None:
                audience.update((m.player_id, None) for m in room.humans)
        for player_id in audience:
            await self.nc.publish(lobby_member_events(player_id), body, headers=headers)
