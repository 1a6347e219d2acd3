"""The gateway's NATS interface, for its AsyncAPI document only (`make docs`).

The gateway's NATS side is plain nats-py: it sits on every command's path, and FastStream's
per-message cost (a round trip 1.7x plain nats-py's one at a time, about 4x in throughput with
64 in flight: bench/messaging.py, STACK.md) would be paid on each. Its
browser side (HTTP and websocket) is the OpenAPI document (`app.openapi_schema`).
"""

from __future__ import annotations

from typing import Any

from opolyx_contracts.lobby import (
    LOBBY_MEMBER_EVENTS_WILDCARD,
    LobbyCommand,
    LobbyEvent,
    LobbyReply,
)
from opolyx_contracts.subjects import (
    LOBBY_CMD,
    LOBBY_EVENTS,
    TABLE_COMMANDS_ANY,
    TABLE_EVENTS_SUBJECTS,
    TABLE_SEATS_ANY,
    TABLE_VIEWS_ANY,
    table_update_wildcard,
)
from opolyx_contracts.table import (
    CommandAccepted,
    SeatPresence,
    SeatStatus,
    TableCommand,
    TableEvents,
    TableUpdate,
    TableView,
    ViewRequest,
)
from opolyx_service.asyncapi import Interface

__all__ = ["document"]


def document() -> dict[str, Any]:
    return (
        Interface(
            "opolyx gateway",
            "Holds the players' websockets: turns their messages into commands as the "
            "token's player (the only service that asserts a player's identity) and streams "
            "what happened back.",
        )
        .handles(
            table_update_wildcard(),
            TableUpdate,
            description="Live updates of the tables its clients watch (one subscription per "
            "watched table, one encoding per push for all its watchers).",
        )
        .handles(
            TABLE_EVENTS_SUBJECTS,
            TableEvents,
            description="Read back from stream TABLE_EVENTS when a client resumes after a "
            "gap (ordered consumer from the client's last sequence).",
        )
        .handles(LOBBY_EVENTS, LobbyEvent, description="Public room changes, pushed to lobbies.")
        .handles(
            LOBBY_MEMBER_EVENTS_WILDCARD,
            LobbyEvent,
            description="A private room's events, pushed to its members.",
        )
        .publishes(
            TABLE_COMMANDS_ANY,
            TableCommand,
            CommandAccepted,
            description="A player's command, to the owning table instance; `service/busy` "
            "and `table/not_owner` are retried with backoff and the same command id.",
        )
        .publishes(
            TABLE_SEATS_ANY,
            SeatPresence,
            SeatStatus,
            description="A seated player's first socket on a table came or their last went "
            "(the table's autopilot takes a dropped seat after its grace period), or the "
            "player switched autopilot for their seat.",
        )
        .publishes(
            TABLE_VIEWS_ANY,
            ViewRequest,
            TableView,
            description="A table's public view when a client (re)joins.",
        )
        .publishes(
            LOBBY_CMD,
            LobbyCommand,
            LobbyReply,
            description="A lobby command as the token's player.",
        )
        .document()
    )
