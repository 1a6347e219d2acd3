"""The browser's "verify fairness" check (static/js/replay/fairness.js) agrees with the
rules library: run under Node on games the rules library played, honest and tampered."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from opolyx_contracts.client_constants import contract_constants
from opolyx_gateway.settings import GatewayOptions
from opolyx_testing.recorded_games import record_game

NODE = shutil.which("node")
FAIRNESS = Path(GatewayOptions().static_dir) / "js" / "replay" / "fairness.js"

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js runs the client's module here")


def _verify(tmp_path: Path, file: dict[str, Any]) -> dict[str, Any]:
    data = tmp_path / "replay.json"
    data.write_text(json.dumps(file))
    script = tmp_path / "check.mjs"
    script.write_text(
        f'import {{ readFileSync }} from "node:fs";\n'
        f'import {{ verifyFile }} from "{FAIRNESS.as_uri()}";\n'
        f'const file = JSON.parse(readFileSync("{data}", "utf8"));\n'
        f"const types = {json.dumps(contract_constants()['EVENT_TYPES'])};\n"
        "console.log(JSON.stringify(await verifyFile(file, types)));\n"
    )
    assert NODE is not None
    done = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_an_honest_game_with_a_seed_beyond_53_bits_verifies(tmp_path: Path) -> None:
    seed = 2**62 + 123_456_789  # not exactly representable as a JavaScript number
    game = record_game("speed", 3, seed)
    result = _verify(tmp_path, game.file.model_dump(mode="json"))
    assert result["committed"] and result["commitment"] == game.initial.seed_commitment
    assert result["dice"]["ok"] and result["dice"]["counts"]["speed_die"] > 0
    assert result["dice"]["counts"]["first_seat"] == 1 and result["dice"]["counts"]["card"] > 0


def test_a_tampered_seed_or_die_fails_in_the_browser_check(tmp_path: Path) -> None:
    game = record_game("classic", 2, 5)
    file = game.file.model_dump(mode="json")
    tampered_seed = dict(file, seed=6, seed_text="6")
    result = _verify(tmp_path, tampered_seed)
    assert not result["committed"] and not result["dice"]["ok"]
    tampered_die = json.loads(json.dumps(file))
    rolls = [e for b in tampered_die["batches"] for e in b["events"] if e["type"] == "dice_rolled"]
    rolls[3]["white"][1] = rolls[3]["white"][1] % 6 + 1
    result = _verify(tmp_path, tampered_die)
    assert result["committed"] and not result["dice"]["ok"]
    assert result["dice"]["kind"] == "dice" and result["dice"]["index"] > 0
