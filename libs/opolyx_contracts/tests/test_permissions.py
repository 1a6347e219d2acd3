"""The permission table itself: what each role may and may not do, and that the document in
the repository is the table (the real server's refusals are tested in opolyx_service)."""

from __future__ import annotations

from pathlib import Path

import pytest
from opolyx_contracts import subjects
from opolyx_contracts.lobby import lobby_member_events
from opolyx_contracts.permissions import (
    ADMIN,
    ROLES,
    SERVICE_ROLES,
    permissions_markdown,
    subject_matches,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "NATS_PERMISSIONS.md"

TABLE_ID = "t-0123abcd"
COMMAND = subjects.table_command(TABLE_ID)
EVENTS = subjects.table_events(TABLE_ID)


def who_may_publish(subject: str) -> set[str]:
    return {role.name for role in SERVICE_ROLES if role.may_publish(subject)}


def who_may_subscribe(subject: str) -> set[str]:
    return {role.name for role in SERVICE_ROLES if role.may_subscribe(subject)}


def test_the_document_in_the_repository_is_the_table() -> None:
    assert DOC.read_text() == permissions_markdown(), (
        "docs/NATS_PERMISSIONS.md is stale: "
        "python -m opolyx_contracts.permissions > docs/NATS_PERMISSIONS.md"
    )


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("opolyx.table.*.events", "opolyx.table.t1.events", True),
        ("opolyx.table.*.events", "opolyx.table.3.t1.events", False),
        ("opolyx.table.*.>", "opolyx.table.3.t1.cmd", True),
        ("opolyx.table.*.>", "opolyx.table.3", False),
        ("opolyx.game.>", "opolyx.game", False),
        (">", "anything.at.all", True),
        ("$KV.tables.>", "$KV.tables.3.t1", True),
        ("$KV.tables.>", "$KV.table_leases.p.3", False),
    ],
)
def test_subject_matching_follows_nats_wildcards(
    pattern: str, subject: str, expected: bool
) -> None:
    assert subject_matches(pattern, subject) is expected


def test_only_the_table_writes_table_events_games_and_the_table_buckets() -> None:
    for subject in (
        EVENTS,
        subjects.GAME_FINISHED,
        subjects.GAME_SEAT_OUT,
        f"$KV.{subjects.TABLES_BUCKET}.3.{TABLE_ID}",
        f"$KV.{subjects.TABLE_LEASES_BUCKET}.p.3",
        f"$JS.API.STREAM.UPDATE.{subjects.TABLE_EVENTS_STREAM}",
        subjects.table_update(TABLE_ID),
        subjects.BOTS_DECIDE,
    ):
        assert who_may_publish(subject) == {"table"}, subject


def test_only_the_gateway_sends_player_and_lobby_commands_and_bots_only_table_commands() -> None:
    assert who_may_publish(COMMAND) == {"gateway"}
    assert who_may_publish(subjects.table_bot_command(TABLE_ID)) == {"bots"}
    assert who_may_publish(subjects.table_seat(TABLE_ID)) == {"gateway"}
    assert who_may_publish(subjects.table_view(TABLE_ID)) == {"gateway"}
    assert who_may_publish(subjects.LOBBY_CMD) == {"gateway"}
    assert who_may_publish(subjects.chat_post("room1")) == {"gateway"}
    assert who_may_publish(subjects.progression("profile")) == {"gateway"}
    bots = ROLES["bots"]
    # Decision requests come from the work queue (a pull), never a core subscription.
    assert not bots.may_subscribe(subjects.BOTS_DECIDE)
    pull = f"$JS.API.CONSUMER.MSG.NEXT.{subjects.BOTS_DECISIONS_STREAM}.{subjects.BOTS_CONSUMER}"
    assert bots.may_publish(pull)
    assert not bots.may_publish(f"$JS.API.CONSUMER.MSG.NEXT.{subjects.GAMES_STREAM}.lobby")
    assert [s for s in bots.publish if not s.startswith(("_INBOX", "$JS"))] == [
        subjects.TABLE_BOT_COMMANDS_ANY,
        subjects.CHAT_BOT_STICKER,
    ]


def test_the_lobby_alone_creates_tables_and_speaks_for_rooms() -> None:
    assert who_may_publish(subjects.TABLE_CREATE) == {"lobby"}
    assert who_may_publish(subjects.LOBBY_EVENTS) == {"lobby"}
    assert who_may_publish(lobby_member_events("alice")) == {"lobby"}
    assert who_may_publish(f"$KV.{subjects.ROOMS_BUCKET}.r-1") == {"lobby"}
    assert who_may_publish(f"$KV.{subjects.ACTIVE_GAMES_BUCKET}.alice") == {"lobby"}
    assert who_may_publish(subjects.progression("boosts")) == {"gateway", "lobby"}


def test_who_listens_where() -> None:
    assert who_may_subscribe(COMMAND) == {"table"}
    assert who_may_subscribe(subjects.table_bot_command(TABLE_ID)) == {"table"}
    assert who_may_subscribe(subjects.table_seat(TABLE_ID)) == {"table"}
    assert who_may_subscribe(subjects.TABLE_CREATE) == {"table"}
    assert who_may_subscribe(subjects.BOTS_DECIDE) == set()  # the bots' work queue takes it
    # the live end of a game, for a bot's end-of-game sticker (not the GAMES stream itself)
    assert who_may_subscribe(subjects.GAME_FINISHED) == {"bots"}
    assert not ROLES["bots"].may_subscribe(subjects.GAME_SEAT_OUT)
    assert not ROLES["bots"].may_publish(f"$JS.API.CONSUMER.CREATE.{subjects.GAMES_STREAM}")
    assert who_may_subscribe(subjects.LOBBY_CMD) == {"lobby"}
    assert who_may_subscribe(subjects.LOBBY_EVENTS) == {"gateway"}
    # A table instance subscribes to `opolyx.table.<partition>.>`, which covers what it
    # publishes itself; nobody else but the gateway reads updates.
    assert who_may_subscribe(subjects.table_update(TABLE_ID)) == {"gateway", "table"}
    assert who_may_subscribe(subjects.chat_post("room1")) == {"chat"}
    assert who_may_subscribe(subjects.progression("profile")) == {"progression"}
    # Reading streams is consumer creation, a publish to the JetStream API:
    consume_games = f"$JS.API.CONSUMER.DURABLE.CREATE.{subjects.GAMES_STREAM}.lobby"
    assert who_may_publish(consume_games) == {"table", "lobby", "progression"}
    follow_events = f"$JS.API.CONSUMER.CREATE.{subjects.TABLE_EVENTS_STREAM}.x.{EVENTS}"
    # progression reads a finished game's events for mission statistics
    assert who_may_publish(follow_events) == {"table", "gateway", "progression"}


def test_every_role_has_its_own_inbox_and_no_one_else_reads_it() -> None:
    prefixes = [role.inbox_prefix for role in ROLES.values()]
    assert len(set(prefixes)) == len(prefixes)
    for role in SERVICE_ROLES:
        reply = f"{role.inbox_prefix}.abc.1"
        assert who_may_subscribe(reply) == {role.name}
        assert not role.may_subscribe("_INBOX.abc.1")  # the default, shared inbox


def test_no_service_role_has_a_full_wildcard_or_stream_deletion() -> None:
    for role in SERVICE_ROLES:
        for pattern in (*role.publish, *role.subscribe):
            assert pattern not in (">", "*", "$JS.API.>", "$JS.>", "$KV.>"), (role.name, pattern)
        for stream in (subjects.TABLE_EVENTS_STREAM, subjects.GAMES_STREAM, "KV_tables"):
            assert not role.may_publish(f"$JS.API.STREAM.DELETE.{stream}")
            assert not role.may_publish(f"$JS.API.STREAM.PURGE.{stream}")
    assert ADMIN.may_publish(EVENTS) and ADMIN.may_subscribe(COMMAND)


def test_every_pattern_is_a_well_formed_subject() -> None:
    for role in ROLES.values():
        for pattern in (*role.publish, *role.subscribe):
            tokens = pattern.split(".")
            assert all(tokens), (role.name, pattern)
            assert ">" not in tokens[:-1], (role.name, pattern)
            assert " " not in pattern
