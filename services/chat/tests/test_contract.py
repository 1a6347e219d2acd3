"""The chat contract: channel tokens, posts, personas, and reading the lobby's records."""

from __future__ import annotations

import pytest
from opolyx_contracts.chat import (
    BOT_OCCASIONS,
    STICKERS,
    ChannelRef,
    ChatMessage,
    ChatPost,
    RoomRecordView,
    channel_token,
    parse_channel,
    sticker_for,
    visible_to,
)
from opolyx_contracts.lobby import BOT_STYLES
from opolyx_contracts.subjects import chat_post
from opolyx_lobby.rooms import Member, Room
from pydantic import ValidationError


@pytest.mark.parametrize(
    "ref",
    [
        ChannelRef(kind="lobby"),
        ChannelRef(kind="room", id="r-abc"),
        ChannelRef(kind="table", id="t-abc-1"),
        ChannelRef(kind="spectators", id="t-abc-1"),
    ],
)
def test_a_channel_token_names_its_channel(ref: ChannelRef) -> None:
    assert parse_channel(ref.token) == ref
    assert chat_post(ref.token).count(".") == 3


@pytest.mark.parametrize(
    "token", ["", "x_1", "r_", "t_a.b", "t_*", "s_>", "lobbyx", "r_" + "a" * 121]
)
def test_a_token_of_no_channel_is_refused(token: str) -> None:
    assert parse_channel(token) is None


def test_a_channel_id_that_cannot_be_a_token_is_refused() -> None:
    with pytest.raises(ValueError):
        channel_token("table", "a.b")


@pytest.mark.parametrize(
    "fields",
    [{}, {"text": "hi", "sticker": "gg"}, {"text": "x" * 301}, {"sticker": "s" * 33}],
)
def test_a_post_has_one_bounded_content(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        ChatPost.model_validate({"player_id": "p", "name": "P", **fields})


def test_every_persona_has_a_known_sticker_for_every_occasion() -> None:
    for style in (*BOT_STYLES, None, "unknown"):
        for occasion in BOT_OCCASIONS:
            assert sticker_for(style, occasion) in STICKERS


def test_visible_to_drops_muted_senders() -> None:
    message = ChatMessage(
        message_id="m", channel="lobby", sender_id="bob", sender_name="Bob", text="hi", sent_at=0
    )
    assert visible_to(message, set())
    assert not visible_to(message, {"bob"})


def test_the_lobby_room_record_reads_as_the_chat_view() -> None:
    """Chat reads the lobby's bucket: the fields it needs must be in the lobby's record."""
    room = Room(
        room_id="r-1",
        mode="classic",
        seat_count=4,
        public=False,
        invite_code="SECRET",
        creator="alice",
        members=(
            Member(player_id="alice", name="Alice"),
            Member(player_id="bot-ada", name="Ada", bot=True, style="shark"),
        ),
        status="started",
        created_at=1.0,
        waiting_since=1.0,
        table_id="t-1-x",
    )
    view = RoomRecordView.model_validate_json(room.model_dump_json())
    assert view.room_id == "r-1" and not view.public and view.creator == "alice"
    assert view.table_id == "t-1-x" and view.status == "started"
    assert [(m.player_id, m.bot, m.style) for m in view.members] == [
        ("alice", False, None),
        ("bot-ada", True, "shark"),
    ]
