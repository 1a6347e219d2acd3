"""Browser end-to-end tests: the whole system started by ``scripts/run_local.py`` (real
nats-server, table, lobby, bots and gateway), driven in Debian's headless Chromium through
Playwright. A failing test leaves a screenshot in ``test-artifacts/``."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opolyx_testing.local_layout import LocalLayout
from playwright.sync_api import Browser, ConsoleMessage, Page, ViewportSize, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("OPOLYX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The browser sizes the client is checked at, defined here only: every test file takes them
# (and the marks below) from this module.
PHONE: ViewportSize = {"width": 390, "height": 844}
WIDE: ViewportSize = {"width": 1366, "height": 860}
"""The desktop size the issues name."""
DESKTOP: ViewportSize = {"width": 1280, "height": 860}
"""The older tests' desktop size (their screenshots and layout checks were written at it)."""


def on_desktop_and_phone(
    desktop: ViewportSize = WIDE, *, ids_by_size: bool = False
) -> pytest.MarkDecorator:
    """Runs a test twice, at ``desktop`` and at PHONE, passed as its ``viewport`` argument;
    the test ids are ``desktop``/``phone``, or the sizes (``1366x860``) with ``ids_by_size``."""
    sizes = [desktop, PHONE]
    ids = [f"{s['width']}x{s['height']}" for s in sizes] if ids_by_size else ["desktop", "phone"]
    return pytest.mark.parametrize("viewport", sizes, ids=ids)


VIEWPORTS = on_desktop_and_phone(ids_by_size=True)
"""A test run at both sizes the client is checked at; it takes a ``viewport`` argument."""


@dataclass(frozen=True)
class LocalSystem:
    """A running local opolyx: its URL, and where it keeps its state (its nats-server's
    ports and the roles' passwords among them)."""

    url: str
    layout: LocalLayout


@contextlib.contextmanager
def local_system(data_dir: Path, env: dict[str, str] | None = None) -> Iterator[LocalSystem]:
    """A whole local opolyx started the way ``make run`` starts it (``env`` adds settings);
    stopped with Ctrl-C at the end."""
    proc = subprocess.Popen(
        [
            *(sys.executable, str(ROOT / "scripts" / "run_local.py")),
            *("--port", "0", "--data-dir", str(data_dir), "--bots", "1"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    seen: list[str] = []
    url = None
    for line in proc.stdout:
        seen.append(line)
        match = re.search(r"open (http://\S+)", line)
        if match:
            url = match.group(1)
            break
    if url is None:
        proc.wait(10)
        pytest.fail("the local system did not start:\n" + "".join(seen))
    try:
        yield LocalSystem(url, LocalLayout(data_dir))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        proc.stdout.close()


@pytest.fixture(scope="session")
def shared_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """A whole local opolyx, started the way ``make run`` starts it, shared by the session."""
    with local_system(tmp_path_factory.mktemp("opolyx-run")) as system:
        yield system


@pytest.fixture(scope="module")
def local(shared_system: LocalSystem) -> LocalSystem:
    """The local opolyx a module's tests run against: the shared one, unless the module
    overrides this fixture with one of its own (other settings, or one it may break)."""
    return shared_system


@pytest.fixture(scope="module")
def system_url(local: LocalSystem) -> str:
    return local.url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make e2e-deps` (installs Debian's chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


class PageWatch:
    """Pages opened by one test, with every console error and uncaught exception."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.pages: list[Page] = []
        self.errors: list[str] = []

    def open(
        self, viewport: ViewportSize = DESKTOP, path: str = "/", locale: str | None = None
    ) -> Page:
        """A new page at ``path``; ``locale`` sets the browser's language
        (navigator.languages), else the browser's own default."""
        context = self.browser.new_context(viewport=viewport, locale=locale)
        page = context.new_page()

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.errors.append(f"console: {message.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.set_default_timeout(20_000)
        page.goto(self.base_url.rstrip("/") + path)
        self.pages.append(page)
        return page


@pytest.fixture
def pages(browser: Browser, system_url: str, request: pytest.FixtureRequest) -> Iterator[PageWatch]:
    watch = PageWatch(browser, system_url)
    yield watch
    if request.node.stash.get(_FAILED, False):
        ARTIFACTS.mkdir(exist_ok=True)
        for i, page in enumerate(watch.pages):
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
            page.screenshot(path=str(ARTIFACTS / f"{name}-{i}.png"), full_page=True)
    for page in watch.pages:
        page.context.close()
    assert not watch.errors, "errors in the browser console:\n" + "\n".join(watch.errors)
