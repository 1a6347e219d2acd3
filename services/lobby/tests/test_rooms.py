"""The lobby's rules as pure functions on rooms (no NATS)."""

from __future__ import annotations

import pytest
from opolyx_lobby import rooms
from opolyx_lobby.errors import LobbyError
from opolyx_lobby.rooms import Member, Room

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
    assert "invite_code" not in private.detail().model_dump()


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
        rooms.mark_starting(rooms.join(room(3), BOB, None, 1.0), "alice", 2.0, "s1"), "s1", "t-1"
    )
    assert started.status == "started" and started.table_id == "t-1"
    assert error_code(rooms.join, started, CARL, None, 2.0) == "lobby/room_started"
    assert error_code(rooms.leave, started, "bob") == "lobby/room_started"


def test_a_start_is_recorded_once_and_every_retry_continues_it() -> None:
    ready = rooms.join(room(3), BOB, None, 1.0)
    starting = rooms.mark_starting(ready, "alice", 2.0, "s1")
    assert starting.status == "starting" and starting.start_table_id == "t-1-s1"
    # a resent start (any instance, after any crash) keeps the recorded start
    assert rooms.mark_starting(starting, "alice", 3.0, "s2") is starting
    assert error_code(rooms.mark_starting, starting, "bob", 3.0, "s2") == "lobby/not_creator"
    # seats are frozen while starting
    assert error_code(rooms.join, starting, CARL, None, 3.0) == "lobby/room_started"
    assert error_code(rooms.leave, starting, "bob") == "lobby/room_started"
    # only the recorded start can finish or be undone
    assert error_code(rooms.mark_started, starting, "s2", "t-1-s2") == "lobby/room_started"
    assert error_code(rooms.reopen, starting, "s2") == "lobby/room_started"
    started = rooms.mark_started(starting, "s1", "t-1-s1")
    assert rooms.mark_started(started, "s1", "t-1-s1") is started
    assert rooms.mark_starting(started, "alice", 4.0, "s3") is started
    seated = rooms.mark_seated(started, "t-1-s1")
    assert seated.seated and error_code(rooms.mark_seated, started, "t-other")


def test_an_undone_start_leaves_an_open_room_and_the_next_start_a_new_table() -> None:
    starting = rooms.mark_starting(rooms.join(room(3), BOB, None, 1.0), "alice", 2.0, "s1")
    reopened = rooms.reopen(starting, "s1")
    assert reopened.status == "open" and reopened.start_id is None
    left = rooms.leave(reopened, "bob")
    assert left is not None, "alice is still in the room"
    changed = rooms.join(left, CARL, None, 3.0)
    again = rooms.mark_starting(changed, "alice", 4.0, "s2")
    assert again.start_table_id == "t-1-s2" != starting.start_table_id


def test_a_look_alike_name_cannot_join_the_room() -> None:
    bobby = Member(player_id="bob2", name="B\u043eb")  # Cyrillic small o
    assert error_code(rooms.join, room(3), Member(player_id="x", name="ALICE"), None, 1.0) == (
        "lobby/name_taken"
    )
    assert error_code(rooms.join, rooms.join(room(3), BOB, None, 1.0), bobby, None, 2.0) == (
        "lobby/name_taken"
    )
