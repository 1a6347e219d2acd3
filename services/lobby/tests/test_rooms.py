"""The lobby's rules as pure functions on rooms (no NATS)."""

from __future__ import annotations

import pytest
from opolyx_lobby import rooms
from opolyx_lobby.rooms import LobbyError, Member, Room

ALICE = Member(player_id="alice", name="Alice")
BOB = Member(player_id="bob", name="Bob")
CARL = Member(player_id="carl", name="Carl")
BOT = Member(player_id="bot-ada", name="Ada", bot=True, style="balanced")


def room(seats: int = 2, public: bool = True, mode: str = "classic") -> Room:
    return rooms.create_room(
        room_id="r-1",
        creator=ALICE,
        mode=mode,
        seat_count=seats,
        public=public,
        invite_code="code",
        now=0.0,
    )


def error_code(fn: object, *args: object) -> str:
    with pytest.raises(LobbyError) as info:
        fn(*args)  # type: ignore[operator]
    return info.value.code


def test_unknown_mode_and_bad_seat_counts_are_refused() -> None:
    assert error_code(room, 2, True, "chess") == "lobby/bad_mode"
    assert error_code(room, 7) == "lobby/bad_seat_count"
    assert error_code(room, 1) == "lobby/bad_seat_count"
    assert error_code(room, 5, True, "team") == "lobby/bad_seat_count"
    assert room(6, True, "team").seat_count == 6


def test_a_full_room_refuses_a_human_unless_a_bot_can_make_way() -> None:
    full = rooms.join(room(2), BOB, None, 1.0)
    assert error_code(rooms.join, full, CARL, None, 2.0) == "lobby/room_full"
    with_bot = rooms.fill_with_bot(room(2), BOT)
    after = rooms.join(with_bot, BOB, None, 3.0)
    assert [m.player_id for m in after.members] == ["alice", "bob"]
    assert after.waiting_since == 3.0


def test_private_rooms_need_the_invite_code() -> None:
    private = room(3, public=False)
    assert error_code(rooms.join, private, BOB, "wrong", 1.0) == "lobby/bad_invite"
    assert rooms.join(private, BOB, "code", 1.0).member("bob") == BOB
    assert "invite_code" not in private.public_dict()


def test_creator_leaving_hands_the_room_to_the_next_human_and_bots_never_own_it() -> None:
    r = rooms.fill_with_bot(rooms.join(room(4), BOB, None, 1.0), BOT)
    after = rooms.leave(r, "alice")
    assert after is not None and after.creator == "bob"
    assert rooms.leave(after, "bob") is None  # only a bot left: the room closes


def test_only_the_creator_manages_seats() -> None:
    r = rooms.join(room(4), BOB, None, 1.0)
    assert error_code(rooms.add_bot, r, "bob", BOT) == "lobby/not_creator"
    assert error_code(rooms.kick, r, "bob", "alice") == "lobby/not_creator"
    assert error_code(rooms.check_can_start, r, "bob") == "lobby/not_creator"
    kicked = rooms.kick(r, "alice", "bob")
    assert kicked.member("bob") is None
    assert error_code(rooms.kick, r, "alice", "alice") == "lobby/bad_request"


def test_start_needs_two_seats_and_team_needs_every_seat() -> None:
    assert error_code(rooms.check_can_start, room(4), "alice") == "lobby/not_enough_players"
    rooms.check_can_start(rooms.join(room(4), BOB, None, 1.0), "alice")
    team = rooms.join(room(4, mode="team"), BOB, None, 1.0)
    assert error_code(rooms.check_can_start, team, "alice") == "lobby/not_enough_players"


def test_a_started_room_takes_no_more_changes() -> None:
    started = rooms.mark_started(
        rooms.mark_starting(rooms.join(room(3), BOB, None, 1.0), "alice", 2.0), "t-1"
    )
    assert started.status == "started" and started.table_id == "t-1"
    assert error_code(rooms.join, started, CARL, None, 2.0) == "lobby/room_started"
    assert error_code(rooms.leave, started, "bob") == "lobby/room_started"
