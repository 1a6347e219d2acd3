"""The client bugs of the browser play-through, each reproduced at both viewports: the way
back to one's game from the lobby, dialogs that follow an action, the event-card banner,
the action log's wording, and what a player who is out, a team's win, the countdown and
the pawns on START show.

Events the dice decide (a card drawn, rent owed, a team winning) are fed to the page's own
reducer and narration (its modules, imported in the page) on top of a real game, so the
assertions do not wait on luck; everything else is played against the real services."""

from __future__ import annotations

import re
import time
from typing import Any

from playwright.sync_api import Page, ViewportSize, expect

from .client_steps import (
    WAIT_S,
    play_until_i_own,
    poll,
    sign_in,
    start_game_with_bots,
    wait_for_my_roll,
)
from .conftest import WIDE, PageWatch, on_desktop_and_phone


def game(pages: PageWatch, viewport: ViewportSize, name: str, bots: int = 2) -> Page:
    page = pages.open(viewport)
    sign_in(page, name)
    start_game_with_bots(page, bots=bots)
    return page


def inject(page: Page, *events: dict[str, Any]) -> None:
    """Feeds events to the page's reducer as the next ones of the watched table."""
    page.evaluate(
        """async (events) => {
          const { reduce, store } = await import('/js/store.js');
          const { PUSH_TYPES } = await import('/js/constants.js');
          const t = store.table;
          const records = events.map((event, i) => ({ seq: t.seq + 1 + i, event }));
          const seq = t.seq + events.length;
          reduce({ type: PUSH_TYPES.TABLE_EVENTS, table: t.id, seq, events: records });
        }""",
        list(events),
    )


def narrate(page: Page, events: list[dict[str, Any]]) -> list[str]:
    """The log lines the page's narration makes of these events, with the real seats."""
    lines: list[str] = page.evaluate(
        """async (events) => {
          const { describe } = await import('/js/log.js');
          const names = await import('/js/names.js');
          const { store } = await import('/js/store.js');
          const { seatName, squareName } = names;
          const ctx = { seatName, squareName, tableId: store.table.id };
          return describe(events, ctx).map((line) => line.text);
        }""",
        events,
    )
    return lines


def seat_names(page: Page) -> list[str]:
    names: list[str] = page.evaluate(
        "(async () => { const n = await import('/js/names.js');"
        " return window.opolyx.app.table.view.seats.map((s) => n.seatName(s.seat)); })()"
    )
    return names


@on_desktop_and_phone()
def test_back_to_lobby_mid_game_keeps_a_way_back_and_no_stale_room(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = game(pages, viewport, "Rover")
    page.click("#leave-table")
    expect(page.locator("#view-lobby")).to_be_visible()
    # the old room with its Start button is gone; a way back to the game is there
    expect(page.locator("#my-room")).to_be_hidden()
    expect(page.locator("#start-game")).to_have_count(0)
    expect(page.locator("#leave-room")).to_have_count(0)
    expect(page.locator("#create-card")).to_be_hidden()
    expect(page.locator("#my-game")).to_be_visible()
    page.click("#return-to-game")
    expect(page.locator("#view-table")).to_be_visible()
    expect(page.locator("#players li", has_text="Rover (you)")).to_have_count(1)
    expect(page.locator("#log li").last).to_have_text("The table is set. Good luck!")
    expect(page.locator("#toast")).to_be_hidden()


@on_desktop_and_phone()
def test_open_dialogs_follow_each_action(pages: PageWatch, viewport: ViewportSize) -> None:
    page = game(pages, viewport, "Mona")
    square = play_until_i_own(page)
    page.click("#open-manage")
    row = page.locator(f"#manage-dialog .prop-row[data-square='{square}']")
    expect(row).to_be_visible()
    before = int(page.evaluate("window.opolyx.app.table.view.seq"))
    row.locator("[data-cmd=mortgage]").click()
    poll(page, f"window.opolyx.app.table.view.seq > {before}")
    # the same open dialog now offers to lift the mortgage, and says so
    expect(row).to_contain_text("mortgaged")
    expect(row.locator("[data-cmd=unmortgage]")).to_be_enabled()
    expect(row.locator("[data-cmd=mortgage]")).to_be_disabled()
    page.keyboard.press("Escape")
    expect(page.locator("#manage-dialog")).to_be_hidden()
    # the square's own card too
    page.click(f"#board .sq[data-square='{square}']")
    card = page.locator("#property-dialog")
    expect(card).to_be_visible()
    expect(card.locator("[data-cmd=unmortgage]")).to_be_enabled()
    before = int(page.evaluate("window.opolyx.app.table.view.seq"))
    card.locator("[data-cmd=unmortgage]").click()
    poll(page, f"window.opolyx.app.table.view.seq > {before}")
    expect(card.locator("[data-cmd=mortgage]")).to_be_enabled()
    expect(card.locator("[data-cmd=unmortgage]")).to_be_disabled()
    expect(card).not_to_contain_text("mortgaged")


@on_desktop_and_phone()
def test_the_event_card_banner_names_the_drawer_and_goes_at_the_next_turn(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = game(pages, viewport, "Cara")
    names = seat_names(page)
    # the game waits for this seat's roll, so no real turn of a bot's hides the banner
    # before the language switch re-tells it (it did at load 14)
    wait_for_my_roll(page)
    banner = page.locator("#card-drawn")
    inject(page, {"type": "card_drawn", "seat": 1, "card": 6, "text": "x", "reshuffled": False})
    expect(banner).to_be_visible()
    expect(banner).to_have_text(f"{names[1]} drew an event card: “Collect 500 from each opponent”")
    # the language switch re-tells it
    page.select_option("#lang", "de")
    expect(banner).to_contain_text("Kassieren Sie 500 von jedem Gegner")
    page.select_option("#lang", "en")
    inject(page, {"type": "turn_started", "seat": 2, "round": 1, "deadline": 1.0})
    expect(banner).to_be_hidden()


def test_the_log_reads_as_what_happened(pages: PageWatch) -> None:
    page = game(pages, WIDE, "Lex")
    me, bot, _ = seat_names(page)
    square = 1  # Brambleway, the first street

    # a decline the player could not afford is not "let the time run out"
    cannot = narrate(
        page, [{"type": "property_declined", "seat": 1, "square": 1, "automatic": True}]
    )
    assert cannot == [f"{bot} cannot afford Brambleway: it goes to auction"]
    timed_out = narrate(
        page,
        [
            {"type": "buy_offered", "seat": 1, "square": 1, "deadline": 9.0},
            {"type": "property_declined", "seat": 1, "square": 1, "automatic": True},
        ],
    )
    assert timed_out == [f"{bot} let the time run out on Brambleway: it goes to auction"]

    # rent: one line, with the creditor and the square
    rent = narrate(
        page,
        [
            {
                "type": "moved",
                "seat": 1,
                "frm": 0,
                "to": square,
                "passed_start": False,
                "how": "card",
            },
            {
                "type": "payment_required",
                "seat": 1,
                "amount": 100,
                "creditors": [[0, 100]],
                "reason": "rent",
                "deadline": 9.0,
                "then": "end",
                "steps": 0,
                "queue": [],
            },
            {
                "type": "payment_made",
                "seat": 1,
                "amount": 100,
                "reason": "rent",
                "automatic": False,
            },
            {"type": "transfer", "frm": 1, "to": 0, "amount": 100, "reason": "rent"},
        ],
    )
    assert rent[-1] == f"{bot} pays {me} 100 rent for Brambleway"
    assert not any("owes" in line for line in rent)

    # an auction: one line that follows the bids, then its result
    auction = [
        {
            "type": "auction_started",
            "square": 1,
            "decliner": 0,
            "order": [1, 2],
            "bidder": 1,
            "minimum": 600,
            "deadline": 1.0,
        },
        {
            "type": "auction_bid",
            "seat": 1,
            "amount": 600,
            "next_bidder": 2,
            "minimum": 700,
            "deadline": 2.0,
        },
        {
            "type": "auction_passed",
            "seat": 2,
            "automatic": False,
            "next_bidder": 1,
            "deadline": 3.0,
        },
        {
            "type": "auction_bid",
            "seat": 1,
            "amount": 700,
            "next_bidder": 2,
            "minimum": 800,
            "deadline": 4.0,
        },
    ]
    assert narrate(page, auction) == [f"Auction for Brambleway: 700 by {bot} so far"]
    ended = [*auction, {"type": "auction_ended", "square": 1, "winner": 1, "price": 700}]
    assert narrate(page, ended) == [f"Auction for Brambleway: {bot} won it for 700"]

    # a trade names the cash on both sides
    offer = {
        "type": "offer_made",
        "offer": "o1",
        "frm": 0,
        "to": 1,
        "give_cash": 1500,
        "give_squares": [1],
        "take_cash": 250,
        "take_squares": [],
        "deadline": 9.0,
    }
    made = narrate(page, [offer])
    assert made == [f"{me} offers {bot} a trade: 1,500, Brambleway for 250"]
    accepted = narrate(page, [offer, {"type": "offer_closed", "offer": "o1", "how": "accepted"}])
    assert accepted[-1] == f"{bot} accepted the trade with {me}: 1,500, Brambleway for 250"

    # the revealed seed is a link to the fairness check of this table, no developer text
    table_id = page.evaluate("window.opolyx.app.table.id")
    inject(page, {"type": "seed_revealed", "seed": 42, "seed_commitment": "c"})
    link = page.locator("#log li a")
    expect(link).to_have_text("Verify fairness")
    expect(link).to_have_attribute("href", f"/replay.html?table={table_id}#verify")
    expect(page.locator("#log")).not_to_contain_text("opolyx-rules")


@on_desktop_and_phone()
def test_a_player_who_is_out_is_told_and_has_no_controls(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = game(pages, viewport, "Quinn")
    page.on("dialog", lambda dialog: dialog.accept())
    wait_for_my_roll(page)
    before = int(page.evaluate("window.opolyx.app.table.view.seq"))
    page.click("#resign")
    poll(page, f"window.opolyx.app.table.view.seq > {before}")
    for control in ("#open-trade", "#open-manage", "#resign"):
        expect(page.locator(control)).to_be_disabled()
    # The two bots may finish the game any moment now, so the state and what the page shows
    # are read in one go: either the banner (game still on) or the results (it ended).
    seen: dict[str, Any] = {}
    deadline = time.monotonic() + 15
    while not (seen.get("banner") or seen.get("ended")):
        assert time.monotonic() < deadline, f"neither the out banner nor the results: {seen}"
        time.sleep(0.05)
        seen = page.evaluate(
            """() => {
              const banner = document.querySelector("#out-banner");
              const end = document.querySelector("#end-dialog");
              return {
                finished: window.opolyx.app.table.view.state.finished,
                banner: banner && banner.checkVisibility() ? banner.textContent.trim() : null,
                ended: Boolean(end && end.open),
              };
            }"""
        )
    if seen["ended"]:  # the bots finished it: the results say who won
        assert seen["finished"]
    else:
        assert not seen["finished"]
        assert seen["banner"] == "You are out of this game. You can keep watching until it ends."
    # the players' list says so too
    poll(
        page,
        "(() => { const t = window.opolyx.app.table; return t.view.state.seats[t.seat].out; })()",
    )
    seat = page.evaluate("window.opolyx.app.table.seat")
    expect(page.locator(f"#players li[data-seat='{seat}']")).to_have_class(re.compile(r"\bout\b"))
    out = {"type": "seat_went_out", "seat": seat, "how": "resigned", "heir": None}
    assert narrate(page, [out]) == ["Quinn (you) resigned and is out of the game"]


def test_a_team_win_names_the_side(pages: PageWatch) -> None:
    page = game(pages, WIDE, "Tess")
    names = seat_names(page)
    text = page.evaluate(
        """async () => {
          const { winnerText } = await import('/js/names.js');
          return winnerText({ mode: 'team', winner: 2, seats: [
            { seat: 0, team: 0 }, { seat: 1, team: 1 }, { seat: 2, team: 1 } ] });
        }"""
    )
    assert text == f"Team 2 wins! ({names[1]}, {names[2]})"
    solo = page.evaluate(
        """async () => (await import('/js/names.js')).winnerText({ mode: 'classic', winner: 1,
          seats: [{ seat: 0, team: null }, { seat: 1, team: null }] })"""
    )
    assert solo == f"{names[1]} wins!"


def contrast(fg: list[float], bg: list[float]) -> float:
    def lum(rgb: list[float]) -> float:
        chans = [c / 255 for c in rgb[:3]]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in chans]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@on_desktop_and_phone()
def test_the_low_time_countdown_is_readable_and_pawns_leave_start_readable(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = game(pages, viewport, "Otto")
    secs = page.locator("#countdown .secs")
    expect(secs).to_be_visible(timeout=WAIT_S * 1000)
    page.evaluate("document.getElementById('countdown').classList.add('low')")
    colours = page.evaluate(
        """() => { const s = getComputedStyle(document.querySelector('#countdown .secs'));
          const nums = (c) => c.match(/[\\d.]+/g).map(Number);
          return [nums(s.color), nums(s.backgroundColor)]; }"""
    )
    fg, bg = colours
    assert len(bg) == 4 and bg[3] >= 0.9, "the seconds sit on an opaque pill"
    assert contrast(fg, bg) >= 4.5
    # this seat's pawn waits on START until its first roll: it does not cover the label
    start = page.locator("#board .sq[data-square='0'] .nm")
    expect(start).to_be_visible()
    expect(start).to_have_text("START")
    poll(page, "document.querySelectorAll(\"#board .sq[data-square='0'] .pawn\").length > 0")
    # the label and the pawns measured in one go (the bots' pawns leave START as they roll)
    square = page.locator("#board .sq[data-square='0']")
    boxes = square.evaluate(
        """(sq) => { const box = (el) => { const b = el.getBoundingClientRect();
            return { x: b.x, y: b.y, width: b.width, height: b.height }; };
          return { label: box(sq.querySelector('.nm')),
                   pawns: [...sq.querySelectorAll('.pawn')].map(box) }; }"""
    )
    label = boxes["label"]
    assert boxes["pawns"], "no pawn waits on START"
    for i, box in enumerate(boxes["pawns"]):
        overlap_x = min(box["x"] + box["width"], label["x"] + label["width"]) - max(
            box["x"], label["x"]
        )
        overlap_y = min(box["y"] + box["height"], label["y"] + label["height"]) - max(
            box["y"], label["y"]
        )
        assert overlap_x <= 0 or overlap_y <= 0, f"pawn {i} covers the START label"
