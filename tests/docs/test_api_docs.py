"""Every service's AsyncAPI document lists the subjects it serves and sends, with schemas,
and agrees with the NATS permissions of its role (two independent declarations of one
interface); `make docs` writes them all, with the gateway's OpenAPI."""

from __future__ import annotations

import functools
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opolyx_contracts.lobby import LOBBY_MEMBER_EVENTS_WILDCARD
from opolyx_contracts.permissions import ROLES
from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    CHAT_BOT_STICKER,
    CHAT_HISTORY_ANY,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_POSTS_ANY,
    CHAT_REPORT,
    CHAT_SETTINGS,
    CHAT_STREAM_SUBJECTS,
    GAME_FINISHED,
    GAME_SEAT_OUT,
    LOBBY_CMD,
    LOBBY_EVENTS,
    TABLE_BOT_COMMANDS_ANY,
    TABLE_COMMANDS_ANY,
    TABLE_CREATE,
    TABLE_EVENTS_SUBJECTS,
    TABLE_PARTITION_CREATE_ANY,
    TABLE_SEATS_ANY,
    TABLE_VIEWS_ANY,
    progression,
    table_update_wildcard,
)
from opolyx_service.asyncapi import document_subjects

ROOT = Path(__file__).resolve().parents[2]

# What each service receives and sends, spelled from the contract (not from the documents).
EXPECTED: dict[str, dict[str, set[str]]] = {
    "table": {
        "receive": {
            TABLE_CREATE,
            TABLE_PARTITION_CREATE_ANY,
            TABLE_COMMANDS_ANY,
            TABLE_BOT_COMMANDS_ANY,
            TABLE_SEATS_ANY,
            TABLE_VIEWS_ANY,
        },
        "send": {
            TABLE_EVENTS_SUBJECTS,
            table_update_wildcard(),
            BOTS_DECIDE,
            GAME_FINISHED,
            GAME_SEAT_OUT,
        },
    },
    "lobby": {
        "receive": {LOBBY_CMD, GAME_FINISHED, GAME_SEAT_OUT},
        "send": {LOBBY_EVENTS, LOBBY_MEMBER_EVENTS_WILDCARD, TABLE_CREATE, progression("boosts")},
    },
    "bots": {"receive": {BOTS_DECIDE}, "send": {TABLE_BOT_COMMANDS_ANY}},
    "gateway": {
        "receive": {
            table_update_wildcard(),
            TABLE_EVENTS_SUBJECTS,
            LOBBY_EVENTS,
            LOBBY_MEMBER_EVENTS_WILDCARD,
        },
        "send": {TABLE_COMMANDS_ANY, TABLE_SEATS_ANY, TABLE_VIEWS_ANY, LOBBY_CMD},
    },
    "progression": {
        "receive": {GAME_FINISHED, progression("profile"), progression("boosts")},
        "send": set(),
    },
    "chat": {
        "receive": {
            CHAT_POSTS_ANY,
            CHAT_HISTORY_ANY,
            CHAT_MUTE,
            CHAT_MUTES,
            CHAT_REPORT,
            CHAT_SETTINGS,
            CHAT_BOT_STICKER,
        },
        "send": {CHAT_STREAM_SUBJECTS},
    },
}

# Read through a JetStream consumer, not a core subscription: the role's permissions are on
# the stream's API, not on the subject.
FROM_A_STREAM = {TABLE_EVENTS_SUBJECTS, GAME_FINISHED, GAME_SEAT_OUT, BOTS_DECIDE}


@functools.cache
def document_of(service: str) -> dict[str, Any]:
    module = importlib.import_module(f"opolyx_{service}.asyncapi")
    document: dict[str, Any] = module.document()
    return document


def concrete(pattern: str) -> str:
    """One concrete subject a pattern covers (what a permission check needs)."""
    return ".".join("x1" if token in ("*", ">") else token for token in pattern.split("."))


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_the_document_lists_every_subject_of_the_service(service: str) -> None:
    found = document_subjects(document_of(service))
    for action, subjects in EXPECTED[service].items():
        missing = subjects - found[action]
        assert not missing, f"{service} does not document what it {action}s: {missing}"


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_every_message_of_the_document_has_a_schema(service: str) -> None:
    document = document_of(service)
    schemas = document["components"]["schemas"]
    for message_id, message in document["components"]["messages"].items():
        name = message["payload"]["$ref"].rsplit("/", 1)[-1]
        assert name in schemas, f"{service}: {message_id} has no schema"
        assert schemas[name].get("type") == "object", f"{service}: {message_id} is {name}"


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_the_document_agrees_with_the_roles_nats_permissions(service: str) -> None:
    role = ROLES[service]
    found = document_subjects(document_of(service))
    for subject in found["send"]:
        assert role.may_publish(concrete(subject)), f"{service} documents sending {subject}"
    for subject in found["receive"] - FROM_A_STREAM:
        assert role.may_subscribe(concrete(subject)), f"{service} documents taking {subject}"


def test_requests_the_service_answers_document_their_reply() -> None:
    document = document_of("table")
    replies = [
        operation
        for operation in document["operations"].values()
        if operation["action"] == "receive" and "reply" in operation
    ]
    # create, create in a partition, player and bot commands, seat presence, view
    assert len(replies) == 6
    messages = document["components"]["messages"]
    reply_payloads = {
        message["payload"]["$ref"].rsplit("/", 1)[-1]
        for message_id, message in messages.items()
        if message_id.endswith(":Reply")
    }
    assert {"CommandAccepted", "TableView", "TableCreated"} <= reply_payloads


def test_make_docs_writes_every_document(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "write_api_docs.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(path.name for path in tmp_path.iterdir())
    assert written == sorted([f"{s}.asyncapi.json" for s in EXPECTED] + ["gateway.openapi.json"])
    for path in tmp_path.glob("*.asyncapi.json"):
        assert json.loads(path.read_text())["asyncapi"] == "3.0.0"
    openapi = json.loads((tmp_path / "gateway.openapi.json").read_text())
    assert "/readyz" in openapi["paths"]
