"""The constants a client needs from the wire contract, read from the models themselves.

The web client imports these (the gateway serves them as an ES module, adding what the
rules library knows: modes, board, transfer reasons), so it spells no code, type or kind of
its own. Every group is a name -> value map, e.g. ``DECISION_KINDS["AUCTION"] == "auction"``,
so a client that names a value the contract does not have gets ``undefined`` and a test that
reads the client's source can tell.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable

from pydantic import BaseModel

from opolyx_contracts import chat, errors, lobby, progression, refusals, replay
from opolyx_contracts.game import (
    COMMAND_MODELS,
    EVENT_MODELS,
    LeftJail,
    Moved,
    OfferClosed,
    SeatWentOut,
    SentToJail,
    Timeout,
)
from opolyx_contracts.gateway import (
    AUTH_ERROR_CODES,
    BATCH_QUERY,
    CHAT_TEXT_LIMIT,
    GATEWAY_ERROR_CODES,
    GATEWAY_PROTOCOL,
    LOBBY_ACTIONS,
    ONCE_PER_ID_TYPES,
    PUSH_TYPES,
    RESEND_WINDOW_SECONDS,
    OkReply,
)
from opolyx_contracts.table import (
    AutopilotChanged,
    AutopilotReason,
    DecisionKind,
    SeedRevealed,
    TableCreatedEvent,
)

__all__ = ["ConstantGroup", "codes_of", "contract_constants", "enum_of"]

ConstantGroup = dict[str, str]


def enum_of(values: Iterable[str]) -> ConstantGroup:
    """``{"BUILDING_SALE": "building_sale", "TABLE_STATE": "table.state", ...}``."""
    return {value.upper().replace(".", "_").replace("/", "_"): value for value in values}


def codes_of(codes: Iterable[str]) -> ConstantGroup:
    """Error codes of one namespace by reason: ``{"NOT_IN_ROOM": "lobby/not_in_room"}``."""
    return {code.split("/", 1)[1].upper(): code for code in codes}


def _codes(module: object) -> ConstantGroup:
    """The string constants a module exports (its error codes)."""
    names: Iterable[str] = getattr(module, "__all__", ())
    return {name: value for name in names if isinstance(value := getattr(module, name), str)}


def _values_of(model: type[BaseModel], field: str) -> ConstantGroup:
    """The values a model's `Literal` field may take: ``{"ROLL": "roll", ...}``."""
    return enum_of(typing.get_args(model.model_fields[field].annotation))


def contract_constants() -> dict[str, object]:
    """Every constant of the contract a client uses, by group."""
    return {
        "PROTOCOL": GATEWAY_PROTOCOL,
        # the websocket URL's query by which the client reads batched frames
        "BATCH_QUERY": BATCH_QUERY,
        "CHAT_TEXT_LIMIT": CHAT_TEXT_LIMIT,
        "STICKERS": enum_of(chat.STICKERS),
        "CHAT_ERRORS": codes_of(chat.CHAT_ERROR_CODES),
        "CHAT_LOBBY_CHANNEL": chat.LOBBY_CHANNEL,
        "PUSH_TYPES": enum_of(PUSH_TYPES),
        "REPLY_TYPE": OkReply.model_fields["type"].default,
        # resent under their first id when a lost socket cut them short (the gateway runs
        # them once per id)
        "ONCE_PER_ID_TYPES": enum_of(ONCE_PER_ID_TYPES),
        "RESEND_WINDOW_SECONDS": RESEND_WINDOW_SECONDS,
        "ERRORS": _codes(errors),
        "LOBBY_ERRORS": codes_of(lobby.LOBBY_ERROR_CODES),
        "AUTH_ERRORS": codes_of(AUTH_ERROR_CODES),
        # the gateway's own refusals, and the replay pages' (HTTP)
        "GATEWAY_ERRORS": enum_of(GATEWAY_ERROR_CODES + replay.REPLAY_ERROR_CODES),
        "RULES_ERRORS": enum_of(refusals.RULES_ERROR_CODES),
        "TABLE_ERRORS": enum_of(refusals.TABLE_ERROR_CODES),
        "PROGRESSION_ERRORS": enum_of(
            (progression.UNKNOWN_PLAYER, progression.FOLLOW_SELF, progression.FOLLOW_LIMIT_REACHED)
        ),
        "LOBBY_ACTIONS": enum_of(LOBBY_ACTIONS),
        "ROOM_STATUSES": enum_of(typing.get_args(lobby.RoomStatus)),
        "LOBBY_EVENT_TYPES": enum_of(typing.get_args(lobby.LobbyEventType)),
        "DECISION_KINDS": enum_of(typing.get_args(DecisionKind)),
        "AUTOPILOT_REASONS": enum_of(typing.get_args(AutopilotReason)),
        "CREDIT_STATUSES": _values_of(progression.GameCreditReply, "status"),
        "MISSION_PERIODS": _values_of(progression.MissionView, "period"),
        # what some events' fields say happened (the log words each its own way)
        "MOVE_HOWS": _values_of(Moved, "how"),
        "JAIL_EXITS": _values_of(LeftJail, "how"),
        "OUT_HOWS": _values_of(SeatWentOut, "how"),
        "JAIL_REASONS": _values_of(SentToJail, "why"),
        "OFFER_ENDS": _values_of(OfferClosed, "how"),
        "COMMAND_TYPES": enum_of(
            kind for kind, model in COMMAND_MODELS.items() if model is not Timeout
        ),
        "EVENT_TYPES": enum_of(
            [
                *EVENT_MODELS,
                TableCreatedEvent.model_fields["type"].default,
                SeedRevealed.model_fields["type"].default,
                AutopilotChanged.model_fields["type"].default,
            ]
        ),
    }
