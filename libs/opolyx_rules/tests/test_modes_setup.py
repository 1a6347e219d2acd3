"""Invalid setups are refused by ``opolyx-rules replay`` (RULES.md R2, R3, R17; issue 3).

An invalid setup is refused like a malformed file: exit status 2, nothing on stdout, and
a message on stderr naming the problem. Valid setups of every mode replay with status 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opolyx_rules import MODES


def replay(tmp_path: Path, setup: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "scenario.jsonl"
    scenario.write_text(json.dumps({"setup": setup}) + "\n", encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "opolyx_rules.cli", "replay", str(scenario)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("setup", "named"),
    [
        ({"mode": "team", "seats": 3}, ["team", "4, 6", "3"]),
        ({"mode": "team", "seats": 5}, ["team", "4, 6", "5"]),
        ({"mode": "monopoly", "seats": 4}, ["unknown mode", "monopoly"]),
        ({"mode": "classic", "seats": 7}, ["classic", "7"]),
        ({"mode": "fortuna", "seats": 1}, ["fortuna", "1"]),
    ],
    ids=["team-3", "team-5", "unknown-mode", "classic-7", "fortuna-1"],
)
def test_invalid_setup_is_refused_with_exit_2_naming_the_problem(
    tmp_path: Path, setup: dict[str, Any], named: list[str]
) -> None:
    """R2, R3, R17: Team needs 4 or 6 seats, every mode 2-6, and the mode must exist."""
    result = replay(tmp_path, setup)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "line 1" in result.stderr
    for word in named:
        assert word in result.stderr


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_mode_replays_a_valid_setup(tmp_path: Path, mode: str) -> None:
    """R2: every mode of the table is known to ``replay`` and starts with its seats."""
    seats = 4 if mode == "team" else 2
    result = replay(tmp_path, {"mode": mode, "seats": seats, "first_seat": 1})
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout)["state"]
    assert state["mode"] == mode
    assert len(state["seats"]) == seats
    assert state["pending"]["seat"] == 1
    assert state["pot"] == 0
