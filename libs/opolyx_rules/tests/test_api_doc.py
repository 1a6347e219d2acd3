"""API.md documents every event: its JSON name and each of its fields (issue 15), so the
document cannot fall behind the events the library emits."""

from __future__ import annotations

from pathlib import Path

from opolyx_rules.commands import COMMAND_TYPES
from opolyx_rules.events import EVENT_TYPES

API = (Path(__file__).resolve().parent.parent / "API.md").read_text(encoding="utf-8")


def _event_rows() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in API.splitlines():
        if line.startswith("| `"):
            name = line.split("`")[1]
            rows[name] = line
    return rows


def test_every_event_has_a_row_naming_each_of_its_fields() -> None:
    rows = _event_rows()
    for name, cls in EVENT_TYPES.items():
        assert name in rows, f"API.md has no row for event {name!r}"
        fields_cell = rows[name].split("|")[2]
        for field in cls._fields:
            assert f"`{field}`" in fields_cell, f"API.md: event {name!r} lacks field {field!r}"


def test_the_table_lists_no_event_the_library_does_not_emit() -> None:
    assert set(_event_rows()) <= set(EVENT_TYPES)


def test_every_command_type_is_named() -> None:
    commands = API.split("Commands (JSON `type`):", 1)[1].split("\n\n", 1)[0]
    for name in COMMAND_TYPES:
        assert name in commands, f"API.md does not name command {name!r}"
