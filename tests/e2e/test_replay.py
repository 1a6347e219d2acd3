"""Replays in a real browser against the real system (issue 16): a game played through
the client, then its replay page at both viewports: open, scrub and step, the analytics,
the fairness check (and its failure for a tampered seed), and "play from here"."""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Page, Route, ViewportSize, expect

from .client_steps import LANGUAGES, message, screenshot, sign_in, start_game_with_bots
from .conftest import DESKTOP, PHONE, PageWatch, on_desktop_and_phone

WAIT_S = 60.0
REPLAY_LOG_TURNS = 6
"""How many turns before the position the replay's log shows (LOG_STEPS in replay/main.js)."""
SEQ = (
    "(window.opolyx.app.table && window.opolyx.app.table.view"
    " ? window.opolyx.app.table.view.seq : 0)"
)
# What this seat answers to each decision (the client's data-cmd buttons).
ANSWERS = {
    "roll": "roll",
    "buy": "buy",
    "auction": "pass",
    "payment": "pay",
    "jackpot": "jackpot_decline",
    "bus": "bus",
    "teleport": "teleport",
}


def poll(page: Page, expression: str, arg: Any = None, timeout_s: float = WAIT_S) -> Any:
    """The expression's value once truthy (page.evaluate: the page's CSP allows no eval,
    which `wait_for_function` needs)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = page.evaluate(expression, arg)
        if value:
            return value
        assert time.monotonic() < deadline, f"never true: {expression}"
        page.wait_for_timeout(100)


def my_pending(page: Page) -> str | None:
    kind: str | None = page.evaluate(
        "() => { const t = window.opolyx.app.table; const p = t && t.view && t.view.state.pending;"
        " return p && p.seat === t.seat ? p.kind : null; }"
    )
    return kind


def rolls_again(page: Page) -> bool:
    """This turn rolled doubles: the roll now pending is the same turn's."""
    doubles: int = page.evaluate("() => window.opolyx.app.table.view.state.doubles")
    return doubles > 0


def play_a_turn(page: Page) -> None:
    """Wait for this seat's roll, roll, and answer what follows until the turn passes (a
    roll again after doubles is the same turn: a replay's steps are turns)."""
    poll(
        page,
        "() => { const t = window.opolyx.app.table; const p = t && t.view && t.view.state.pending;"
        " return p && p.seat === t.seat && p.kind === 'roll'; }",
    )
    rolled = False
    for _ in range(40):
        kind = my_pending(page)
        if kind is None or (kind == "roll" and rolled and not rolls_again(page)):
            return
        button = page.locator(f"#decision [data-cmd={ANSWERS[kind]}]:enabled").first
        if not button.count():
            page.wait_for_timeout(150)
            continue
        before = int(page.evaluate(SEQ))
        button.click()
        rolled = rolled or kind == "roll"
        poll(page, f"() => {SEQ} > {before}")


def finished_game(
    pages: PageWatch, name: str, viewport: ViewportSize, turns: int = 2
) -> tuple[Page, str]:
    """A two-seat game against a bot, `turns` of this player's turns played, then resigned:
    a finished game (one seat left, so it ends there)."""
    page = pages.open(viewport)
    sign_in(page, name)
    start_game_with_bots(page, bots=1)
    for _ in range(turns):
        play_a_turn(page)
    table_id = str(page.evaluate("window.opolyx.app.watching"))
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#resign").click()
    poll(page, "() => window.opolyx.app.table.view.state.finished === true")
    return page, table_id


def open_replay(page: Page, table_id: str, hash_: str = "") -> dict[str, Any]:
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(page.url))
    page.goto(f"{origin}/replay.html?table={table_id}{hash_}")
    expect(page.locator("#replay")).to_have_attribute("aria-busy", "false")
    summary: dict[str, Any] = page.evaluate("window.opolyx.replay.summary")
    return summary


def scrub_to(page: Page, step: int) -> None:
    page.locator("#rp-slider").evaluate(
        "(el, step) => { el.value = String(step); el.dispatchEvent(new Event('input')); }", step
    )
    expect(page.locator("#replay")).to_have_attribute("data-step", str(step))


def shown_state(page: Page, step: int) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        "(step) => window.opolyx.replay.timeline.entry(step).state", step
    )
    return state


def assert_board_shows(page: Page, state: dict[str, Any]) -> None:
    """The pawns and owners on the board are the state's."""
    for seat in state["seats"]:
        if seat["out"]:
            continue
        cell = page.locator(f"#rp-board [data-square='{seat['position']}']")
        expect(cell.locator(f".pawn.c{seat['seat']}")).to_have_count(1)
    for square in state["squares"]:
        if square["owner"] is not None:
            owner = page.locator(f"#rp-board [data-square='{square['square']}'] .owner")
            expect(owner).to_have_text(str(square["owner"] + 1))


@on_desktop_and_phone(DESKTOP)
def test_a_replay_opens_scrubs_steps_and_shows_analytics(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page, table_id = finished_game(pages, "Rewind", viewport)
    summary = open_replay(page, table_id)
    steps = summary["steps"]
    assert steps >= 4 and summary["timeline"][-1]["end"]
    expect(page.locator("#rp-slider")).to_have_attribute("max", str(steps - 1))
    expect(page.locator("#rp-commitment")).to_have_text(summary["seed_commitment"])
    assert_board_shows(page, shown_state(page, 0))
    # Scrub to the end: the game is over there, the resignation is in the log.
    scrub_to(page, steps - 1)
    expect(page.locator("#rp-position")).to_contain_text(re.compile(r"Game over"))
    expect(page.locator("#rp-fork")).to_be_disabled()
    assert_board_shows(page, shown_state(page, steps - 1))
    # Step back one turn at a time with the buttons.
    page.click("#rp-prev")
    expect(page.locator("#replay")).to_have_attribute("data-step", str(steps - 2))
    assert_board_shows(page, shown_state(page, steps - 2))
    page.click("#rp-first")
    expect(page.locator("#replay")).to_have_attribute("data-step", "0")
    # Play runs through the steps by itself.
    page.select_option("#rp-speed", "16")
    page.click("#rp-play")
    poll(page, "() => Number(document.querySelector('#replay').dataset.step) >= 2")
    page.click("#rp-play")
    expect(page.locator("#rp-log li").first).to_be_visible()

    page.click("#tab-analytics")
    expect(page.locator("#view-analytics")).to_be_visible()
    expect(page.locator("#view-replay")).to_be_hidden()
    landings = summary["analytics"]["landings"]
    shown = page.locator("#rp-heat [data-landings]").evaluate_all(
        "cells => cells.map(c => Number(c.dataset.landings))"
    )
    assert sum(shown) == sum(landings) > 0
    expect(page.locator("#rp-worth polyline")).to_have_count(len(summary["seats"]))
    expect(page.locator("#rp-highlights li")).to_have_count(3)
    expect(page.locator("#rp-rent tr")).to_have_count(len(summary["seats"]) + 1)


@on_desktop_and_phone(DESKTOP)
def test_the_fairness_view_passes_and_fails_for_a_tampered_seed(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page, table_id = finished_game(pages, "Fair", viewport)
    open_replay(page, table_id, "#verify")
    expect(page.locator("#rp-v-verdict")).to_have_attribute("data-ok", "true")
    expect(page.locator("#rp-v-checks li.ok")).to_have_count(2)
    expect(page.locator("#rp-download")).to_have_attribute("href", f"/api/replays/{table_id}/file")

    def tamper(route: Route) -> None:
        response = route.fetch()
        body = json.loads(response.text())
        body["seed_text"] = str(int(body["seed_text"]) + 1)
        body["seed"] = int(body["seed_text"])
        route.fulfill(response=response, body=json.dumps(body))

    page.route(re.compile(rf".*/api/replays/{table_id}$"), tamper)
    page.reload()
    expect(page.locator("#rp-v-verdict")).to_have_attribute("data-ok", "false")
    expect(page.locator("#rp-v-checks li.bad").first).to_contain_text("does not hash")
    expect(page.locator("#rp-v-checks li.bad")).to_have_count(3)


@on_desktop_and_phone(DESKTOP)
def test_play_from_here_forks_a_practice_game_and_plays_a_turn(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page, table_id = finished_game(pages, "Forker", viewport)
    summary = open_replay(page, table_id)
    me = next(s["seat"] for s in summary["seats"] if not s["bot"])
    # A turn of this player's: the practice game waits for them there (a bot would move on).
    step = next(m["step"] for m in summary["timeline"][1:] if m["seat"] == me and not m["end"])
    scrub_to(page, step)
    position = shown_state(page, step)
    page.click("#rp-fork")
    page.wait_for_url(re.compile(r"/$|/\?"))
    expect(page.locator("#view-table")).to_be_visible()
    poll(
        page,
        "(id) => { const t = window.opolyx.app.table; return t && t.id !== id && t.view; }",
        table_id,
    )
    state = page.evaluate("window.opolyx.app.table.view.state")
    assert state["round"] == position["round"]
    assert [s["cash"] for s in state["seats"]] == [s["cash"] for s in position["seats"]]
    assert state["squares"] == position["squares"]
    assert state["seed_commitment"] != summary["seed_commitment"]
    # One turn of the practice game, played by this player.
    before = int(page.evaluate(SEQ))
    play_a_turn(page)
    assert int(page.evaluate(SEQ)) > before


def test_a_replay_log_that_leaves_turns_out_says_so_in_every_language(pages: PageWatch) -> None:
    """The replay's log holds the last few turns before the position on screen; once turns
    before those are left out, its oldest line says earlier moves are not shown, the game's
    own log's line (log.earlier), in the page's language (on a phone)."""
    # five turns each (the bot's and this player's): more turns than the log holds
    page, table_id = finished_game(pages, "Longplay", PHONE, turns=5)
    summary = open_replay(page, table_id)
    assert summary["steps"] > REPLAY_LOG_TURNS + 1, summary["timeline"]
    log = page.locator("#rp-log li")
    earlier = page.locator("#rp-log li.earlier")
    scrub_to(page, REPLAY_LOG_TURNS)  # every turn since the start still fits
    expect(log.first).to_be_visible()
    expect(earlier).to_have_count(0)
    scrub_to(page, REPLAY_LOG_TURNS + 1)  # the first step's lines are left out
    expect(earlier).to_have_count(1)
    expect(log.last).to_have_class("earlier")
    expect(log.last).to_have_text(message("en", "log", "earlier"))
    screenshot(page, "replay-log-phone")
    scrub_to(page, summary["steps"] - 1)
    for lang in LANGUAGES:
        page.select_option("#lang", lang)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(log.last).to_have_text(message(lang, "log", "earlier"))
    expect(earlier).to_have_count(1)
    # back within the first turns the note goes again
    scrub_to(page, 1)
    expect(earlier).to_have_count(0)


def test_a_replay_that_cannot_load_says_why_in_the_page_language(pages: PageWatch) -> None:
    """Each way loading a replay fails reads in the page's language, never as the server's
    English message: a coded error by its code, no answer or an uncoded error page as the
    server not being reachable, an unreadable answer as such, an unknown game by name."""
    lang = "de"
    page = pages.open(PHONE, path=f"/replay.html?table=t-missing&lang={lang}")
    status = page.locator("#rp-status")
    expect(status).to_have_text(
        message(lang, "replay", "not_found").replace("{table}", "t-missing")
    )

    def failed(code: str) -> str:
        """The page's words for a failure with `code`: the code's own text, else its area's
        (errorText in actions.js)."""
        try:
            reason = message(lang, "ui", f"errors.{code.replace('/', '_')}")
        except KeyError:
            reason = message(lang, "ui", f"errors.area.{code.split('/')[0]}")
        return message(lang, "replay", "error").replace("{message}", reason)

    answers: list[tuple[Any, str]] = [
        (
            lambda route: route.fulfill(
                status=500,
                json={"code": "internal/error", "message": "Traceback (most recent call last)"},
            ),
            failed("internal/error"),
        ),
        (lambda route: route.abort(), failed("service/unavailable")),
        (
            lambda route: route.fulfill(
                status=502, content_type="text/html", body="<h1>502 Bad Gateway</h1>"
            ),
            failed("service/unavailable"),
        ),
        (
            lambda route: route.fulfill(status=200, body="{half a body"),
            failed("upstream/bad_reply"),
        ),
    ]
    for answer, expected in answers:
        page.unroute("**/api/replays/**")
        page.route("**/api/replays/**", answer)
        page.reload()
        expect(status).to_have_text(expected)
        expect(status).to_have_class(re.compile(r"\berror\b"))
        assert "Traceback" not in status.inner_text()
    # the browser logs each failed request; nothing else may have gone wrong
    pages.errors[:] = [e for e in pages.errors if "Failed to load resource" not in e]
