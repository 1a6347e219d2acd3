"""Rules versioning (R22): the library states its version, every game records the
version it started with, and a state of an unknown major version is refused clearly."""

from __future__ import annotations

import pytest
from opolyx_rules import (
    RULES_VERSION,
    SCHEMA_VERSION,
    StateVersionError,
    new_game,
    state_from_json,
    state_to_json,
)


def test_the_library_states_a_major_minor_rules_version() -> None:
    major, minor = RULES_VERSION.split(".")
    assert major == "1" and minor.isdigit()


def test_a_state_from_another_minor_of_the_same_major_loads_and_keeps_its_version() -> None:
    """R22: a minor change cannot alter a game in progress; the game keeps its version."""
    data = state_to_json(new_game("classic", 2, 1))
    data["rules_version"] = "1.7"
    state = state_from_json(data)
    assert state.rules_version == "1.7"
    assert state_to_json(state)["rules_version"] == "1.7"


@pytest.mark.parametrize("version", ["2.0", "0.9", "", "one"])
def test_a_state_of_an_unknown_major_version_is_refused_naming_both_versions(
    version: str,
) -> None:
    data = state_to_json(new_game("classic", 2, 1))
    data["rules_version"] = version
    with pytest.raises(StateVersionError) as refused:
        state_from_json(data)
    message = str(refused.value)
    assert "major version 1" in message
    assert (version or "?") in message


def test_a_state_of_another_schema_is_refused() -> None:
    data = state_to_json(new_game("classic", 2, 1))
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(StateVersionError, match="schema"):
        state_from_json(data)
