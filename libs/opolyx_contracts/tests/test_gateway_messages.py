"""Every websocket message kind round-trips through its JSON form, and client messages
are parsed strictly."""

from __future__ import annotations

import pytest
from opolyx_contracts.chat import ChatMessage
from opolyx_contracts.errors import ErrorBody
from opolyx_contracts.game import Roll, TurnStarted
from opolyx_contracts.gateway import (
    PUSH_TYPES,
    ChatMessagePush,
    ChatMuteRequest,
    ChatMutesRequest,
    ChatMutesResult,
    ChatPost,
    ChatPostResult,
    ChatReportRequest,
    ChatReportResult,
    ChatRoomSettingsRequest,
    ChatRoomSettingsResult,
    ChatUnwatch,
    ChatWatch,
    ChatWatchResult,
    Empty,
    ErrorReply,
    Hello,
    HelloResult,
    LobbyEventPush,
    LobbyRequest,
    LobbyResult,
    LobbyRoomsPush,
    OkReply,
    Ping,
    PingResult,
    PlayerInfo,
    ServerMessage,
    TableCmd,
    TableCmdResult,
    TableEventsPush,
    TableSeat,
    TableStatePush,
    TableUnwatch,
    TableUpdatePush,
    TableWatch,
    TableWatchResult,
    client_message_adapter,
    server_frame_adapter,
    server_message_adapter,
)
from opolyx_contracts.lobby import LobbyEvent, LobbyReply, RoomDetail, RoomMember
from opolyx_contracts.table import EventRecord, PendingDecision, PublicView
from pydantic import BaseModel, ValidationError

VIEW = PublicView.model_validate(
    {
        "schema_version": 1,
        "rules_version": "1.0.0",
        "mode": "classic",
        "config": {},
        "seed_commitment": "0" * 64,
        "round": 1,
        "first_seat": 0,
        "current_seat": 0,
        "finished": False,
        "winner": None,
        "placement": [],
        "finish_reason": "",
        "pending": {"kind": "roll", "seat": 0, "deadline": 75.0},
        "seats": [],
        "squares": [],
        "boosts": [],
        "pot": 0,
        "offers": [],
        "offers_made": 0,
        "last_card": None,
        "dice": None,
        "third": None,
        "turn_deadline": 75.0,
        "doubles": 0,
        "roll_again": False,
        "x_jump": False,
        "built": [],
        "out_count": 0,
    }
)
EVENTS = [EventRecord(seq=2, version=2, event=TurnStarted(seat=0, round=1, deadline=75.0))]
PENDING = [PendingDecision(seat=0, kind="roll", deadline_at=10.0, legal=[Roll(seat=0)])]
ROOM = RoomDetail(
    room_id="r1",
    mode="classic",
    seat_count=4,
    public=True,
    status="open",
    creator="g-a",
    members=[RoomMember(player_id="g-a", name="Ann")],
    filled=1,
    humans=1,
    created_at=1.0,
    waiting_since=1.0,
)

CHAT = ChatMessage(
    message_id="m1", channel="r_r1", sender_id="g-a", sender_name="Ann", text="hi", sent_at=1.0
)

CLIENT_MESSAGES: list[BaseModel] = [
    Hello(id=1, type="hello", token="t"),
    Ping(id="p", type="ping"),
    LobbyRequest(id=2, type="lobby", action="create", mode="classic", seats=4, private=True),
    TableWatch(id=3, type="table.watch", table="t1", since=4),
    TableUnwatch(id=4, type="table.unwatch", table="t1"),
    TableCmd(id=5, type="table.cmd", table="t1", command=Roll(), expected_version=3),
    ChatWatch(id=6, type="chat.watch", channel="r_r1"),
    ChatUnwatch(id=7, type="chat.unwatch", channel="r_r1"),
    ChatPost(id=8, type="chat.post", channel="r_r1", text="hi"),
    ChatPost(id=9, type="chat.post", channel="t_t1", sticker="gg"),
    ChatMuteRequest(id=10, type="chat.mute", target="g-b", muted=False),
    ChatMutesRequest(id=12, type="chat.mutes"),
    ChatReportRequest(id=11, type="chat.report", channel="lobby", message_id="m1", reason="rude"),
    ChatRoomSettingsRequest(id=13, type="chat.settings", room="r1", spectator_chat=True),
]

SERVER_MESSAGES: list[ServerMessage] = [
    OkReply(id=1, data=HelloResult(protocol=2, player=PlayerInfo(id="g", name="G"), expires_at=9)),
    OkReply(id=2, data=PingResult(now=1.5)),
    OkReply(
        id=3,
        data=TableWatchResult(table="t1", seat=0, spectator=False, seq=4, replayed=2),
    ),
    OkReply(id=4, data=TableCmdResult(seq=5, version=5, events=2)),
    OkReply(id=5, data=ChatWatchResult(channel="r_r1", messages=[CHAT], may_post=True)),
    OkReply(id=6, data=Empty()),
    OkReply(id=7, data=LobbyResult(room=ROOM, invite_code="abc")),
    OkReply(id=8, data=ChatPostResult(message=CHAT)),
    OkReply(id=9, data=ChatMutesResult(muted=["g-b"])),
    OkReply(id=10, data=ChatReportResult(report_id="r1")),
    OkReply(id=11, data=ChatRoomSettingsResult(room="r1", spectator_chat=True, bot_stickers=False)),
    ErrorReply(id=None, error=ErrorBody(code="request/malformed_json", message="no")),
    TableStatePush(
        table="t1",
        seq=4,
        version=4,
        state=VIEW,
        pending=PENDING,
        seats=[TableSeat(seat=0, player_id="g-a", name="Ann", bot=False)],
        deadline_at=10.0,
        now=1.0,
    ),
    TableUpdatePush(
        table_id="t1",
        first_seq=2,
        last_seq=2,
        version=2,
        events=EVENTS,
        view=VIEW,
        pending=PENDING,
        deadline_at=None,
        now=1.0,
        at=1.0,
    ),
    TableEventsPush(table="t1", seq=2, events=EVENTS, at=1.0),
    LobbyEventPush(event=LobbyEvent(type="room_changed", room_id="r1", room=ROOM)),
    LobbyRoomsPush(upserted=[ROOM.summary()], removed=["r2"]),
    ChatMessagePush(channel="r_r1", message=CHAT),
]


@pytest.mark.parametrize("message", CLIENT_MESSAGES, ids=lambda m: type(m).__name__)
def test_every_client_message_round_trips(message: BaseModel) -> None:
    assert client_message_adapter.validate_json(message.model_dump_json()) == message


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda m: type(m).__name__)
def test_every_server_message_round_trips(message: BaseModel) -> None:
    text = message.model_dump_json()
    parsed = server_message_adapter.validate_json(text)
    assert type(parsed) is type(message)
    assert parsed.model_dump_json() == text


def test_a_batched_frame_holds_messages_in_order() -> None:
    update = next(m for m in SERVER_MESSAGES if m.type == "table.update")
    reply = OkReply(id=7, data=TableCmdResult(seq=2, version=2, events=1))
    text = "[" + ",".join(m.model_dump_json() for m in (update, reply)) + "]"
    frame = server_frame_adapter.validate_json(text)
    assert isinstance(frame, list) and [type(m) for m in frame] == [TableUpdatePush, OkReply]
    single = server_frame_adapter.validate_json(reply.model_dump_json())
    assert isinstance(single, OkReply) and single.id == 7
    with pytest.raises(ValidationError):
        server_frame_adapter.validate_json('[{"type": "reply", "id": 1}, 3]')


def test_every_push_type_has_a_sample() -> None:
    sampled = {m.type for m in SERVER_MESSAGES if m.type != "reply"}
    assert sampled == set(PUSH_TYPES)


@pytest.mark.parametrize(
    "raw",
    [
        '{"id": 1, "type": "table.cmd", "table": "t1", "command": {"type": "roll", "x": 1}}',
        '{"id": 1, "type": "table.cmd", "table": "t1", "command": {"type": "timeout"}}',
        '{"id": 1, "type": "table.cmd", "table": "t1", "command": {"type": "bid", "seat": "1"}}',
        '{"id": 1, "type": "table.cmd", "table": "a.b", "command": {"type": "roll"}}',
        '{"id": 1, "type": "ping", "player_id": "g-victim"}',
        '{"id": true, "type": "ping"}',
    ],
)
def test_client_messages_are_parsed_strictly(raw: str) -> None:
    with pytest.raises(ValidationError):
        client_message_adapter.validate_json(raw)


def test_a_lobby_result_is_the_lobby_reply_without_its_envelope() -> None:
    assert set(LobbyResult.model_fields) == set(LobbyReply.model_fields) - {"v", "ok"}
    reply = LobbyReply(room=ROOM, invite_code="abc")
    assert LobbyResult.of(reply) == LobbyResult(room=ROOM, invite_code="abc")
