"""Play opolyx in a real browser against real services: sign in, make a room, fill it with
bots, start, roll, buy or decline, watch the bots, reload mid-game and carry on."""

from __future__ import annotations

import re
import time
from typing import Any

from opolyx_testing.gateway_client import frame_messages
from playwright.sync_api import Page, Request, expect

from .client_steps import (
    SEQ,
    TWICE,
    all_sent,
    answer_until_roll,
    play_until_i_own,
    record_sent,
    sign_in,
    start_game_with_bots,
    table_seq,
)
from .conftest import PHONE, PageWatch

MY_TURN_TIMEOUT_MS = 60_000


def act(page: Page, selector: str) -> None:
    """Click a decision button and wait until the page shows the state after it."""
    before = table_seq(page)
    page.click(selector)
    page.wait_for_function(f"() => {SEQ} > {before}")


DECISIONS = (
    "#decision [data-cmd=roll]",
    "#decision [data-cmd=buy]",
    "#decision [data-cmd=decline]",
    "#decision [data-cmd=pay]",
    "#decision [data-cmd=jackpot_decline]",
    "#decision [data-cmd=bus]",
    "#decision [data-cmd=teleport]",
    "#decision [data-cmd=bid]",
)


def wait_for_my_roll(page: Page) -> None:
    page.locator("#decision [data-cmd=roll]").wait_for(timeout=MY_TURN_TIMEOUT_MS)


def raise_funds(page: Page) -> None:
    """In a payment pause without the cash: sell or mortgage one thing, else go bankrupt."""
    page.click("#decision button:has-text('Raise funds')")
    dialog = page.locator("#manage-dialog")
    expect(dialog).to_be_visible()
    for kind in ("sell", "mortgage"):
        button = dialog.locator(f"[data-cmd={kind}]:enabled")
        if button.count():
            before = table_seq(page)
            button.first.click()
            page.wait_for_function(f"() => {SEQ} > {before}")
            break
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    if (
        page.locator("#decision [data-cmd=bankrupt]").count()
        and not dialog.locator("[data-cmd=sell]:enabled, [data-cmd=mortgage]:enabled").count()
    ):
        act(page, "#decision [data-cmd=bankrupt]")


def play_my_turn(page: Page, *, buy: bool) -> str | None:
    """Roll, then answer the decisions that follow until the next roll (doubles, or my next
    turn: bots play fast) or a buy decision. Returns "buy"/"decline" if one was made."""
    # my next decision: usually the roll, or one left open by the last call
    page.locator(", ".join(DECISIONS)).first.wait_for(timeout=MY_TURN_TIMEOUT_MS)
    if page.locator("#decision [data-cmd=roll]").count():
        act(page, "#decision [data-cmd=roll]")
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if page.locator("#decision [data-cmd=buy]").count():
            choice = "buy" if buy else "decline"
            act(page, f"#decision [data-cmd={choice}]")
            return choice
        if page.locator("#decision [data-cmd=roll]").count():
            return None
        other = next((s for s in DECISIONS[3:] if page.locator(s).count()), None)
        if other is not None:
            act(page, f"{other} >> nth=0")
            continue
        if page.locator("#decision button:has-text('Raise funds')").count():
            raise_funds(page)
            continue
        if page.locator("#turn", has_text="Your move").count() == 0:
            return None
        time.sleep(0.1)
    raise AssertionError("my turn did not end: " + page.locator("#center").inner_text())


def play_until_a_purchase_decision(page: Page, *, buy: bool, turns: int = 12) -> str:
    """Plays until a buy decision, within `turns` of my rolls. A call of `play_my_turn` may
    make no roll: a bid in a bot's auction is answered on its own (counted as a turn, twelve
    calls once ended at round 5, after five rolls, auctions in between)."""
    rolls = 0
    while rolls < turns:
        page.locator(", ".join(DECISIONS)).first.wait_for(timeout=MY_TURN_TIMEOUT_MS)
        rolls += page.locator("#decision [data-cmd=roll]").count() > 0
        choice = play_my_turn(page, buy=buy)
        if choice is not None:
            return choice
    raise AssertionError(f"no buy decision in {turns} rolls")


def bot_names(page: Page) -> list[str]:
    seats = page.evaluate("window.opolyx.app.table.view.seats")
    return [seat["name"] for seat in seats if seat["bot"]]


def test_a_game_against_three_bots_survives_a_reload(pages: PageWatch) -> None:
    page = pages.open()
    frames: list[list[dict[str, Any]]] = []
    page.on(
        "websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(frame_messages(f)))
    )
    sign_in(page, "Alice")
    start_game_with_bots(page)
    expect(page.locator("#players li", has_text="Alice (you)")).to_have_count(1)
    expect(page.locator("#countdown .secs")).to_have_text(re.compile(r"^\d+ s$"))

    choice = play_until_a_purchase_decision(page, buy=True)
    # the page asks for batched frames: its commands' replies came with their updates
    batched = [[m["type"] for m in frame] for frame in frames if len(frame) > 1]
    assert ["table.update", "reply"] in batched, batched
    log = page.locator("#log")
    if choice == "buy":
        expect(log).to_contain_text("Alice (you) bought")

    # the bots play their turns: their rolls show up in the log
    bots = bot_names(page)
    assert len(bots) == 3
    bot_rolled = re.compile("(" + "|".join(bots) + ") rolled")
    for _ in range(6):
        if bot_rolled.search(log.inner_text()):
            break
        play_my_turn(page, buy=False)  # doubles: the bots wait for me
    expect(log).to_contain_text(bot_rolled)
    wait_for_my_roll(page)

    # a reload puts the player back at the seat, with the board as it was
    cash_before = page.locator("#players li[data-seat]").all_inner_texts()
    seq_before = table_seq(page)
    page.reload()
    expect(page.locator("#view-table")).to_be_visible()
    expect(page.locator("#players li", has_text="Alice (you)")).to_have_count(1)
    page.wait_for_function(f"() => {SEQ} >= {seq_before}")
    # the recent action log is rebuilt from the stored events
    expect(page.locator("#log")).to_contain_text(bot_rolled)
    assert page.locator("#players li[data-seat]").all_inner_texts() == cash_before or (
        table_seq(page) > seq_before
    )
    # and the game carries on from there, keyboard only: the decision gets the focus
    wait_for_my_roll(page)
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.dataset.cmd === 'roll'"
    )
    before = table_seq(page)
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => {SEQ} > {before}")
    play_my_turn(page, buy=False)


def commands_sent(page: Page, sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The game commands the page sent so far."""
    return [m["command"] for m in all_sent(page, sent) if m["type"] == "table.cmd"]


DOUBLE_CLICK_SECOND = """(selector) => document.querySelector(selector)
    .dispatchEvent(new MouseEvent("click", { bubbles: true, detail: 2 }))"""
"""The second click of a double click alone (its `detail` is 2), whenever it comes."""


def double_click_sends_once(
    page: Page, sent: list[dict[str, Any]], button: str, command: dict[str, Any]
) -> None:
    """The second click of a double click on `button` alone sends nothing; a double click
    sends `command` once, and the page shows the state after it."""
    earlier = len(commands_sent(page, sent))
    page.evaluate(DOUBLE_CLICK_SECOND, button)
    assert commands_sent(page, sent)[earlier:] == []
    before = table_seq(page)
    page.dblclick(button)
    page.wait_for_function(f"() => {SEQ} > {before}")
    assert commands_sent(page, sent)[earlier:] == [command], sent


def test_a_double_tap_or_double_click_on_roll_rolls_once(pages: PageWatch) -> None:
    """A second tap before the first one's reply is back, or the second click of a double
    click, sends nothing: it would be a second roll after doubles before the player saw the
    first throw, a click on whichever decision came next, or a refusal shown as an error."""
    page = pages.open(PHONE)
    sent = record_sent(page)
    sign_in(page, "Dana")
    start_game_with_bots(page)
    wait_for_my_roll(page)
    before = table_seq(page)
    page.evaluate(TWICE, "#decision [data-cmd=roll]")
    page.wait_for_function(f"() => {SEQ} > {before}")
    assert [c["type"] for c in commands_sent(page, sent)] == ["roll"], sent
    expect(page.locator("#log")).to_contain_text("Dana (you) rolled")

    answer_until_roll(page, buy=False)
    wait_for_my_roll(page)
    double_click_sends_once(page, sent, "#decision [data-cmd=roll]", {"type": "roll"})


def test_enter_held_down_acts_once(pages: PageWatch) -> None:
    """Enter held on a decision acts once: its auto-repeat (keydown with `repeat` set) does
    not click the button that takes the focus next. Here the key goes down elsewhere, then
    Roll gets the focus while it is held, as the next decision's button does when it
    appears: the repeats roll nothing; a new press of Enter rolls."""
    page = pages.open()
    sent = record_sent(page)
    sign_in(page, "Ivy")
    start_game_with_bots(page)
    wait_for_my_roll(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.down("Enter")  # on the page's body: nothing to act on
    page.focus("#decision [data-cmd=roll]")
    for _ in range(3):
        page.keyboard.down("Enter")  # the auto-repeat, now on Roll
    assert commands_sent(page, sent) == []
    page.keyboard.up("Enter")
    before = table_seq(page)
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => {SEQ} > {before}")
    assert [c["type"] for c in commands_sent(page, sent)] == ["roll"], sent


def lobby_actions(page: Page, sent: list[dict[str, Any]]) -> list[str]:
    """The lobby actions the page sent so far."""
    return [m["action"] for m in all_sent(page, sent) if m["type"] == "lobby"]


def test_lobby_buttons_clicked_twice_send_one_request(pages: PageWatch) -> None:
    """Create room, Leave, Join and Start game, each clicked twice in one go, send one
    request each and show no error (the second was refused: "already playing a game" after
    Create room, already in the room, not in it, already started)."""
    host, friend = pages.open(), pages.open()
    sent = {host: record_sent(host), friend: record_sent(friend)}
    sign_in(host, "Eve")
    host.select_option("#create-seats", "3")
    host.evaluate(TWICE, "#create-room")
    expect(host.locator("#members li")).to_have_count(1)
    host.evaluate(TWICE, "#leave-room")
    expect(host.locator("#my-room")).to_be_hidden()
    expect(host.locator("#create-card")).to_be_visible()
    host.click("#create-room")
    expect(host.locator("#members li")).to_have_count(1)

    sign_in(friend, "Fred")
    join = f"#rooms li[data-room='{host.evaluate('window.opolyx.app.room.room_id')}'] button"
    expect(friend.locator(join)).to_be_enabled()
    friend.evaluate(TWICE, join)
    expect(friend.locator("#members li")).to_have_count(2)
    host.click("#add-bot")
    expect(host.locator("#members li")).to_have_count(3)
    host.evaluate(TWICE, "#start-game")
    for page in (host, friend):
        expect(page.locator("#view-table")).to_be_visible()

    host_actions = lobby_actions(host, sent[host])
    assert [host_actions.count(a) for a in ("create", "leave", "start")] == [2, 1, 1], host_actions
    assert lobby_actions(friend, sent[friend]).count("join") == 1, sent[friend]
    for page in (host, friend):
        expect(page.locator("#toast")).to_be_hidden()


def session_requests(page: Page) -> list[str]:
    """The sign-in requests (POST /api/session) the page makes from now on."""
    made: list[str] = []

    def seen(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/api/session"):
            made.append(request.url)

    page.on("request", seen)
    return made


def test_sign_in_sent_twice_makes_one_player(pages: PageWatch) -> None:
    """Play as guest clicked twice in one go, or Enter pressed twice, signs in once: each
    made a guest player of its own, with a socket open for each. Enter pressed again once
    the session is made, before the lobby shows, does nothing too."""
    for how in ("clicked", "entered"):
        page = pages.open()
        sessions = session_requests(page)
        page.fill("#signin-name", f"Nia {how}")
        if how == "clicked":
            page.evaluate(TWICE, "#signin-go")
        else:
            page.keyboard.press("Enter")
            page.keyboard.press("Enter")
        expect(page.locator("#conn")).to_have_text("online")
        # a round trip on the socket: both requests were made long before it
        page.evaluate("() => window.opolyx.app.conn.request('ping')")
        assert len(sessions) == 1, (how, sessions)

    # Signed in, the socket not ready yet: the form is still on screen, and Enter again (it
    # signed in a second time in a fresh-clone CI run) does nothing. The socket is held
    # open without a server, so its hello is never answered.
    page = pages.open()
    page.route_web_socket(re.compile(r"/ws(\?[^/]*)?$"), lambda socket: None)
    sessions = session_requests(page)
    page.fill("#signin-name", "Nia waiting")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.opolyx.app.session !== null")
    expect(page.locator("#signin-form")).to_be_visible()
    page.keyboard.press("Enter")
    # a request made after it: the sign-in it would have made comes before
    assert page.evaluate("() => fetch('/livez').then((r) => r.status)") == 200
    assert len(sessions) == 1, sessions


def test_autopilot_switch_double_clicked_switches_once(pages: PageWatch) -> None:
    """ "Autopilot for me" double clicked, or clicked twice in one go, switches the autopilot
    on once: the second click of a double click, after the first one's update, switched it
    off again."""
    page = pages.open()
    sent = record_sent(page)
    sign_in(page, "Kim")
    start_game_with_bots(page, bots=1)
    toggle = page.locator("#autopilot-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    page.evaluate(TWICE, "#autopilot-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    page.evaluate(DOUBLE_CLICK_SECOND, "#autopilot-toggle")
    toggle.dblclick()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    switches = [m["on"] for m in all_sent(page, sent) if m["type"] == "table.autopilot"]
    assert switches == [True, False], sent


def test_a_double_click_on_a_property_action_acts_once(pages: PageWatch) -> None:
    """The second click of a double click on a property action sends nothing, in "My
    properties" and on the square's card: the open dialog shows the state after the first
    one's reply with its buttons in place, so on Build (still enabled when the house evened
    the group), once the local system had answered, it could build a second house. Played
    here on Mortgage and Unmortgage (a group to build on is left to the dice): a second click
    alone sends nothing (it mortgaged), and a double click one command."""
    page = pages.open()
    sent = record_sent(page)
    sign_in(page, "Gus")
    start_game_with_bots(page, bots=1)
    square = play_until_i_own(page)
    page.click("#open-manage")
    row = f"#manage-dialog .prop-row[data-square='{square}']"
    expect(page.locator(f"{row} [data-cmd=mortgage]")).to_be_enabled()
    mortgage = {"type": "mortgage", "square": square}
    double_click_sends_once(page, sent, f"{row} [data-cmd=mortgage]", mortgage)
    expect(page.locator(row)).to_contain_text("mortgaged")

    page.keyboard.press("Escape")
    expect(page.locator("#manage-dialog")).to_be_hidden()
    page.click(f"#board .sq[data-square='{square}']")
    card = "#property-dialog"
    expect(page.locator(f"{card} [data-cmd=unmortgage]")).to_be_enabled()
    unmortgage = {"type": "unmortgage", "square": square}
    double_click_sends_once(page, sent, f"{card} [data-cmd=unmortgage]", unmortgage)
    expect(page.locator(f"{card} [data-cmd=mortgage]")).to_be_enabled()
    expect(page.locator("#toast")).to_be_hidden()


def test_add_bot_and_remove_clicked_twice_send_one_request(pages: PageWatch) -> None:
    """Add bot clicked twice in one go, or double clicked, adds one bot (it added two);
    Remove likewise removes one, with no error (the second was refused: not in the room).
    A second click alone sends nothing: it may come after the first one's reply."""
    page = pages.open()
    sent = record_sent(page)
    sign_in(page, "Hal")
    page.select_option("#create-seats", "5")
    page.click("#create-room")
    members = page.locator("#members li")
    expect(members).to_have_count(1)

    page.evaluate(TWICE, "#add-bot")
    expect(members).to_have_count(2)
    assert lobby_actions(page, sent).count("add_bot") == 1, sent
    page.evaluate(DOUBLE_CLICK_SECOND, "#add-bot")
    assert lobby_actions(page, sent).count("add_bot") == 1, sent
    page.dblclick("#add-bot")
    expect(members).to_have_count(3)
    assert lobby_actions(page, sent).count("add_bot") == 2, sent

    remove = "#members li button.link"  # a bot's Remove (the creator's row has none)
    page.evaluate(TWICE, remove)
    expect(members).to_have_count(2)
    assert lobby_actions(page, sent).count("remove_bot") == 1, sent
    page.evaluate(DOUBLE_CLICK_SECOND, remove)
    assert lobby_actions(page, sent).count("remove_bot") == 1, sent
    page.dblclick(remove)
    expect(members).to_have_count(1)
    assert lobby_actions(page, sent).count("remove_bot") == 2, sent
    expect(page.locator("#toast")).to_be_hidden()


def test_decline_sends_the_property_to_auction_on_a_phone(pages: PageWatch) -> None:
    page = pages.open(PHONE)
    sign_in(page, "Bea")
    start_game_with_bots(page)
    choice = play_until_a_purchase_decision(page, buy=False)
    assert choice == "decline"
    expect(page.locator("#log")).to_contain_text("Auction for")
    # the board fits the phone's width and the controls stay reachable
    box = page.locator("#board").bounding_box()
    assert box is not None and box["width"] <= PHONE["width"]
    page.reload()
    expect(page.locator("#players li", has_text="Bea (you)")).to_have_count(1)
    play_my_turn(page, buy=True)


def test_private_room_invite_link_brings_a_friend_in(pages: PageWatch) -> None:
    host = pages.open()
    sign_in(host, "Host")
    host.select_option("#create-seats", "3")
    host.check("#create-private")
    host.click("#create-room")
    link = host.locator("#invite-link").input_value()
    assert "invite=" in link

    friend = pages.open(
        path=link.split("://", 1)[1].split("/", 1)[1] and "/" + link.split("/", 3)[3]
    )
    sign_in(friend, "Friend")
    expect(friend.locator("#members li")).to_have_count(2)
    # the host sees the friend arrive without reloading (lobby events are pushed)
    expect(host.locator("#members li", has_text="Friend")).to_have_count(1)
    host.click("#add-bot")
    host.click("#start-game")
    for page in (host, friend):
        expect(page.locator("#view-table")).to_be_visible()
        expect(page.locator("#players li")).to_have_count(3)


def test_a_spectator_watches_a_game_without_controls(pages: PageWatch) -> None:
    player = pages.open()
    sign_in(player, "Player")
    start_game_with_bots(player, bots=2)
    table_id = player.evaluate("window.opolyx.app.table.id")

    viewer = pages.open(PHONE, path=f"/?watch={table_id}")
    viewer.fill("#signin-name", "Viewer")
    viewer.click("#signin-go")
    expect(viewer.locator("#view-table")).to_be_visible()
    expect(viewer.locator("#turn .spectating")).to_have_text("spectating")
    expect(viewer.locator("#players li")).to_have_count(3)
    expect(viewer.locator("#open-trade")).to_be_disabled()
    # the game moves on for the spectator too, and it is never asked to decide
    play_my_turn(player, buy=True)
    seq = table_seq(player)
    viewer.wait_for_function(f"() => {SEQ} >= {seq}")
    assert viewer.locator("#decision [data-cmd]").count() == 0


def test_trade_dialog_shows_the_fairness_rule_before_sending(pages: PageWatch) -> None:
    page = pages.open()
    sign_in(page, "Trader")
    start_game_with_bots(page, bots=1)
    wait_for_my_roll(page)  # offers are made before rolling (R10)
    page.click("#open-trade")
    dialog = page.locator("#trade-dialog")
    expect(dialog).to_be_visible()
    fairness = page.locator("#trade-fairness")
    page.fill("#trade-give-cash", "1000")
    expect(fairness).to_contain_text("Not allowed")
    expect(fairness).to_contain_text("0% of the larger")
    expect(page.locator("#trade-send")).to_be_disabled()
    page.fill("#trade-take-cash", "600")
    expect(fairness).to_contain_text("Fair: the smaller side is 60% of the larger")
    expect(page.locator("#trade-send")).to_be_enabled()
    before = table_seq(page)
    page.click("#trade-send")
    expect(dialog).to_be_hidden()
    page.wait_for_function(f"() => {SEQ} > {before}")
    expect(page.locator("#log")).to_contain_text("Trader (you) offers")
