"""The client's constants come from the contract's own models and constants."""

from __future__ import annotations

import json
import typing

from opolyx_contracts import errors, lobby
from opolyx_contracts.client_constants import ConstantGroup, contract_constants, enum_of
from opolyx_contracts.game import COMMAND_MODELS
from opolyx_contracts.gateway import PUSH_TYPES
from opolyx_contracts.table import DecisionKind


def test_names_are_the_values_in_capitals() -> None:
    assert enum_of(["building_sale", "table.state", "lobby/busy"]) == {
        "BUILDING_SALE": "building_sale",
        "TABLE_STATE": "table.state",
        "LOBBY_BUSY": "lobby/busy",
    }


def group(constants: dict[str, object], name: str) -> ConstantGroup:
    """One name -> value group of the constants (beside them are plain numbers and strings)."""
    value = constants[name]
    assert isinstance(value, dict), f"{name} is not a group"
    return value


def test_every_group_matches_its_source() -> None:
    c = contract_constants()
    assert json.loads(json.dumps(c)) == c  # plain JSON, as the client gets it
    assert set(group(c, "DECISION_KINDS").values()) == set(typing.get_args(DecisionKind))
    error_codes = group(c, "ERRORS")
    assert error_codes["BUSY"] == errors.BUSY and error_codes["SEAT_NOT_YOURS"] == "seat/not_yours"
    assert set(group(c, "LOBBY_ERRORS").values()) == set(lobby.LOBBY_ERROR_CODES)
    assert set(group(c, "PUSH_TYPES").values()) == set(PUSH_TYPES)
    commands = set(group(c, "COMMAND_TYPES").values())
    assert commands == set(COMMAND_MODELS) - {"timeout"}  # players never send a timeout
    assert {"transfer", "table_created", "seed_revealed"} <= set(group(c, "EVENT_TYPES").values())
