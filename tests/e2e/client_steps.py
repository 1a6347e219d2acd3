"""Steps the client tests share: sign in, fill a room with bots, wait on the page's store.

Waits poll the page with ``page.evaluate`` (run by the browser's debugger protocol) rather
than ``wait_for_function``, whose string predicates the page's Content-Security-Policy
refuses to evaluate."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from opolyx_testing.gateway_client import frame_messages
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, ROOT

WAIT_S = 60.0
I18N = ROOT / "services" / "gateway" / "src" / "opolyx_gateway" / "static" / "i18n"
LANGUAGES = sorted(json.loads((I18N / "index.json").read_text(encoding="utf-8"))["languages"])
SEQ = (
    "(window.opolyx.app.table && window.opolyx.app.table.view"
    " ? window.opolyx.app.table.view.seq : 0)"
)


def message(lang: str, area: str, key: str) -> str:
    """The catalogue's text for ``key`` (dotted) in ``area``'s file of language ``lang``."""
    value: Any = json.loads((I18N / lang / f"{area}.json").read_text(encoding="utf-8"))
    for part in key.split("."):
        value = value[part]
    assert isinstance(value, str)
    return value


def poll(page: Page, expression: str, timeout_s: float = WAIT_S) -> Any:
    """The expression's value once it is truthy; fails the test if it never is."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never true: {expression}")
        page.wait_for_timeout(100)


def sign_in(page: Page, name: str) -> None:
    page.fill("#signin-name", name)
    page.click("#signin-go")
    expect(page.locator("#conn")).to_have_class("conn online")
    expect(page.locator("#view-lobby")).to_be_visible()


def start_game_with_bots(page: Page, bots: int = 3, mode: str | None = None) -> None:
    if mode:
        page.select_option("#create-mode", mode)
    page.select_option("#create-seats", str(bots + 1))
    page.click("#create-room")
    members = page.locator("#members li")
    expect(members).to_have_count(1)
    for n in range(bots):
        page.click("#add-bot")
        expect(members).to_have_count(n + 2)
    # one tag for each bot ("bot") and one for the creator: the room marks its bots
    expect(page.locator("#members .tag")).to_have_count(bots + 1)
    page.click("#start-game")
    expect(page.locator("#view-table")).to_be_visible()
    expect(page.locator("#players li")).to_have_count(bots + 1)
    expect(page.locator("#board .sq")).to_have_count(40)


def table_seq(page: Page) -> int:
    return int(page.evaluate(SEQ))


def click_and_wait(page: Page, selector: str) -> None:
    """Click a command button and wait until the page shows the state after it."""
    before = table_seq(page)
    page.click(selector)
    poll(page, f"{SEQ} > {before}")


def wait_for_my_roll(page: Page) -> None:
    page.locator("#decision [data-cmd=roll]").wait_for(timeout=WAIT_S * 1000)


def my_pending(page: Page) -> str | None:
    """The kind of the decision this page's seat has to make, if any."""
    kind: str | None = page.evaluate(
        "(() => { const t = window.opolyx.app.table; const p = t && t.view && t.view.state.pending;"
        " return p && p.seat === t.seat ? p.kind : null; })()"
    )
    return kind


def answer_until_roll(page: Page, *, buy: bool, rounds: int = 40) -> list[str]:
    """Answer this seat's decisions (buy or decline, pay, skip the Jackpot, bid nothing)
    until it is to roll again; returns the commands sent."""
    sent: list[str] = []
    for _ in range(rounds):
        kind = my_pending(page)
        if kind == "roll" and sent:
            return sent
        choices = {
            "roll": ["roll"],
            "buy": ["buy", "decline"] if buy else ["decline"],
            "auction": ["pass"],
            "payment": ["pay", "bankrupt"],
            "jackpot": ["jackpot_decline"],
            "bus": ["bus"],
            "teleport": ["teleport"],
        }.get(kind or "", [])
        button = next(
            (
                page.locator(f"#decision [data-cmd={c}]").first
                for c in choices
                if page.locator(f"#decision [data-cmd={c}]:enabled").count()
            ),
            None,
        )
        if button is None:
            page.wait_for_timeout(150)
            continue
        before = table_seq(page)
        sent.append(str(button.get_attribute("data-cmd")))
        button.click()
        poll(page, f"{SEQ} > {before}")
    return sent


def play_until_i_own(page: Page, deadline_s: float = 150) -> int:
    """Plays this seat (buying what it lands on) until it owns a property and is to roll;
    returns that property's square."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        owned = page.evaluate(
            "(() => { const t = window.opolyx.app.table;"
            " return t.view.state.squares.filter((p) => p.owner === t.seat && !p.mortgaged"
            " && !p.buildings).map((p) => p.square); })()"
        )
        if owned and my_pending(page) == "roll":
            return int(owned[0])
        if my_pending(page):
            answer_until_roll(page, buy=True)
        else:
            page.wait_for_timeout(200)
    raise AssertionError("no property bought in time")


TWICE = """(selector) => {
    const button = document.querySelector(selector);
    button.click();
    button.click();
}"""
"""Two clicks on a button in one task of the page: no reply can come between them."""


def record_sent(page: Page) -> list[dict[str, Any]]:
    """The messages the page sends on its sockets from now on, in order (`framesent`)."""
    sent: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.extend(frame_messages(f))))
    return sent


def all_sent(page: Page, sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`sent` (from `record_sent`) once every frame the page sent so far is in it: after a
    round trip, whose own message comes after them."""
    page.evaluate("() => window.opolyx.app.conn.request('ping')")
    assert "ping" in [m["type"] for m in sent]
    return sent


def screenshot(page: Page, name: str) -> Path:
    """Keeps a screenshot in test-artifacts/ (not committed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def overlaps(page: Page, container: str) -> list[str]:
    """Pairs of visible children of each element matching `container` whose boxes overlap
    (by more than a pixel, so that touching borders do not count)."""
    found: list[str] = page.evaluate(
        """(selector) => {
          const out = [];
          for (const parent of document.querySelectorAll(selector)) {
            const kids = [...parent.children].filter((el) => {
              const r = el.getBoundingClientRect();
              const cs = getComputedStyle(el);
              return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden'
                && cs.position !== 'absolute';
            });
            for (let i = 0; i < kids.length; i++) for (let j = i + 1; j < kids.length; j++) {
              const a = kids[i].getBoundingClientRect(), b = kids[j].getBoundingClientRect();
              const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
              const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
              const name = (el) => el.id || el.className || el.tagName;
              if (x > 1 && y > 1) out.push(`${name(kids[i])} / ${name(kids[j])}`);
            }
          }
          return out;
        }""",
        container,
    )
    return found


def outside_viewport(page: Page, selector: str) -> list[str]:
    """Visible elements matching `selector` that stick out of the viewport's width."""
    found: list[str] = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.left < -1 || r.right > window.innerWidth + 1);
          }).map((el) => el.id || el.className || el.tagName)""",
        selector,
    )
    return found
