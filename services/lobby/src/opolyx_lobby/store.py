"""Lobby state in NATS KV, shared by every lobby instance.

- bucket ``rooms``: room id -> room JSON. Every change is read-modify-write with
  compare-and-set on the revision, retried on conflict, so two instances racing for the
  last seat cannot both win.
- bucket ``active_games``: player key -> claim JSON (the room, and once started the table,
  the player is in). A claim is taken with ``create`` (fails while another claim is live):
  that is the atomic "one unfinished game or room per player" rule (R21).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from nats.js import JetStreamContext
from nats.js.errors import (
    APIError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue
from opolyx_contracts.lobby import LOBBY_ALREADY_IN_GAME, LOBBY_BUSY, LOBBY_UNKNOWN_ROOM
from opolyx_contracts.subjects import ACTIVE_GAMES_BUCKET, ROOMS_BUCKET
from opolyx_service.connection import ensure_kv
from pydantic import BaseModel, ConfigDict

from opolyx_lobby.errors import LobbyError
from opolyx_lobby.room_index import RoomIndex
from opolyx_lobby.rooms import Room

__all__ = ["Claim", "LobbyStore", "player_key"]

_KEY_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
#: how often a compare-and-set is retried before the request fails with lobby/busy
CAS_ATTEMPTS = 50


def player_key(player_id: str) -> str:
    """A KV key for any player id (ids outside the safe alphabet are hex-encoded)."""
    if _KEY_SAFE.match(player_id):
        return f"p_{player_id}"
    return f"x_{player_id.encode().hex()}"


class Claim(BaseModel):
    """Where a player is: a room, and once it started, its table."""

    model_config = ConfigDict(frozen=True)

    player_id: str
    room_id: str
    table_id: str | None = None
    since: float


class LobbyStore:
    def __init__(self, rooms: KeyValue, active: KeyValue, index: RoomIndex) -> None:
        self.rooms = rooms
        self.active = active
        self.index = index

    @classmethod
    async def open(cls, js: JetStreamContext, *, replicas: int = 1) -> LobbyStore:
        """The buckets (with `replicas`, the service's `jetstream.replicas`), and the room
        index following them (``index.start()`` before use)."""
        rooms = await ensure_kv(js, ROOMS_BUCKET, replicas=replicas)
        active = await ensure_kv(js, ACTIVE_GAMES_BUCKET, replicas=replicas)
        return cls(rooms, active, RoomIndex(js, ROOMS_BUCKET))

    # rooms -------------------------------------------------------------------------

    async def get_room(self, room_id: str) -> tuple[Room, int] | None:
        if not _KEY_SAFE.match(room_id):
            return None  # not an id this lobby ever made
        try:
            entry = await self.rooms.get(room_id)
        except KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return Room.model_validate_json(entry.value), entry.revision or 0

    async def require_room(self, room_id: str) -> tuple[Room, int]:
        found = await self.get_room(room_id)
        if found is None:
            raise LobbyError(LOBBY_UNKNOWN_ROOM, f"no room {room_id!r}: it may have closed")
        return found

    async def insert_room(self, room: Room) -> None:
        revision = await self.rooms.create(room.room_id, _dump(room))
        self.index.note(room.room_id, room, revision)

    async def change_room(
        self, room_id: str, change: Callable[[Room], Room | None]
    ) -> tuple[Room, Room | None]:
        """Apply ``change`` atomically; returns (before, after). ``after`` None deletes the room.

        ``change`` may raise ``LobbyError``; it is re-run on the fresh room after a conflict.
        """
        for _ in range(CAS_ATTEMPTS):
            before, revision = await self.require_room(room_id)
            after = change(before)
            if after is before:
                return before, after  # nothing to write
            try:
                if after is None:
                    await _delete(self.rooms, room_id, revision)
                    # the delete's own revision is not returned; any later one is higher
                    self.index.note(room_id, None, revision + 1)
                else:
                    new_revision = await self.rooms.update(room_id, _dump(after), last=revision)
                    self.index.note(room_id, after, new_revision)
            except KeyWrongLastSequenceError:
                continue
            return before, after
        raise LobbyError(LOBBY_BUSY, "the room is changing too fast; try again")

    async def all_rooms(self) -> list[Room]:
        """Every live room, from the index (see `room_index` for why not the bucket's keys)."""
        return self.index.rooms()

    async def delete_room(self, room_id: str) -> Room | None:
        """Delete the room; returns it as it was, or None when it was gone or changing."""
        found = await self.get_room(room_id)
        if found is None:
            return None
        try:
            await _delete(self.rooms, room_id, found[1])
        except KeyWrongLastSequenceError:
            return None
        self.index.note(room_id, None, found[1] + 1)
        return found[0]

    # claims (R21) --------------------------------------------------------------------

    async def get_claim(self, player_id: str) -> tuple[Claim, int] | None:
        try:
            entry = await self.active.get(player_key(player_id))
        except KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return Claim.model_validate_json(entry.value), entry.revision or 0

    async def claim(
        self,
        claim: Claim,
        is_stale: Callable[[Claim], Awaitable[bool]],
    ) -> None:
        """Take the player's single slot, or raise lobby/already_in_game.

        A claim left behind by a crash between claiming and seating (its room is gone or
        does not hold the player) is ``is_stale`` and taken over with compare-and-set.
        """
        key = player_key(claim.player_id)
        for _ in range(CAS_ATTEMPTS):
            try:
                await self.active.create(key, _dump(claim))
                return
            except KeyWrongLastSequenceError:
                pass
            found = await self.get_claim(claim.player_id)
            if found is None:
                continue
            held, revision = found
            if not await is_stale(held):
                where = f"game {held.table_id}" if held.table_id else f"room {held.room_id}"
                raise LobbyError(
                    LOBBY_ALREADY_IN_GAME,
                    f"you are already in {where}; leave it or finish it first",
                )
            try:
                await self.active.update(key, _dump(claim), last=revision)
                return
            except KeyWrongLastSequenceError:
                continue
        raise LobbyError(LOBBY_BUSY, "your account is changing too fast; try again")

    async def release(
        self, player_id: str, *, room_id: str | None = None, table_id: str | None = None
    ) -> bool:
        """Free the player's slot if it still points at ``room_id`` / ``table_id``."""
        key = player_key(player_id)
        for _ in range(CAS_ATTEMPTS):
            found = await self.get_claim(player_id)
            if found is None:
                return False
            held, revision = found
            if room_id is not None and held.room_id != room_id:
                return False
            if table_id is not None and held.table_id != table_id:
                return False
            try:
                await _delete(self.active, key, revision)
                return True
            except KeyWrongLastSequenceError:
                continue
        return False

    async def set_table(self, player_id: str, room_id: str, table_id: str) -> None:
        key = player_key(player_id)
        for _ in range(CAS_ATTEMPTS):
            found = await self.get_claim(player_id)
            if found is None or found[0].room_id != room_id:
                return
            held, revision = found
            try:
                await self.active.update(
                    key, _dump(held.model_copy(update={"table_id": table_id})), last=revision
                )
                return
            except KeyWrongLastSequenceError:
                continue


def _dump(model: BaseModel) -> bytes:
    return model.model_dump_json().encode()


async def _delete(kv: KeyValue, key: str, revision: int) -> None:
    """Compare-and-set delete (nats-py's ``delete`` does not map the conflict error)."""
    try:
        await kv.delete(key, last=revision)
    except KeyWrongLastSequenceError:
        raise
    except APIError as exc:
        if exc.err_code in (10071, 10164):
            raise KeyWrongLastSequenceError(description=exc.description) from None
        raise
