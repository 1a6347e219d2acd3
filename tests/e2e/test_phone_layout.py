"""The table on a phone (390x844), in a real browser against the real services: the top bar
keeps to two lines at most in English, German (the longest words) and Arabic (right to left),
and both the pending decision and the tools card (my properties, trade, resign) can be
reached and tapped: a sheet fixed to the screen's bottom used to cover the tools."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .client_steps import SEQ, poll, sign_in, start_game_with_bots, wait_for_my_roll
from .conftest import PHONE, PageWatch

# The rows the top bar's items sit in (items whose tops are within a few pixels share one),
# the tallest item (one line's height), and the bar's own height and padding: the old bar had
# the brand on a line of its own and the rest on two more.
TOP_BAR_ROWS = """() => {
  const bar = document.querySelector('.topbar');
  const items = [...bar.querySelector('.who').children]
    .filter((el) => el.getBoundingClientRect().width > 0);
  const tops = items.map((el) => el.getBoundingClientRect().top).sort((a, b) => a - b);
  items.push(bar.querySelector('.brand')); // centred beside the rows, in none of them
  let rows = 0, last = -Infinity;
  for (const top of tops) { if (top - last > 6) rows += 1; last = top; }
  const css = getComputedStyle(bar);
  return {
    rows,
    row: Math.max(...items.map((el) => el.getBoundingClientRect().height)),
    height: bar.getBoundingClientRect().height,
    padding: parseFloat(css.paddingTop) + parseFloat(css.paddingBottom),
    width: bar.scrollWidth, viewport: innerWidth,
  };
}"""

# Scrolls the element just into view (as far as a thumb would) and says whether a tap on its
# middle lands on it, not on something drawn over it.
TAPPABLE = """(selector) => {
  const el = document.querySelector(selector);
  el.scrollIntoView({ block: 'nearest' });
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return { tappable: Boolean(hit && el.contains(hit)), on: hit ? (hit.id || hit.className) : null };
}"""


def top_bar(page: Page) -> dict[str, Any]:
    measured: dict[str, Any] = page.evaluate(TOP_BAR_ROWS)
    return measured


@pytest.mark.parametrize("lang", ["en", "de", "ar"])
def test_the_top_bar_keeps_to_two_lines_on_a_phone(pages: PageWatch, lang: str) -> None:
    page = pages.open(PHONE, path=f"/?lang={lang}")
    sign_in(page, "Maximiliane")
    for where in ("lobby", "table"):
        if where == "table":
            start_game_with_bots(page, bots=1)
        bar = top_bar(page)
        assert bar["rows"] <= 2, (where, bar)
        assert bar["height"] <= 2 * bar["row"] + bar["padding"] + 12, (where, bar)
        assert bar["width"] <= bar["viewport"], (where, bar)  # nothing pushed off the side


def test_on_a_phone_the_decision_and_the_tools_can_both_be_tapped(pages: PageWatch) -> None:
    page = pages.open(PHONE)
    sign_in(page, "Toni")
    start_game_with_bots(page, bots=2)
    wait_for_my_roll(page)
    roll = "#decision [data-cmd=roll]"
    assert page.evaluate(TAPPABLE, roll)["tappable"]
    for tool in ("#open-manage", "#open-trade", "#resign", "#leave-table"):
        found = page.evaluate(TAPPABLE, tool)
        assert found["tappable"], f"{tool} is under {found['on']}"
    page.locator("#open-manage").click()
    expect(page.locator("#manage-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#manage-dialog")).to_be_hidden()
    # and back up to the decision, which is still there to tap
    assert page.evaluate(TAPPABLE, roll)["tappable"]
    before = page.evaluate(SEQ)
    page.locator(roll).click()
    poll(page, f"{SEQ} > {before}")
