"""Games ending (the GAMES stream): free the players and close the room, but only for the
game the room started.

A ``game.finished`` or ``game.seat_out`` that does not name the room's own table and seats
is ignored with a log line and ``lobby_games_messages_ignored_total{reason}``: a forged one
must not free the players of a running game (NATS permissions keep other senders off the
stream in the first place; this is the lobby's own check).
"""

from __future__ import annotations

from opolyx_contracts.errors import ContractError
from opolyx_contracts.subjects import GAME_FINISHED, GAME_SEAT_OUT
from opolyx_contracts.table import GameFinished, SeatOut
from opolyx_service.logs import get_logger
from opolyx_service.metrics import counter
from prometheus_client import CollectorRegistry

from opolyx_lobby.events import RoomEvents
from opolyx_lobby.rooms import Room
from opolyx_lobby.store import LobbyStore

__all__ = ["GameEnds"]

log = get_logger("opolyx.lobby")


class GameEnds:
    def __init__(self, store: LobbyStore, events: RoomEvents, registry: CollectorRegistry) -> None:
        self.store = store
        self.events = events
        self.ignored = counter(
            registry,
            "opolyx_lobby_games_messages_ignored",
            "GAMES messages the lobby ignored because they do not match the game it started",
            ("reason",),
        )

    async def on_game_finished(self, event: GameFinished) -> None:
        """Free the game's humans and close its room, if it is the game the room started."""
        found = await self.store.get_room(event.room_id) if event.room_id else None
        if found is None:
            await self._free_orphans(event)
            return
        room = found[0]
        reason = _mismatch(room, event)
        if reason is not None:
            self.ignored.labels(reason).inc()
            log.warning(
                "game_finished_ignored_mismatch",
                reason=reason,
                table_id=event.table_id,
                room_id=room.room_id,
                room_table_id=room.table_id,
            )
            return
        for member in room.humans:
            await self.store.release(member.player_id, room_id=room.room_id)
        closed = await self.store.delete_room(room.room_id)
        if closed is not None:
            await self.events.publish("room_closed", room.room_id, after=None, before=closed)
        log.info("game_finished_players_freed", table_id=event.table_id)

    async def _free_orphans(self, event: GameFinished) -> None:
        """The room is gone (a redelivery, or a finished game whose room closed before):
        free only slots that still point at this table and whose room no longer exists."""
        for seat in event.seats:
            found = None if seat.bot else await self.store.get_claim(seat.player_id)
            if found is None or found[0].table_id != event.table_id:
                continue
            if await self.store.get_room(found[0].room_id) is None:
                await self.store.release(seat.player_id, table_id=event.table_id)

    async def on_seat_out(self, event: SeatOut) -> None:
        """Free a player whose seat went out, if the room's game seats them there.

        Only a slot that points at this very table is freed; while the room exists, its
        table and that seat must match too (NATS permissions keep other senders off)."""
        found = await self.store.get_room(event.room_id) if event.room_id else None
        if found is not None:
            room = found[0]
            seat = room.members[event.seat] if 0 <= event.seat < len(room.members) else None
            if (
                room.table_id != event.table_id
                or seat is None
                or seat.player_id != (event.player_id)
            ):
                self.ignored.labels("seat_mismatch").inc()
                log.warning(
                    "seat_out_ignored_mismatch",
                    table_id=event.table_id,
                    room_id=room.room_id,
                    player_id=event.player_id,
                )
                return
            await self.store.release(event.player_id, room_id=room.room_id)
            return
        await self.store.release(event.player_id, table_id=event.table_id)

    async def on_message(self, subject: str, data: bytes) -> None:
        try:
            if subject == GAME_FINISHED:
                await self.on_game_finished(GameFinished.model_validate_json(data))
            elif subject == GAME_SEAT_OUT:
                await self.on_seat_out(SeatOut.model_validate_json(data))
        except (ValueError, ContractError) as exc:  # pydantic's ValidationError is a ValueError
            self.ignored.labels("unreadable").inc()
            log.error("games_message_unreadable", subject=subject, error=str(exc)[:500])


def _mismatch(room: Room, event: GameFinished) -> str | None:
    """Why ``event`` is not the end of the game ``room`` started, or None when it is."""
    if room.status != "started" or room.table_id != event.table_id:
        return "table_mismatch"
    # Who sat at the table, not in which order (the room's order is the seat order today,
    # but freeing players must not hang on it).
    seats = sorted((s.player_id, s.bot) for s in event.seats)
    if seats != sorted((m.player_id, m.bot) for m in room.members):
        return "seats_mismatch"
    return None
