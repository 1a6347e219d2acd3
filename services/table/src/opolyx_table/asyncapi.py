"""The table service's NATS interface, for its AsyncAPI document only.

The command path is plain nats-py: a FastStream typed handler's round trip is 1.7x a plain
nats-py handler's one request at a time, and about 4x in throughput with 64 in flight
(bench/messaging.py, STACK.md); a table command is the system's hot path. So the subjects
are declared here with their contract models, and `make docs` writes the document from
this; nothing here runs.
"""

from __future__ import annotations

from typing import Any

from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    GAME_FINISHED,
    GAME_SEAT_OUT,
    TABLE_BOT_COMMANDS_ANY,
    TABLE_COMMANDS_ANY,
    TABLE_CREATE,
    TABLE_EVENTS_SUBJECTS,
    TABLE_PARTITION_CREATE_ANY,
    TABLE_SEATS_ANY,
    TABLE_VIEWS_ANY,
    table_update_wildcard,
)
from opolyx_contracts.table import (
    CommandAccepted,
    CreateTable,
    DecisionRequest,
    GameFinished,
    SeatOut,
    SeatPresence,
    SeatStatus,
    TableCommand,
    TableCreated,
    TableEvents,
    TableUpdate,
    TableView,
    ViewRequest,
)
from opolyx_service.asyncapi import Interface

__all__ = ["document", "interface"]


def interface() -> Interface:
    return (
        Interface(
            "opolyx table",
            "Owns every running game: applies commands through the rules library, stores "
            "the events in JetStream (TABLE_EVENTS) and tells watchers and bots what changed. "
            "Tables belong to partitions; the instance holding a partition's lease answers "
            "its subjects (`opolyx.table.<partition>.<table_id>.cmd|bot|seat|view`).",
        )
        .handles(
            TABLE_CREATE,
            CreateTable,
            TableCreated,
            queue="table",
            description="Create a table (the lobby starts games this way); any instance "
            "takes it and forwards it to the owner of the new table's partition.",
        )
        .handles(
            TABLE_PARTITION_CREATE_ANY,
            CreateTable,
            TableCreated,
            queue="table",
            description="Create a table in this partition (forwarded by `opolyx.table.create`).",
        )
        .handles(
            TABLE_COMMANDS_ANY,
            TableCommand,
            CommandAccepted,
            queue="table",
            description="A player's command for one table (sent by the gateway; never for a "
            "bot seat: `seat/not_yours`). Answered after its events are stored; errors are "
            "`ErrorReply` with a stable code (`table/not_owner` and `service/busy`: retry "
            "with backoff).",
        )
        .handles(
            TABLE_BOT_COMMANDS_ANY,
            TableCommand,
            CommandAccepted,
            queue="table",
            description="A bot worker's command for one table, the answer to a "
            "`DecisionRequest`: taken only for a bot seat or a seat on autopilot (else "
            "`seat/not_automated`, nothing changed). The autopilot's events are marked "
            "(`EventRecord.autopilot`).",
        )
        .handles(
            TABLE_SEATS_ANY,
            SeatPresence,
            SeatStatus,
            queue="table",
            description="The gateway reports a seated player's sockets came or went, or the "
            "player switched autopilot on or off. A drop starts the grace period; after it "
            "(where the room allows) the autopilot plays the seat until the player is back. "
            "Changes are stored as `autopilot` table events.",
        )
        .handles(
            TABLE_VIEWS_ANY,
            ViewRequest,
            TableView,
            queue="table",
            description="The public view of one table (resync after a gap).",
        )
        .publishes(
            TABLE_EVENTS_SUBJECTS,
            TableEvents,
            description="Each accepted command's events, stored in stream TABLE_EVENTS with a "
            "per-table sequence (deduplicated by message id).",
        )
        .publishes(
            table_update_wildcard(),
            TableUpdate,
            description="For live watchers (core NATS, not stored): the batch, the new view "
            "version and the decisions now pending with their legal commands.",
        )
        .publishes(
            BOTS_DECIDE,
            DecisionRequest,
            description="A bot seat (or a seat on autopilot) must act; sent after the bot's "
            "think time at tables with people, asked again when no command comes within "
            "the bot deadline.",
        )
        .publishes(
            GAME_FINISHED,
            GameFinished,
            description="A game ended: results per seat (stream GAMES).",
        )
        .publishes(
            GAME_SEAT_OUT,
            SeatOut,
            description="A seat left the game before the end (stream GAMES).",
        )
    )


def document() -> dict[str, Any]:
    return interface().document()
