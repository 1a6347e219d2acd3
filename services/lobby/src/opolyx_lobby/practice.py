"""Practice rooms: "play from here" in a replay (issue 16).

A practice room is private (no invite code: nobody can join it), seats the player at the
seat they chose and roster bots at every other seat, and starts at once; its table
continues a step of a finished game (`Room.fork`, passed on as `CreateTable.fork`: the
table rebuilds that position from the stored game and refuses a game that does not
match). Its game is a practice game: progression pays no XP for it.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from opolyx_contracts.lobby import LOBBY_BAD_REQUEST, LobbyCommand, LobbyReply
from opolyx_contracts.replay import ForkSource
from opolyx_service.logs import get_logger

from opolyx_lobby import rooms
from opolyx_lobby.errors import LobbyError
from opolyx_lobby.rooms import Room
from opolyx_lobby.store import Claim

if TYPE_CHECKING:
    from opolyx_lobby.service import Lobby

__all__ = ["start_practice"]

log = get_logger("opolyx.lobby.practice")


async def start_practice(lobby: Lobby, cmd: LobbyCommand) -> LobbyReply:
    if cmd.table_id is None or cmd.step is None or cmd.mode is None or cmd.seats is None:
        raise LobbyError(LOBBY_BAD_REQUEST, "practice needs table_id, step, mode and seats")
    rooms.validate_mode_and_seats(cmd.mode, cmd.seats)
    seat = cmd.seat or 0
    if seat >= cmd.seats:
        raise LobbyError(LOBBY_BAD_REQUEST, f"a {cmd.seats}-seat game has no seat {seat}")
    try:
        fork = ForkSource(table_id=cmd.table_id, step=cmd.step)
    except ValueError:
        raise LobbyError(LOBBY_BAD_REQUEST, "not a table id") from None
    player = lobby._member(cmd)
    now = lobby.clock()
    room = Room(
        room_id=f"r-{secrets.token_hex(6)}",
        mode=cmd.mode,
        seat_count=cmd.seats,
        public=False,
        creator=player.player_id,
        members=(player,),
        created_at=now,
        waiting_since=now,
        fork=fork,
    )
    # Bots at every other seat, the player at theirs (the table seats members in order).
    members = []
    for index in range(cmd.seats):
        members.append(player if index == seat else lobby._pick_bot(room, None))
        room = room.model_copy(update={"members": tuple(members)})
    await lobby.store.claim(
        Claim(player_id=player.player_id, room_id=room.room_id, since=now),
        lobby._claim_is_stale,
    )
    try:
        await lobby.store.insert_room(room)
    except BaseException:
        await lobby.store.release(player.player_id, room_id=room.room_id)
        raise
    log.info("practice_room_created", room_id=room.room_id, source=fork.table_id, step=fork.step)
    started = await lobby.starter.start(room.room_id, player.player_id)
    return LobbyReply(room=started.detail(), table_id=started.table_id)
