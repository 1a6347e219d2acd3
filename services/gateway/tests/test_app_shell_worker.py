"""The service worker's shell and version (app_shell), and the table facts the client
looks up instead of computing rules (constants: the rent-tax schedule, the pot modes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import opolyx_rules
from client_files import STATIC
from opolyx_gateway.app_shell import FILES_MARK, VERSION_MARK, service_worker
from opolyx_gateway.constants import client_constants, rent_tax_schedule

GENERATED = {"/js/constants.js": "export const X = 1;\n", "/manifest.webmanifest": "{}\n"}
"""What the gateway serves from its memory (constants, the app's manifest)."""


def _shell_list(text: str) -> list[str]:
    start = text.index("const SHELL = ") + len("const SHELL = ")
    return list(json.loads(text[start : text.index(";", start)]))


def test_the_worker_caches_every_shell_file_and_names_its_version(tmp_path: Path) -> None:
    worker = service_worker(STATIC, GENERATED)
    assert VERSION_MARK not in worker.text and FILES_MARK not in worker.text
    assert f'const VERSION = "{worker.version}";' in worker.text
    urls = _shell_list(worker.text)
    assert urls == list(worker.urls)
    for url in (
        "/",
        "/js/constants.js",
        "/index.html",
        "/app.css",
        "/js/main.js",
        "/js/pwa.js",
        "/manifest.webmanifest",
        "/icons/icon-192.png",
        "/i18n/index.json",
    ):
        assert url in urls, url
    assert "/sw.js" not in urls
    for url in urls[1 + len(GENERATED) :]:
        assert (STATIC / url.lstrip("/")).is_file(), url


def test_a_changed_file_or_constant_is_a_new_version(tmp_path: Path) -> None:
    copy = tmp_path / "static"
    shutil.copytree(STATIC, copy)
    first = service_worker(copy, GENERATED)
    assert service_worker(copy, GENERATED).version == first.version
    changed = {**GENERATED, "/js/constants.js": "export const X = 2;\n"}
    assert service_worker(copy, changed).version != first.version
    (copy / "app.css").write_text((copy / "app.css").read_text() + "\n/* new */\n")
    assert service_worker(copy, GENERATED).version != first.version


def test_the_rent_tax_schedule_is_the_rules_share_round_by_round() -> None:
    schedule = rent_tax_schedule()
    for name, mode in opolyx_rules.MODES.items():
        steps = schedule[name]
        if mode.rent_tax_start is None:
            assert steps == []
            continue
        assert mode.rent_tax_full is not None, f"{name} starts a rent tax, so it has a full one"
        assert steps[0][0] == mode.rent_tax_start
        for round_no in (mode.rent_tax_start, mode.rent_tax_full, mode.rent_tax_full + 50):
            share = max(pct for start, pct in steps if start <= round_no)
            assert share == opolyx_rules.rent_tax_withheld(mode, round_no, 10_000) / 100
    assert client_constants()["POT_MODES"] == ["fortuna"]
