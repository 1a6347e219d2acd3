"""The client's constants are served from the Python source, and the client names only
constants that exist (the drift that hid sales as "sale" and filtered rooms on fields the
lobby did not send cannot come back unnoticed)."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

import opolyx_rules
from client_files import STATIC_JS, client_scripts
from gateway_builders import RunningGateway
from opolyx_contracts.lobby import RoomSummary
from opolyx_contracts.table import DecisionKind
from opolyx_gateway.constants import client_constants, constants_module
from opolyx_rules import modes
from pydantic_core import to_jsonable_python

EXPORT = re.compile(r"^export const (\w+) = (?:Object\.freeze\((.*)\)|(.*));$")
IMPORT = re.compile(r'import \{([^}]*)\} from "(?:\./|\.\./)constants\.js";', re.S)


def parse_module(text: str) -> dict[str, Any]:
    exports: dict[str, Any] = {}
    for line in text.splitlines():
        match = EXPORT.match(line)
        if match:
            exports[match.group(1)] = json.loads(match.group(2) or match.group(3))
    return exports


async def test_the_served_module_is_the_python_source(gateway: RunningGateway) -> None:
    response = await gateway.http.get("/js/constants.js")
    assert response.status_code == 200
    assert "javascript" in response.headers["content-type"]
    served = parse_module(response.text)
    assert served == json.loads(json.dumps(client_constants()))
    assert response.text == constants_module(client_constants())
    assert set(served["DECISION_KINDS"].values()) == set(typing.get_args(DecisionKind))
    assert served["MODES"]["classic"] == to_jsonable_python(
        dataclasses.asdict(modes.MODES["classic"])
    )
    assert len(served["SQUARES"]) == 40


def test_transfer_reasons_are_those_the_rules_send() -> None:
    # (the rules' own test checks TRANSFER_REASONS against their source and played games)
    served = client_constants()["TRANSFER_REASONS"]
    assert isinstance(served, dict), "TRANSFER_REASONS is served as a map of code to reason"
    reasons = served.values()
    # the reasons the log hides or names, as the rules spell them
    assert {"building_sale", "purchase", "rent", "start_landing", "bail", "tax"} <= set(reasons)
    assert "sale" not in reasons


def client_references() -> list[tuple[str, str, str]]:
    """(file, group, key) for every `Alias.KEY` the client's modules use."""
    found = []
    for path in client_scripts():
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(STATIC_JS).as_posix()
        for block in IMPORT.findall(text):
            for item in block.split(","):
                parts = item.split(" as ")
                group, alias = parts[0].strip(), parts[-1].strip()
                if not group:
                    continue
                found.append((name, group, ""))
                for key in re.findall(rf"\b{alias}\.([A-Z][A-Z0-9_]*)\b", text):
                    found.append((name, group, key))
                for key in re.findall(rf"\[{alias}\.([A-Z][A-Z0-9_]*)\]", text):
                    found.append((name, group, key))
    return found


def test_the_client_names_only_constants_that_exist() -> None:
    constants = client_constants()
    references = client_references()
    assert ("log.js", "TRANSFER_REASONS", "BUILDING_SALE") in references
    assert ("views/lobby.js", "ROOM_STATUSES", "OPEN") in references
    for file, group, key in references:
        assert group in constants, f"{file} imports {group}, which is not served"
        if key:
            value = constants[group]
            assert isinstance(value, dict) and key in value, f"{file} uses {group}.{key}"


def test_the_client_spells_no_code_type_or_reason_itself() -> None:
    constants = client_constants()
    spelled: set[str] = set()
    groups = [g for g in constants if g.endswith("ERRORS")] + ["PUSH_TYPES", "EVENT_TYPES"]
    for group in groups:
        spelled |= set(typing.cast(dict[str, str], constants[group]).values())
    reasons = typing.cast(dict[str, str], constants["TRANSFER_REASONS"]).values()
    spelled |= {r for r in reasons if "_" in r}
    spelled |= set(typing.cast(dict[str, str], constants["LOBBY_EVENT_TYPES"]).values())
    for path in client_scripts():
        literals = set(re.findall(r'"([^"\\\n]*)"', path.read_text(encoding="utf-8")))
        assert not literals & spelled, f"{path.name} spells {sorted(literals & spelled)}"


# The values of wire fields a client branches on: what events say happened, square kinds,
# modes, decision kinds and command types, a mission's period, a credit's status, a reply.
BRANCHED_ON = (
    "MOVE_HOWS", "JAIL_EXITS", "JAIL_REASONS", "OFFER_ENDS", "OUT_HOWS", "SQUARE_KINDS",
    "MODE_NAMES", "DECISION_KINDS", "COMMAND_TYPES", "MISSION_PERIODS", "CREDIT_STATUSES",
)  # fmt: skip
COMPARED = re.compile(r'[!=]==\s*"([^"\n]*)"|"([^"\n]*)"\s*[!=]==|\bcase\s+"([^"\n]*)"')
LISTED = re.compile(r"\[([^\[\]\n]*)\]\s*\.includes\(|new Set\(\[([^\[\]\n]*)\]\)")


def test_the_client_compares_wire_values_only_through_served_constants() -> None:
    """No `=== "bail"`, `case "roll"` or `["card", "teleport"].includes(e.how)` of its own:
    such a list once named a `Moved.how` ("teleport") that the rules never send."""
    constants = client_constants()
    wire = {
        value
        for group in BRANCHED_ON
        for value in typing.cast(dict[str, str], constants[group]).values()
    }
    wire.add(typing.cast(str, constants["REPLY_TYPE"]))
    for path in client_scripts():
        text = path.read_text(encoding="utf-8")
        spelled = {value for match in COMPARED.finditer(text) for value in match.groups() if value}
        for match in LISTED.finditer(text):
            spelled |= set(re.findall(r'"([^"\n]*)"', match.group(1) or match.group(2)))
        assert not spelled & wire, f"{path.name} compares with {sorted(spelled & wire)} itself"


def test_event_fields_the_client_branches_on_are_the_rules_own_values() -> None:
    constants = client_constants()
    served = {
        group: set(typing.cast(dict[str, str], constants[group]).values()) for group in BRANCHED_ON
    }
    assert served["MOVE_HOWS"] == {str(how) for how in opolyx_rules.MoveHow}
    assert served["JAIL_EXITS"] == {str(how) for how in opolyx_rules.JailExit}
    assert served["JAIL_REASONS"] == {str(why) for why in opolyx_rules.JailReason}
    assert served["OFFER_ENDS"] == {str(how) for how in opolyx_rules.OfferEnd}
    assert served["OUT_HOWS"] == {str(how) for how in opolyx_rules.OutHow}
    assert served["SQUARE_KINDS"] == {str(sq.kind) for sq in opolyx_rules.SQUARES}
    assert served["MODE_NAMES"] == set(modes.MODES)


def test_the_room_list_filters_on_fields_the_lobby_sends() -> None:
    lobby = (STATIC_JS / "views" / "lobby.js").read_text(encoding="utf-8")
    body = lobby[lobby.index("function renderRooms") : lobby.index("function renderMyGame")]
    used = set(re.findall(r"\br\.([a-z_]+)", body))
    assert used <= set(RoomSummary.model_fields), used - set(RoomSummary.model_fields)
