"""Progression's AsyncAPI document (`make docs`): every query subject with its request and
reply models, taken from the routes the service answers, and the GAMES stream it reads.

Only feeds the document; nothing here runs or touches the database.
"""

from __future__ import annotations

import typing
from typing import Any

from opolyx_contracts.subjects import GAME_FINISHED, GAME_SEAT_OUT, TABLE_EVENTS_SUBJECTS
from opolyx_contracts.table import GameFinished, SeatOut, TableEvents
from opolyx_service.asyncapi import Interface
from pydantic import BaseModel

from opolyx_progression.app import QUEUE
from opolyx_progression.queries import Queries
from opolyx_progression.settings import ProgressionSettings

__all__ = ["document"]


def document() -> dict[str, Any]:
    # The routes are built without touching the engine: None stands in for it here.
    queries = Queries(None, ProgressionSettings().progression)  # type: ignore[arg-type]
    interface = Interface(
        "opolyx progression",
        "Players' XP, levels, ranks, cards, missions, weekly leaderboard and follows, in SQL; "
        "credits each finished game exactly once from stream GAMES.",
    )
    for subject, (request, handler) in queries._routes.items():
        reply = typing.get_type_hints(handler).get("return")
        interface.handles(
            subject,
            request,
            reply if isinstance(reply, type) and issubclass(reply, BaseModel) else None,
            queue=QUEUE,
            description=(handler.__doc__ or f"The {subject.rsplit('.', 1)[-1]} query.").strip(),
        )
    interface.handles(
        GAME_FINISHED,
        GameFinished,
        description="Durable pull consumer on stream GAMES: credits each finished game once.",
    )
    interface.handles(
        GAME_SEAT_OUT,
        SeatOut,
        description="Same consumer: a seat that went out is no longer its player's current game.",
    )
    interface.handles(
        TABLE_EVENTS_SUBJECTS,
        TableEvents,
        description="A finished game's events, read by the reference GameFinished carries"
        " (ordered consumer on one table's subject): the statistics missions need.",
    )
    return interface.document()
