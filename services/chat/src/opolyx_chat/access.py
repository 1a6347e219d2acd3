"""Who may read and post in which channel: pure, from the lobby's room record.

Why the lobby's `rooms` bucket (read only) and not a membership claim from the gateway: the
lobby is the one authority on seats and members, the bucket is what every lobby instance
writes atomically, and chat follows it with a watch (`directory.py`), so a post costs no
extra request. A gateway that is wrong, stale or compromised then still cannot put a
player into a channel: it only vouches for *who* posts (NATS lets only the gateway role
send player requests), never for *where* they belong.

- lobby: every signed-in player reads and posts.
- room (`r_<room>`): the room's members, humans and bots, while the room exists.
- table (`t_<table>`): posted in by the humans seated at it; read by them and by whoever
  may spectate it (the lobby's `watch` rule: a public room's table; a private one only for
  its members).
- spectators (`s_<table>`): read by spectators (not by the players: no advice from the
  gallery), posted in only when the room's creator allowed it (`spectator_chat`).
"""

from __future__ import annotations

from dataclasses import dataclass

from opolyx_contracts.chat import (
    CHAT_NOT_MEMBER,
    CHAT_SPECTATOR_CHAT_OFF,
    ChannelRef,
    ChatRoomSettings,
    RoomRecordView,
)

__all__ = ["Access", "access"]


@dataclass(frozen=True)
class Access:
    read: bool
    post: bool
    refusal: str = CHAT_NOT_MEMBER
    """The code a post is refused with when `post` is false."""


NONE = Access(read=False, post=False)


def access(
    channel: ChannelRef,
    player_id: str,
    room: RoomRecordView | None,
    settings: ChatRoomSettings,
) -> Access:
    """`room` is the room of the channel (the waiting room, or the room whose game runs on
    the table); None when there is none."""
    if channel.kind == "lobby":
        return Access(read=True, post=True)
    if room is None:
        return NONE
    member = room.member(player_id)
    if channel.kind == "room":
        return Access(read=True, post=True) if member is not None else NONE
    if room.status != "started" or room.table_id != channel.id:
        return NONE
    seated = member is not None and not member.bot
    may_watch = room.public or member is not None
    if channel.kind == "table":
        if seated:
            return Access(read=True, post=True)
        return Access(read=may_watch, post=False)
    # spectators
    if member is not None or not may_watch:
        return NONE
    if settings.spectator_chat:
        return Access(read=True, post=True)
    return Access(read=True, post=False, refusal=CHAT_SPECTATOR_CHAT_OFF)
