"""The contract of ``opolyx-rules replay`` output beyond state and events (issue 15):
results per seat once the game has finished (R20), the winning side of a Team game (R17),
unknown command fields refused by name, impossible set-up positions refused with exit 2."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from opolyx_rules.cli import main


def run(tmp_path: Path, lines: list[dict[str, Any]]) -> tuple[int, dict[str, Any] | None, str]:
    """Replay the scenario in process: (exit status, parsed stdout or None, stderr)."""
    scenario = tmp_path / "scenario.jsonl"
    scenario.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["replay", str(scenario)])
    return status, json.loads(out.getvalue()) if out.getvalue() else None, err.getvalue()


def test_results_and_winning_side_of_a_finished_team_game(tmp_path: Path) -> None:
    # Seats alternate sides (R17): 1 and 3 are side 1; both resign, side 0 wins.
    status, output, _ = run(
        tmp_path,
        [
            {"setup": {"mode": "team", "seats": 4, "first_seat": 0, "overrides": {"round": 25}}},
            {"seat": 1, "type": "resign", "at": 1},
            {"seat": 3, "type": "resign", "at": 2},
        ],
    )
    assert status == 0 and output is not None
    assert output["state"]["finished"]
    assert output["winning_side"] == 0
    results = {r["seat"]: r for r in output["results"]}
    # Every member of the winning side is placed first (R20); the later out ranks higher.
    assert results[0]["place"] == results[2]["place"] == 1
    assert results[3]["place"] == 2 and results[1]["place"] == 3
    # XP inputs and XP: 200 for first place + 50 for surviving, from round 20 on (R20).
    assert results[0]["survived"] and not results[1]["survived"]
    assert results[0]["xp_breakdown"] == {"placement": 200, "groups": 0, "survival": 50}
    assert results[0]["xp"] == 250
    assert results[3]["xp"] == 100 and results[1]["xp"] == 60  # 2nd, 3rd; no survival
    assert results[0]["cards_won"] == 1 and results[1]["cards_won"] == 0


def test_results_are_null_while_the_game_runs(tmp_path: Path) -> None:
    status, output, _ = run(tmp_path, [{"setup": {"mode": "classic", "seats": 2}}])
    assert status == 0 and output is not None
    assert output["results"] is None and output["winning_side"] is None


def test_a_finished_classic_game_has_results_but_no_side(tmp_path: Path) -> None:
    status, output, _ = run(
        tmp_path,
        [{"setup": {"mode": "classic", "seats": 2}}, {"seat": 1, "type": "resign", "at": 1}],
    )
    assert status == 0 and output is not None
    assert output["winning_side"] is None
    assert [r["place"] for r in output["results"]] == [1, 2]
    # A game that ends before round 20 pays no XP (R20).
    assert all(r["xp"] == 0 for r in output["results"])


def test_an_unknown_command_field_is_refused_naming_it(tmp_path: Path) -> None:
    status, output, _ = run(
        tmp_path,
        [
            {"setup": {"mode": "classic", "seats": 2, "first_seat": 0}},
            {"seat": 0, "type": "roll", "squre": 5, "at": 1},
        ],
    )
    assert status == 0 and output is not None
    [error] = output["errors"]
    assert error["line"] == 2 and error["code"] == "command/malformed"
    assert "'squre'" in error["message"]
    assert output["events"] == []  # nothing was applied


@pytest.mark.parametrize(
    ("setup", "named"),
    [
        ({"squares": {"5": {"owner": 0, "buildings": 1}}}, ["square 5", "not a street"]),
        (
            {"squares": {"1": {"owner": 0, "buildings": 2}, "3": {"owner": 1}}},
            ["square 1", "whole brown group"],
        ),
        ({"squares": {"1": {"buildings": 1}, "3": {}}}, ["square 1", "no owner"]),
        (
            {"squares": {"1": {"owner": 0, "buildings": 1}, "3": {"owner": 0, "mortgaged": True}}},
            ["square 1", "mortgaged"],
        ),
        ({"squares": {"12": {"mortgaged": True}}}, ["square 12", "unowned"]),
        ({"seats": {"0": {"cash": -5}}}, ["seat 0", "negative cash"]),
        ({"seats": {"1": {"in_jail": True, "position": 12}}}, ["seat 1", "jail", "square 10"]),
        ({"pot": 500}, ["pot", "Fortuna"]),
    ],
    ids=[
        "dealership-buildings",
        "group-not-whole",
        "buildings-unowned",
        "group-mortgaged",
        "mortgaged-unowned",
        "negative-cash",
        "jail-away",
        "pot-outside-fortuna",
    ],
)
def test_impossible_positions_exit_2_naming_the_problem(
    tmp_path: Path, setup: dict[str, Any], named: list[str]
) -> None:
    status, output, err = run(
        tmp_path, [{"setup": {"mode": "classic", "seats": 2, "overrides": setup}}]
    )
    assert status == 2 and output is None
    for word in named:
        assert word in err, (word, err)


def test_a_pot_in_fortuna_and_a_jailed_seat_on_square_10_are_possible(tmp_path: Path) -> None:
    overrides = {"pot": 500, "seats": {"0": {"in_jail": True, "position": 10}}}
    status, output, _ = run(
        tmp_path, [{"setup": {"mode": "fortuna", "seats": 2, "overrides": overrides}}]
    )
    assert status == 0 and output is not None
    assert output["state"]["pot"] == 500 and output["state"]["seats"][0]["in_jail"]
