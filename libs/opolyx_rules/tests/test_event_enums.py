"""Event fields that say how or why something happened carry one of their enum's values in
played games (the contract and the web client are generated from those enums, so a value
outside them would fail validation at every reader)."""

from __future__ import annotations

import typing
from enum import StrEnum

import pytest
from opolyx_rules import MODES
from opolyx_rules.events import EVENT_TYPES
from opolyx_rules.simulate import play_game


def enum_fields() -> dict[tuple[type[object], str], type[StrEnum]]:
    """(event class, field) -> its enum, for every event field typed with one."""
    found: dict[tuple[type[object], str], type[StrEnum]] = {}
    for cls in EVENT_TYPES.values():
        for field, hint in typing.get_type_hints(cls).items():
            if isinstance(hint, type) and issubclass(hint, StrEnum):
                found[cls, field] = hint
    return found


def test_the_how_and_why_fields_are_typed_with_enums() -> None:
    typed = {(cls.__name__, field) for cls, field in enum_fields()}
    assert {
        ("Moved", "how"),
        ("SentToJail", "why"),
        ("LeftJail", "how"),
        ("OfferClosed", "how"),
        ("SeatWentOut", "how"),
    } <= typed


@pytest.mark.parametrize("mode", sorted(MODES))
def test_played_games_send_only_members(mode: str) -> None:
    fields = enum_fields()
    seen: dict[tuple[type[object], str], set[object]] = {key: set() for key in fields}
    for seed in range(3):
        for event in play_game(mode, 4, seed, keep_events=True).events:
            for cls, field in fields:
                if type(event) is cls:
                    seen[cls, field].add(getattr(event, field))
    for (cls, field), values in seen.items():
        enum = fields[cls, field]
        assert all(isinstance(value, enum) for value in values), (cls.__name__, field, values)
    assert seen[EVENT_TYPES["moved"], "how"]  # games move pawns: the check saw events
