"""Reading the board and watching games, in a real browser against the real services, at the
desktop and the phone size: running games listed with a Watch button, the table's mode,
round, limit, rent tax and Fortune Pot, squares identifiable on a phone with the decision
and the latest log line in view, owners readable on any colour, motion that follows the
live events (and stops under reduced motion), and net worth and the trade verdict taken
from the server."""

from __future__ import annotations

import contextlib
import re
import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import FloatRect, Page, ViewportSize, expect

from .client_steps import SEQ, sign_in, table_seq
from .conftest import DESKTOP, PHONE, PageWatch, on_desktop_and_phone

MY_DECISIONS = ", ".join(
    f"#decision [data-cmd={kind}]"
    for kind in ("roll", "buy", "pay", "jackpot_decline", "bus", "teleport", "pass")
)


def act(page: Page, selector: str) -> None:
    """Click a decision and wait for the state after it (predicates are functions: the
    page's CSP allows no string evaluation)."""
    before = table_seq(page)
    page.click(selector)
    page.wait_for_function(f"() => {SEQ} > {before}")


def play_until(page: Page, condition: str, timeout: float = 90) -> None:
    """Take my decisions as they come (roll, buy, pay...) until `condition` holds."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({condition})"):
        assert time.monotonic() < deadline, f"never: {condition}"
        if page.locator(MY_DECISIONS).count():
            with contextlib.suppress(PlaywrightError):  # the decision timed out meanwhile
                act(page, f"{MY_DECISIONS} >> nth=0")
        else:
            time.sleep(0.2)


def start_with_bots(page: Page, mode: str = "classic", bots: int = 1) -> None:
    page.select_option("#create-mode", mode)
    page.select_option("#create-seats", str(bots + 1))
    page.click("#create-room")
    members = page.locator("#members li")
    for n in range(bots):
        page.click("#add-bot")
        expect(members).to_have_count(n + 2)
    page.click("#start-game")
    expect(page.locator("#view-table")).to_be_visible()
    expect(page.locator("#board .sq")).to_have_count(40)


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return found


@on_desktop_and_phone(DESKTOP)
def test_a_running_public_game_is_watched_from_the_lobby(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    player = pages.open()
    sign_in(player, "Runner")
    start_with_bots(player, bots=2)
    play_until(player, "window.opolyx.app.table.events.length > 5")
    table_id = player.evaluate("() => window.opolyx.app.table.id")

    viewer = pages.open(viewport)
    sign_in(viewer, "Onlooker")
    row = viewer.locator(f"#games li[data-table='{table_id}']")
    expect(row).to_be_visible()
    expect(row).to_contain_text("Runner")
    row.locator("button[data-watch]").click()
    expect(viewer.locator("#view-table")).to_be_visible()
    expect(viewer.locator("#turn .spectating")).to_be_visible()
    # the log shows what happened before the spectator came
    expect(viewer.locator("#log li").first).to_be_visible()
    assert viewer.locator("#log li").count() > 0
    expect(viewer.locator("#open-trade")).to_be_disabled()


@on_desktop_and_phone(DESKTOP)
def test_the_table_reads_at_a_glance_on_both_sizes(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    sign_in(page, "Reader")
    start_with_bots(page)
    glance = page.locator("#glance")
    expect(glance).to_contain_text("Classic")
    expect(glance).to_contain_text(re.compile(r"Round \d+ of 500"))
    expect(glance).to_contain_text("Rent tax 0%")
    # net worth is the table's (rules' net_worths), shown for every seat
    worths = page.evaluate("() => window.opolyx.app.table.view.net_worth")
    assert len(worths) == 2 and all(w > 0 for w in worths)
    expect(page.locator("#players li").first).to_contain_text(f"{worths[0]:,}")
    assert page.evaluate("() => typeof window.opolyx.fairness") == "undefined"

    # buy something: its owner badge carries the seat's number, ringed in white
    play_until(page, "document.querySelector('#board .owner')", timeout=120)
    badge = page.locator("#board .owner").first
    assert badge.inner_text() in {"1", "2"}
    ring = badge.evaluate("(el) => getComputedStyle(el).borderTopColor")
    assert ring == "rgb(255, 255, 255)"

    # the latest log line stands by the decision (both read at once: a bot's move between
    # two reads makes a new latest line)
    expect(page.locator("#last-log")).to_be_visible()
    last, latest = page.evaluate(
        "() => [document.querySelector('#last-log').innerText,"
        " document.querySelector('#log li').innerText]"
    )
    assert last == latest
    if viewport == PHONE:
        # squares carry short labels on the small board
        labels = page.evaluate(
            "() => [...document.querySelectorAll('#board .sq:not(.corner)')]"
            ".map((c) => getComputedStyle(c, '::after').content)"
        )
        assert len(labels) == 36 and all(label not in ("none", '""', "") for label in labels)
        # the board, the decision and the latest line are all in view together
        board = box(page, "#board")
        page.locator(MY_DECISIONS).first.wait_for(timeout=90_000)
        decision = box(page, MY_DECISIONS)
        latest = box(page, "#last-log")
        height = viewport["height"]
        assert board["y"] >= 0 and board["y"] + board["height"] <= height
        for part in (decision, latest):
            assert (
                board["y"] + board["height"] <= part["y"] and part["y"] + part["height"] <= height
            )
        # tap a square for its card
        page.locator("#board [data-square='39']").click()
        expect(page.locator("#property-dialog")).to_be_visible()


@on_desktop_and_phone(DESKTOP)
def test_fortuna_shows_its_pot_and_names_and_halal_has_no_jackpot(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    fortuna = pages.open(viewport)
    sign_in(fortuna, "Fortunate")
    start_with_bots(fortuna, mode="fortuna")
    expect(fortuna.locator("#glance .glance-pot")).to_contain_text("Fortune Pot")
    name = fortuna.locator("#board [data-square='1']").get_attribute("aria-label") or ""
    assert name.startswith("Jinlong Tea House"), name

    halal = pages.open(viewport)
    sign_in(halal, "Modest")
    start_with_bots(halal, mode="halal")
    expect(halal.locator("#glance")).to_contain_text("Halal")
    square = halal.locator("#board [data-square='20']")
    expect(square).not_to_contain_text(re.compile("jackpot", re.IGNORECASE))
    assert "jackpot" not in (square.get_attribute("aria-label") or "").lower()
    assert halal.locator("#glance .glance-pot").count() == 0


@on_desktop_and_phone(DESKTOP)
def test_motion_follows_live_events_and_stops_for_reduced_motion(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    moving = pages.open(viewport)
    sign_in(moving, "Mover")
    assert moving.evaluate("() => document.documentElement.dataset.motion") == "on"
    start_with_bots(moving)
    play_until(moving, "window.opolyx.motion.dice >= 1 && window.opolyx.motion.walks >= 1")

    still = pages.open(viewport)
    still.emulate_media(reduced_motion="reduce")
    still.reload()
    sign_in(still, "Sitter")
    assert still.evaluate("() => document.documentElement.dataset.motion") == "off"
    start_with_bots(still)
    play_until(
        still, "window.opolyx.app.table.events.filter((e) => e.type === 'moved').length >= 2"
    )
    counts = still.evaluate("() => window.opolyx.motion")
    assert (counts["dice"], counts["walks"], counts["money"]) == (0, 0, 0)
    assert still.locator(".walker").count() == 0
    duration = still.evaluate(
        "() => getComputedStyle(document.querySelector('.offline-spinner')).animationDuration"
    )
    assert duration == "0s"
