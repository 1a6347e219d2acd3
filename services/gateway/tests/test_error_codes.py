"""Every error code a service can send reaches the client as a text in the player's language.

The client reads codes only from the constants the gateway serves (`/js/constants.js`), so
two things must hold: every code spelled in the services' and libraries' source is served in
one of the `*_ERRORS` groups, and every served code has a catalogue text in all twelve
languages (its own, or its namespace's), which `errorText` in actions.js looks up in that
order. The old check only looked for keys the client's code spelled: the rules' codes
(trade/unfair, turn/not_your_turn, ...) were not served at all, so a refusal of the rules
showed as the server's English message or as its bare code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from client_files import client_scripts
from opolyx_contracts.errors import REPLY_NOT_INBOX
from opolyx_contracts.refusals import RULES_ERROR_CODES
from opolyx_gateway.constants import client_constants
from opolyx_testing.sources import python_sources, source_roots
from test_catalogues import LANGUAGES, catalogue

ROOT = Path(__file__).resolve().parents[3]
CODE = re.compile(r"^[a-z]+/[a-z_]+$")
NOT_CODES = {"application/json", "image/png", "namespace/reason"}  # media types; an example
# Codes that never reach a client: a request whose reply subject is no inbox gets no reply
# (opolyx_service.replies only counts it in a metric).
NEVER_SENT = {REPLY_NOT_INBOX}


def spelled_codes(*roots: Path) -> set[str]:
    """The string constants of these source trees that have the shape of an error code."""
    found: set[str] = set()
    for path in python_sources(*roots):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and CODE.match(text) and text not in NOT_CODES:
                found.add(text)
    return found


def served_codes() -> set[str]:
    codes: set[str] = set()
    for group, values in client_constants().items():
        if group == "ERRORS" or group.endswith("_ERRORS"):
            assert isinstance(values, dict), group
            codes |= set(values.values())
    return codes


def test_the_contract_lists_every_code_the_rules_refuse_with() -> None:
    rules = spelled_codes(ROOT / "libs" / "opolyx_rules" / "src")
    assert "trade/unfair" in rules and "turn/not_your_turn" in rules
    assert sorted(rules - set(RULES_ERROR_CODES)) == []
    assert sorted(set(RULES_ERROR_CODES) - rules) == [], "listed codes the rules never send"


def test_every_code_the_services_spell_is_served_to_the_client() -> None:
    spelled = spelled_codes(*source_roots(ROOT))
    assert {"lobby/room_full", "chat/too_long", "replay/not_found", "seat/not_automated"} <= spelled
    assert sorted(spelled - served_codes() - NEVER_SENT) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_served_code_has_a_text_in_every_language(lang: str) -> None:
    messages = catalogue(lang)
    assert "ui.errors.unexpected" in messages
    missing = [
        code
        for code in sorted(served_codes())
        if f"ui.errors.{code.replace('/', '_')}" not in messages
        and f"ui.errors.area.{code.split('/')[0]}" not in messages
    ]
    assert missing == []


CLIENT_CODE = re.compile(r'^export const [A-Z_]+ = "([a-z]+/[a-z_]+)";', re.M)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_clients_own_codes_have_their_own_text_in_every_language(lang: str) -> None:
    """A request cut short by a lost socket fails with the page's own `net/disconnected`
    (net.js); it once read "Something went wrong (net/disconnected)"."""
    own = {m.group(1) for p in client_scripts() for m in CLIENT_CODE.finditer(p.read_text())}
    assert "net/disconnected" in own
    messages = catalogue(lang)
    assert sorted(c for c in own if f"ui.errors.{c.replace('/', '_')}" not in messages) == []
