"""The lobby's messages round-trip through JSON, and the room list folds into one delta."""

from __future__ import annotations

import json

import pytest
from opolyx_contracts import decode, encode
from opolyx_contracts.lobby import (
    LOBBY_ERROR_CODES,
    LOBBY_MEMBER_EVENTS_WILDCARD,
    LobbyCommand,
    LobbyEvent,
    LobbyReply,
    RoomDetail,
    RoomMember,
    RoomsChanged,
    coalesce_room_events,
    lobby_member_events,
    member_token,
)
from opolyx_contracts.subjects import is_valid_token
from pydantic import BaseModel


def detail(room_id: str = "r-1", *, public: bool = True, status: str = "open") -> RoomDetail:
    members = [
        RoomMember(player_id="alice", name="Alice"),
        RoomMember(player_id="bot-ada", name="Ada", bot=True, style="balanced"),
    ]
    return RoomDetail.model_validate(
        {
            "room_id": room_id,
            "mode": "classic",
            "seat_count": 4,
            "public": public,
            "status": status,
            "creator": "alice",
            "members": [m.model_dump() for m in members],
            "filled": 2,
            "humans": 1,
            "created_at": 1.0,
            "waiting_since": 2.0,
            "table_id": "t-1-s1" if status == "started" else None,
        }
    )


MESSAGES: list[BaseModel] = [
    LobbyCommand(type="create", player_id="alice", name="Alice", mode="classic", seats=4),
    LobbyCommand(type="join", player_id="bob", room_id="r-1", invite_code="code"),
    LobbyReply(room=detail(), invite_code="code"),
    LobbyReply(rooms=[detail().summary(), detail("r-2").summary()]),
    LobbyReply(table_id="t-1-s1", room=detail(status="started")),
    LobbyReply(),
    LobbyEvent(type="room_changed", room_id="r-1", room=detail()),
    LobbyEvent(type="room_started", room_id="r-1", room=detail(status="started"), table_id="t"),
    LobbyEvent(type="room_closed", room_id="r-1", room=None),
    RoomsChanged(upserted=[detail().summary()], removed=["r-9"]),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_lobby_message_round_trips(message: BaseModel) -> None:
    body = encode(message)
    assert decode(type(message), body) == message
    assert json.loads(body) == json.loads(encode(decode(type(message), body)))


def test_a_listed_room_shows_what_the_client_filters_on() -> None:
    row = json.loads(encode(LobbyReply(rooms=[detail().summary()])))["rooms"][0]
    assert row["status"] == "open" and row["public"] is True
    assert row["members"][0] == {"player_id": "alice", "name": "Alice", "bot": False, "style": None}
    assert "invite_code" not in json.loads(encode(LobbyReply(room=detail())))["room"]


def test_error_codes_are_namespaced_and_distinct() -> None:
    assert len(set(LOBBY_ERROR_CODES)) == len(LOBBY_ERROR_CODES)
    assert all(code.startswith("lobby/") for code in LOBBY_ERROR_CODES)


def test_room_events_fold_into_one_room_list_delta() -> None:
    events = [
        LobbyEvent(type="room_created", room_id="r-1", room=detail("r-1")),
        LobbyEvent(type="room_created", room_id="r-2", room=detail("r-2")),
        LobbyEvent(type="room_changed", room_id="r-1", room=detail("r-1")),
        LobbyEvent(type="room_started", room_id="r-2", room=detail("r-2", status="started")),
        LobbyEvent(type="room_created", room_id="r-3", room=detail("r-3")),
        LobbyEvent(type="room_closed", room_id="r-3", room=None),
        LobbyEvent(type="room_created", room_id="r-4", room=detail("r-4", public=False)),
    ]
    delta = coalesce_room_events(events)
    assert [r.room_id for r in delta.upserted] == ["r-1"]
    assert delta.removed == ["r-2", "r-3", "r-4"]
    assert coalesce_room_events([]) == RoomsChanged()


@pytest.mark.parametrize("player_id", ["alice", "a.b", "*", ">", "with space", "x" * 128, "é"])
def test_member_subjects_hold_one_token_for_any_player_id(player_id: str) -> None:
    token = member_token(player_id)
    assert is_valid_token(token)
    subject = lobby_member_events(player_id)
    assert subject == LOBBY_MEMBER_EVENTS_WILDCARD.replace("*", token)
    assert member_token("p_" + player_id) != token
