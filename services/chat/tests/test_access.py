"""Who reads and posts where, table-driven over the kinds of channel and of player."""

from __future__ import annotations

import pytest
from opolyx_chat.access import access
from opolyx_contracts.chat import (
    CHAT_NOT_MEMBER,
    CHAT_SPECTATOR_CHAT_OFF,
    ChannelRef,
    ChatRoomSettings,
    RoomRecordView,
)
from opolyx_contracts.lobby import RoomMember

MEMBERS = (
    RoomMember(player_id="alice", name="Alice"),
    RoomMember(player_id="bob", name="Bob"),
    RoomMember(player_id="bot-ada", name="Ada", bot=True, style="balanced"),
)


def room(*, public: bool = True, started: bool = True) -> RoomRecordView:
    return RoomRecordView(
        room_id="r-1",
        public=public,
        creator="alice",
        members=MEMBERS,
        status="started" if started else "open",
        table_id="t-1-a" if started else None,
    )


LOBBY = ChannelRef(kind="lobby")
ROOM = ChannelRef(kind="room", id="r-1")
TABLE = ChannelRef(kind="table", id="t-1-a")
OTHER_TABLE = ChannelRef(kind="table", id="t-9-z")
SPECTATORS = ChannelRef(kind="spectators", id="t-1-a")
OFF = ChatRoomSettings()
ON = ChatRoomSettings(spectator_chat=True)

CASES = [
    # channel, player, room, settings, (read, post, refusal)
    (LOBBY, "anyone", None, OFF, (True, True)),
    (ROOM, "alice", room(started=False), OFF, (True, True)),
    (ROOM, "bot-ada", room(started=False), OFF, (True, True)),
    (ROOM, "eve", room(started=False), OFF, (False, False)),
    (ROOM, "alice", None, OFF, (False, False)),
    (TABLE, "alice", room(), OFF, (True, True)),
    (TABLE, "bot-ada", room(), OFF, (True, False)),  # bots post through bot stickers only
    (TABLE, "eve", room(), OFF, (True, False)),  # a spectator reads the players
    (TABLE, "eve", room(public=False), OFF, (False, False)),  # private: members only
    (TABLE, "alice", room(started=False), OFF, (False, False)),  # not started yet
    (OTHER_TABLE, "alice", room(), OFF, (False, False)),
    (SPECTATORS, "eve", room(), OFF, (True, False, CHAT_SPECTATOR_CHAT_OFF)),
    (SPECTATORS, "eve", room(), ON, (True, True)),
    (SPECTATORS, "alice", room(), ON, (False, False)),  # players do not read the gallery
    (SPECTATORS, "eve", room(public=False), ON, (False, False)),
]


@pytest.mark.parametrize(("channel", "player", "the_room", "settings", "expected"), CASES)
def test_access(
    channel: ChannelRef,
    player: str,
    the_room: RoomRecordView | None,
    settings: ChatRoomSettings,
    expected: tuple[object, ...],
) -> None:
    got = access(channel, player, the_room, settings)
    assert (got.read, got.post) == expected[:2]
    assert got.refusal == (expected[2] if len(expected) > 2 else CHAT_NOT_MEMBER)
