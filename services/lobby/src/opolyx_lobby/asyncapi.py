"""The lobby's AsyncAPI document: its FastStream broker, plus what it sends on plain
nats-py (events, table creation, card boosts) and reads from the GAMES stream.

Only feeds `make docs`; nothing here runs. The command handler reads raw bytes (it answers
every request, even an unreadable one, with a coded error), so its schemas are named here.
"""

from __future__ import annotations

from typing import Any

from opolyx_contracts.lobby import (
    LOBBY_MEMBER_EVENTS_WILDCARD,
    BoostsReply,
    BoostsRequest,
    LobbyCommand,
    LobbyEvent,
    LobbyReply,
)
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAME_SEAT_OUT,
    LOBBY_CMD,
    LOBBY_EVENTS,
    TABLE_CREATE,
    progression,
)
from opolyx_contracts.table import CreateTable, GameFinished, SeatOut, TableCreated
from opolyx_service.asyncapi import Interface

from opolyx_lobby.app import LobbyApp
from opolyx_lobby.settings import LobbySettings

__all__ = ["document"]


def document() -> dict[str, Any]:
    app = LobbyApp(LobbySettings())
    interface = Interface(
        "opolyx lobby",
        "Rooms, seats, bots filling rooms, the one-unfinished-game rule; starts games on the "
        "table service. Stateless apart from NATS KV (`rooms`, `active_games`): any number "
        "of instances serve side by side (queue group `lobby`).",
        broker=app.broker,
    )
    return (
        interface.answers(LOBBY_CMD, LobbyCommand, LobbyReply)
        .handles(
            GAME_FINISHED,
            GameFinished,
            description="Durable pull consumer on stream GAMES: frees the players of a "
            "finished game (at-least-once; releases are idempotent).",
        )
        .handles(
            GAME_SEAT_OUT,
            SeatOut,
            description="Durable pull consumer on stream GAMES: frees a player whose seat "
            "went out.",
        )
        .publishes(LOBBY_EVENTS, LobbyEvent, description="Public rooms created, changed, closed.")
        .publishes(
            LOBBY_MEMBER_EVENTS_WILDCARD,
            LobbyEvent,
            description="Every room's events (a private room's only here), to the own "
            "subject of each human member before and after the change.",
        )
        .publishes(
            TABLE_CREATE,
            CreateTable,
            TableCreated,
            description="Start a room's game on the table service.",
        )
        .publishes(
            progression("boosts"),
            BoostsRequest,
            BoostsReply,
            description="Card boosts of a starting game's humans (optional: a game starts "
            "without them when progression does not answer in time).",
        )
        .document()
    )
