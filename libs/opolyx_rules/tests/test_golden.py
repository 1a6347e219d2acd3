"""Golden replays (issues 2 and 3): a change of behaviour must be deliberate.

Every ``golden/<name>.jsonl`` is a scenario in the replay contract of issue 2 (a setup
line, then commands and waits with ``at``); ``golden/<name>.json`` beside it is exactly
what ``opolyx-rules replay golden/<name>.jsonl`` prints. This test replays each scenario
through the command-line entry point and compares the output byte for byte.

To change the expected output deliberately (after a rules change), regenerate it and
review the diff against RULES.md before checking it in::

    OPOLYX_UPDATE_GOLDEN=1 .venv/bin/pytest libs/opolyx_rules/tests/test_golden.py

A new scenario is added the same way: write ``golden/<name>.jsonl``, run the command above
(it writes ``<name>.json``), then read the new output against RULES.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opolyx_rules.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden"
SCENARIOS = sorted(GOLDEN.glob("*.jsonl"))
UPDATE = os.environ.get("OPOLYX_UPDATE_GOLDEN") == "1"


def replay_output(scenario: Path) -> str:
    """What ``opolyx-rules replay SCENARIO`` prints (the CLI's own code, in process)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["replay", str(scenario)])
    assert status == 0, f"{scenario.name}: replay exited {status}"
    return out.getvalue()


def test_there_are_golden_scenarios_for_every_mode() -> None:
    """Issue 3: golden scenarios for each mode's special rules (and two for Classic)."""
    modes = [
        json.loads(path.read_text(encoding="utf-8").splitlines()[0])["setup"]["mode"]
        for path in SCENARIOS
    ]
    assert modes.count("classic") >= 2
    assert {"blitz", "speed", "team", "halal", "fortuna"} <= set(modes)


def test_every_expected_output_has_its_scenario() -> None:
    """A checked-in output without its scenario is stale."""
    outputs = {p.stem for p in GOLDEN.glob("*.json")}
    assert outputs <= {p.stem for p in SCENARIOS}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_golden_replay(scenario: Path) -> None:
    """The replay of each golden scenario prints exactly its checked-in output."""
    expected_path = scenario.with_suffix(".json")
    actual = replay_output(scenario)
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.exists(), (
        f"no expected output for {scenario.name}: run with OPOLYX_UPDATE_GOLDEN=1"
    )
    expected = expected_path.read_text(encoding="utf-8")
    if actual != expected:
        # Compare as data first, so a failure shows which part changed.
        assert json.loads(actual) == json.loads(expected)
    assert actual == expected


def test_the_installed_command_prints_the_same() -> None:
    """The real command line (a new process) prints the checked-in output too."""
    scenario = GOLDEN / "classic_turns.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "opolyx_rules.cli", "replay", str(scenario)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout == scenario.with_suffix(".json").read_text(encoding="utf-8")
