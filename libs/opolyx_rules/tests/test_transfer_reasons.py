"""`TRANSFER_REASONS` is exactly what the rules send: every reason spelled in the library's
source (a `Transfer(...)`, `ctx.emit(Transfer, ...)` or a payment's `require(...)`), and
every transfer of played games."""

from __future__ import annotations

import ast
from pathlib import Path

import opolyx_rules
import pytest
from opolyx_rules import MODES, TRANSFER_REASONS
from opolyx_rules.events import Transfer
from opolyx_rules.simulate import play_game


def reasons_in_source() -> set[str]:
    """Literal reasons at the reason position of `Transfer(frm, to, amount, reason)`,
    `emit(Transfer, frm, to, amount, reason)` and `require(ctx, seat, amount, creditors,
    reason)` calls, or their `reason=` keyword."""
    found: set[str] = set()
    for path in sorted(Path(opolyx_rules.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            args: list[ast.expr] = list(node.args)
            if name == "emit" and args and getattr(args[0], "id", "") == "Transfer":
                name, args = "Transfer", args[1:]  # ctx.emit(Transfer, frm, to, amount, reason)
            position = {"Transfer": 3, "require": 4}.get(name)
            if position is None:
                continue
            args += [k.value for k in node.keywords if k.arg == "reason"]
            candidates = [args[position]] if len(args) > position else args[-1:]
            for arg in candidates:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
    return found


def test_the_list_names_every_reason_spelled_in_the_source_and_no_other() -> None:
    assert set(TRANSFER_REASONS) == reasons_in_source()
    assert len(set(TRANSFER_REASONS)) == len(TRANSFER_REASONS)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_transfer_of_played_games_carries_a_listed_reason(mode: str) -> None:
    seen: set[str] = set()
    for seed in range(3):
        game = play_game(mode, 4, seed, keep_events=True)
        seen |= {e.reason for e in game.events if isinstance(e, Transfer)}
    assert seen  # games move money
    assert seen <= set(TRANSFER_REASONS), seen - set(TRANSFER_REASONS)
