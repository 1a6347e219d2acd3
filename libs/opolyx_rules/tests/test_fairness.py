"""Dice anyone can verify (issue 16, docs/DICE.md): the seed against its commitment, every
chance outcome against the seed, and a whole game from its replay file, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opolyx_rules import (
    JackpotBet,
    State,
    apply,
    awaiting,
    event_to_json,
    legal_commands,
    new_game,
    simple_policy,
)
from opolyx_rules.cli import main
from opolyx_rules.commands import Command
from opolyx_rules.fairness import check_commitment, check_dice, verify_replay
from opolyx_testing.recorded_games import record_game


def _jackpot_player(state: State, seat: int) -> Command:
    """The simple player, except that it always plays the Jackpot when offered."""
    for command in legal_commands(state, seat):
        if isinstance(command, JackpotBet):
            return command
    return simple_policy(state, seat)


@pytest.fixture(scope="module")
def speed_game() -> Any:
    return record_game("speed", 4, 11)


def _file(game: Any) -> dict[str, Any]:
    data: dict[str, Any] = game.file.model_dump(mode="json")
    return data


def test_the_commitment_is_sha256_of_the_decimal_seed() -> None:
    assert check_commitment(42, "73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049")
    assert not check_commitment(
        43, "73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049"
    )


def test_an_honest_speed_game_passes_every_check(speed_game: Any) -> None:
    checks = verify_replay(_file(speed_game))
    assert [(c.name, c.ok) for c in checks] == [
        ("commitment", True),
        ("dice", True),
        ("start", True),
        ("replay", True),
    ]
    verdict = check_dice(
        speed_game.seed, speed_game.events, seats=4, first_seat=speed_game.initial.first_seat
    )
    # Every kind of draw of a Speed game was checked: seat, dice, Speed die and cards.
    assert verdict.ok and verdict.counts["first_seat"] == 1
    assert verdict.counts["dice"] > 100 and verdict.counts["speed_die"] > 50
    assert verdict.counts["card"] > 5


def test_jackpot_dice_are_checked_too() -> None:
    # A game whose players bet whenever offered: its Jackpot dice come from the seed.
    state = new_game("classic", 2, 3)
    events: list[dict[str, Any]] = []
    now = 0.0
    while not state.finished and len(events) < 40_000:
        pending = state.pending
        seat = pending.seat if pending is not None and not state.offers else awaiting(state)[0]
        now += 1.0
        state, produced = apply(state, _jackpot_player(state, seat), now)
        events.extend(json.loads(json.dumps([event_to_json(e) for e in produced])))
    verdict = check_dice(3, events, seats=2, first_seat=new_game("classic", 2, 3).first_seat)
    assert verdict.ok and verdict.counts["jackpot_die"] > 0
    played = next(i for i, e in enumerate(events) if e["type"] == "jackpot_played")
    events[played] = {**events[played], "die": events[played]["die"] % 6 + 1}
    bad = check_dice(3, events, seats=2, first_seat=new_game("classic", 2, 3).first_seat)
    assert not bad.ok and bad.event_index == played and "Jackpot die" in bad.message


def test_a_tampered_seed_fails_the_commitment_and_the_dice(speed_game: Any) -> None:
    data = _file(speed_game)
    data["seed"] = speed_game.seed + 1
    checks = {c.name: c for c in verify_replay(data)}
    assert not checks["commitment"].ok
    assert not checks["dice"].ok


def test_a_tampered_die_fails_naming_the_event(speed_game: Any) -> None:
    data = _file(speed_game)
    flat = [(b, i) for b in data["batches"] for i in range(len(b["events"]))]
    rolls = [(b, i) for b, i in flat if b["events"][i]["type"] == "dice_rolled"]
    batch, index = rolls[10]
    event = batch["events"][index]
    event["white"] = [event["white"][0] % 6 + 1, event["white"][1]]
    checks = {c.name: c for c in verify_replay(data)}
    assert checks["commitment"].ok
    assert not checks["dice"].ok and "dice_rolled" in checks["dice"].message
    assert not checks["replay"].ok
    events = [e for b in data["batches"] for e in b["events"]]
    verdict = check_dice(speed_game.seed, events, seats=4, first_seat=data["initial"]["first_seat"])
    assert verdict.event_index == events.index(event)


def test_a_tampered_card_fails(speed_game: Any) -> None:
    events = [dict(e) for e in speed_game.events]
    drawn = next(i for i, e in enumerate(events) if e["type"] == "card_drawn")
    events[drawn]["card"] = events[drawn]["card"] % 16 + 1
    verdict = check_dice(speed_game.seed, events, seats=4, first_seat=speed_game.initial.first_seat)
    assert not verdict.ok and verdict.event_index == drawn


def test_a_tampered_first_seat_fails(speed_game: Any) -> None:
    first = speed_game.initial.first_seat
    verdict = check_dice(speed_game.seed, speed_game.events, seats=4, first_seat=(first + 1) % 4)
    assert not verdict.ok and "to start" in verdict.message


def test_changed_events_that_keep_the_dice_fail_the_replay(speed_game: Any) -> None:
    data = _file(speed_game)
    for batch in data["batches"]:
        for event in batch["events"]:
            if event["type"] == "transfer" and event["reason"] == "rent":
                event["amount"] += 1
                break
        else:
            continue
        break
    checks = {c.name: c for c in verify_replay(data)}
    assert checks["dice"].ok and not checks["replay"].ok


def test_the_verify_command_exits_0_1_2(
    speed_game: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_file(speed_game)))
    assert main(["verify", str(good)]) == 0
    assert "the game is fair" in capsys.readouterr().out
    tampered = _file(speed_game)
    tampered["seed"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    assert main(["verify", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "FAIL commitment" in captured.out and "verification FAILED" in captured.err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["verify", str(broken)]) == 2
    assert main(["verify", str(tmp_path / "missing.json")]) == 2
    unrevealed = _file(speed_game)
    del unrevealed["seed"]
    (tmp_path / "open.json").write_text(json.dumps(unrevealed))
    assert main(["verify", str(tmp_path / "open.json")]) == 1
