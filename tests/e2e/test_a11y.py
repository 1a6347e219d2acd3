"""Accessibility: axe-core, fetched from the npm registry on first use into .cache/ (so a
clean clone needs nothing installed by hand), injected into the real pages by Playwright;
the lobby and the table have no serious or critical violation, in English and in Arabic,
at both viewports."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize

from .client_steps import sign_in, start_game_with_bots
from .conftest import ROOT, PageWatch, on_desktop_and_phone

AXE_VERSION = "4.10.3"
AXE_DIR = ROOT / ".cache" / "axe-core" / AXE_VERSION
BLOCKING = {"serious", "critical"}


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe.min.js of a pinned axe-core, packed by npm from the registry once per machine."""
    script = AXE_DIR / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is missing: install Node.js (Debian: apt-get install npm)")
        download = AXE_DIR / "download"
        download.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", str(download)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        tarball = next(download.glob("axe-core-*.tgz"))
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/axe.min.js")
            assert member is not None
            data = member.read()
        script.write_bytes(data)
        shutil.rmtree(download)
    return script.read_text(encoding="utf-8")


def violations(page: Page, axe: str) -> list[str]:
    """Serious and critical axe findings on the page as it is now."""
    # evaluated by the debugger protocol: the page's CSP forbids inline script tags
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe)
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} - "
        + "; ".join(
            f"{n['target']} {n['html'][:90]} {n.get('failureSummary', '')[-120:]}"
            for n in v["nodes"][:4]
        )
        for v in found
        if v.get("impact") in BLOCKING
    ]


@pytest.mark.parametrize("lang", ["en", "ar"])
@on_desktop_and_phone()
def test_lobby_and_table_have_no_serious_violation(
    pages: PageWatch, axe_source: str, viewport: ViewportSize, lang: str
) -> None:
    page = pages.open(viewport, path=f"/?lang={lang}")
    assert violations(page, axe_source) == [], "sign-in"
    sign_in(page, f"Ada{viewport['width']}{lang}")
    assert violations(page, axe_source) == [], "lobby"
    start_game_with_bots(page, bots=2)
    assert violations(page, axe_source) == [], "table"
