"""The autopilot in a real browser, at both viewports: the player's socket drops (the page
stays open, its websockets refused), a spectator sees the seat's autopilot badge and its
turns in the log; the page reconnects by itself, the seat is the player's again and they
play; "autopilot for me" switches it on and off.

The system runs as `make run` runs it (real pace), with a grace period of 2 s instead of
30 s so the test does not sit waiting (its own system, started for this module)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, ViewportSize, WebSocketRoute, expect

from .client_steps import sign_in, start_game_with_bots, table_seq
from .conftest import (
    DESKTOP,
    ROOT,
    LocalSystem,
    PageWatch,
    local_system,
    on_desktop_and_phone,
)

GRACE_SECONDS = "2"
AUTOPILOT_TIMEOUT_MS = 40_000
# What the player answers when it is their turn again (whatever the autopilot left open).
MOVES = ("roll", "decline", "pass", "pay", "jackpot_decline", "bus", "teleport", "bid")


def make_a_move(page: Page, timeout: float = 60) -> None:
    """The player's next decision, clicked; returns once the page shows the state after it.
    (Polled from Python: the page's CSP refuses the string predicates of wait_for_function.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for move in MOVES:
            button = page.locator(f"#decision [data-cmd={move}]:enabled")
            if button.count():
                before = table_seq(page)
                button.first.click()
                while table_seq(page) <= before:
                    assert time.monotonic() < deadline, f"{move} was not applied"
                    time.sleep(0.05)
                return
        time.sleep(0.1)
    raise AssertionError("no decision came: " + page.locator("#center").inner_text())


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """A whole local opolyx (scripts/run_local.py) whose tables wait 2 s for a dropped player."""
    data_dir = tmp_path_factory.mktemp("opolyx-autopilot")
    with local_system(data_dir, {"OPOLYX_TABLE__AUTOPILOT_GRACE": GRACE_SECONDS}) as system:
        yield system


class Network:
    """The page's websockets: passed through, or refused while "down"."""

    def __init__(self, page: Page) -> None:
        self.down = False
        self.page = page
        page.route_web_socket(re.compile(r"/ws(\?[^/]*)?$"), self._route)

    def _route(self, socket: WebSocketRoute) -> None:
        if self.down:
            socket.close()
        else:
            socket.connect_to_server()

    def drop(self) -> None:
        self.down = True
        self.page.evaluate("window.opolyx.app.conn.socket.close()")
        expect(self.page.locator("#conn")).not_to_have_text("online")

    def restore(self) -> None:
        self.down = False


@on_desktop_and_phone(DESKTOP)
def test_a_dropped_player_is_played_by_the_autopilot_and_gets_the_seat_back(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    player = pages.open(viewport)
    network = Network(player)
    sign_in(player, "Quinn")
    start_game_with_bots(player, bots=1)
    table_id = player.evaluate("window.opolyx.app.table.id")
    my_seat = player.evaluate("window.opolyx.app.table.seat")
    toggle = player.locator("#autopilot-toggle")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-pressed", "false")

    viewer = pages.open(viewport, path=f"/?watch={table_id}")
    viewer.fill("#signin-name", "Rosa")
    viewer.click("#signin-go")
    expect(viewer.locator("#view-table")).to_be_visible()
    expect(viewer.locator("#autopilot-toggle")).to_be_hidden()  # spectators have no seat

    # The player's connection drops; after the grace period everyone sees the autopilot.
    network.drop()
    seat_row = viewer.locator(f"#players li[data-seat='{my_seat}']")
    expect(seat_row.locator(".autopilot-badge")).to_have_text(
        "Autopilot", timeout=AUTOPILOT_TIMEOUT_MS
    )
    expect(viewer.locator("#log")).to_contain_text("Quinn is away: the autopilot plays for them")
    expect(viewer.locator("#log li.by-autopilot").first).to_contain_text(
        "(autopilot)", timeout=AUTOPILOT_TIMEOUT_MS
    )

    # Back: the page reconnects by itself and the seat is the player's again at once.
    network.restore()
    expect(player.locator("#conn")).to_have_text("online", timeout=15_000)
    expect(player.locator(f"#players li[data-seat='{my_seat}'] .autopilot-badge")).to_have_count(0)
    expect(seat_row.locator(".autopilot-badge")).to_have_count(0)
    expect(player.locator("#log")).to_contain_text("Quinn (you) is back and plays again")
    expect(player.locator("#log li.by-autopilot").first).to_be_attached()
    make_a_move(player)
    expect(player.locator(f"#players li[data-seat='{my_seat}'] .autopilot-badge")).to_have_count(0)

    # The player may hand the seat to the autopilot themselves, and take it back.
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(seat_row.locator(".autopilot-badge")).to_have_count(1)
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(seat_row.locator(".autopilot-badge")).to_have_count(0)
    player.screenshot(path=str(ROOT / "test-artifacts" / f"autopilot-{viewport['width']}.png"))
