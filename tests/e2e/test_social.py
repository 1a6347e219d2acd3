"""Chat and progression in a real browser against the whole local system (chat and
progression included), at 1366x860 and 390x844: chat in the lobby, the waiting room and at
the table with stickers, a blocked word refused with its code shown, a spectator reading
the table's chat; the profile after a finished game (XP, a card, missions), the leaderboard, and
following a player who then shows online in the follows list.

A game pays XP only from round 20 (R20), so here the finished game is published on GAMES the
way the table publishes one (as the admin NATS user of the local system), for the signed-in
player: quick, and exact about what the profile must show. test_full_game.py plays a whole
paying game through the table instead."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import nats
import pytest
from opolyx_contracts.envelope import encode
from opolyx_contracts.subjects import GAME_FINISHED
from opolyx_testing.finished_games import two_player_game
from playwright.sync_api import Page, ViewportSize, expect

from .client_steps import TWICE, all_sent, record_sent
from .conftest import PHONE, VIEWPORTS, LocalSystem, PageWatch

BLOCKED = "rotten"
# Read by the chat service the local system starts (the system starts once per session,
# after every test module was imported, so this reaches it whichever module runs first).
os.environ.setdefault("OPOLYX_CHAT__BLOCKED_WORDS", json.dumps([BLOCKED]))


def sign_in(page: Page, name: str) -> str:
    page.fill("#signin-name", name)
    page.click("#signin-go")
    expect(page.locator("#conn")).to_have_text("online")
    return str(page.evaluate("window.opolyx.app.session.player_id"))


def open_chat(page: Page, panel: str) -> None:
    """Unfold a chat panel (folded by default on a phone)."""
    root = page.locator(f"#{panel}")
    expect(root).to_be_visible()
    if "folded" in (root.get_attribute("class") or ""):
        root.locator(".chat-toggle").click()
    expect(root.locator(".chat-form")).to_be_visible()


def say(page: Page, panel: str, text: str) -> None:
    page.fill(f"#{panel} .chat-input", text)
    page.click(f"#{panel} .chat-form button[type=submit]")


@VIEWPORTS
def test_chat_in_the_waiting_room_and_at_the_table(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    host = pages.open(viewport)
    sign_in(host, "Hana")
    guest = pages.open(viewport)
    sign_in(guest, "Gus")
    # the lobby's chat, before anyone is in a room
    open_chat(host, "chat-lobby")
    open_chat(guest, "chat-lobby")
    # the lobby's channel outlives a test (its history too): a text of this run's own
    hello = f"anyone for a game? ({uuid.uuid4().hex[:6]})"
    say(guest, "chat-lobby", hello)
    expect(host.locator("#chat-lobby .chat-text", has_text=hello)).to_be_visible()

    host.select_option("#create-seats", "3")
    host.click("#create-room")
    expect(host.locator("#chat-lobby")).to_be_hidden()  # in a room: the room's chat instead
    room_id = host.evaluate("window.opolyx.app.room.room_id")
    guest.click(f'#rooms li[data-room="{room_id}"] button')
    expect(guest.locator("#members li")).to_have_count(2)

    # the waiting room's chat
    open_chat(host, "chat-room")
    open_chat(guest, "chat-room")
    say(guest, "chat-room", "ready when you are")
    expect(host.locator("#chat-room .chat-text", has_text="ready when you are")).to_be_visible()

    host.click("#add-bot")
    host.click("#start-game")
    for page in (host, guest):
        expect(page.locator("#view-table")).to_be_visible()
    table_id = host.evaluate("window.opolyx.app.table.id")

    # the table's chat: a text and a sticker reach the other player, markup stays text
    open_chat(host, "chat-table")
    say(host, "chat-table", "<b>good luck</b>")
    guest_chat = guest.locator("#chat-table")
    if viewport == PHONE:  # folded on a phone: the badge counts what came in
        expect(guest_chat.locator(".chat-unread")).to_have_text("1")
    open_chat(guest, "chat-table")
    expect(guest_chat.locator(".chat-text", has_text="<b>good luck</b>")).to_be_visible()
    assert guest_chat.locator(".chat-messages b").count() == 0
    host.click("#chat-table .sticker-open")
    host.click('#chat-table .sticker-picker [data-sticker="gg"]')
    expect(guest_chat.locator(".chat-sticker")).to_have_count(1)

    # a blocked word: refused by chat, its code and the catalogue's text shown, not delivered
    say(guest, "chat-table", f"what a {BLOCKED} move")
    error = guest.locator("#chat-table .chat-error")
    expect(error).to_have_attribute("data-code", "chat/blocked_word")
    expect(error).to_have_text("That message contains a word that is not allowed here.")
    say(guest, "chat-table", "sorry")
    expect(host.locator("#chat-table .chat-text", has_text="sorry")).to_be_visible()
    assert host.locator("#chat-table .chat-text", has_text=BLOCKED).count() == 0

    # a spectator reads the players' chat (no spectator chat in this room) and cannot write
    viewer = pages.open(viewport, path=f"/?watch={table_id}")
    sign_in(viewer, "Vera")
    expect(viewer.locator("#view-table")).to_be_visible()
    viewer_chat = viewer.locator("#chat-table")
    if "folded" in (viewer_chat.get_attribute("class") or ""):
        viewer_chat.locator(".chat-toggle").click()
    expect(viewer_chat.locator(".chat-text", has_text="sorry")).to_be_visible()  # history
    expect(viewer_chat.locator(".chat-note")).to_be_visible()
    expect(viewer_chat.locator(".chat-form")).to_be_hidden()
    say(host, "chat-table", "hello audience")
    expect(viewer_chat.locator(".chat-text", has_text="hello audience")).to_be_visible()


def test_send_clicked_twice_or_enter_pressed_twice_posts_once(pages: PageWatch) -> None:
    """Send double clicked, or Enter pressed twice, posts the text once: the second post was
    refused by the chat service as a repeat ("You just sent that.") and shown as an error.
    A sticker clicked twice in one go is sent once too."""
    page = pages.open()
    sent = record_sent(page)
    sign_in(page, "Olga")
    open_chat(page, "chat-lobby")
    messages = page.locator("#chat-lobby .chat-text")
    clicked, entered = (f"{how} ({uuid.uuid4().hex[:6]})" for how in ("clicked", "entered"))

    page.fill("#chat-lobby .chat-input", clicked)
    page.dblclick("#chat-lobby .chat-form button[type=submit]")
    expect(messages.filter(has_text=clicked)).to_have_count(1)
    expect(page.locator("#chat-lobby .chat-input")).to_have_value("")
    page.fill("#chat-lobby .chat-input", entered)
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(messages.filter(has_text=entered)).to_have_count(1)
    page.click("#chat-lobby .sticker-open")
    page.evaluate(TWICE, '#chat-lobby .sticker-picker [data-sticker="gg"]')
    expect(page.locator("#chat-lobby .chat-sticker")).not_to_have_count(0)

    posts = [m for m in all_sent(page, sent) if m["type"] == "chat.post"]
    assert [m.get("text") or m.get("sticker") for m in posts] == [clicked, entered, "gg"], posts
    expect(page.locator("#chat-lobby .chat-error")).to_be_empty()


def publish_finished_game(url: str, table_id: str, winner: str, loser: str) -> None:
    """`winner` beat `loser` in a paying game, published as its table would."""
    game = two_player_game(table_id, winner, loser, rounds=24, at=time.time())

    async def publish() -> None:
        nc = await nats.connect(url)
        try:
            await nc.jetstream().publish(GAME_FINISHED, encode(game))
        finally:
            await nc.drain()

    # Playwright's sync API runs an event loop in this thread: publish from another one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, publish()).result(timeout=30)


@VIEWPORTS
def test_profile_after_a_finished_game_then_follow_a_player(
    pages: PageWatch, viewport: ViewportSize, local: LocalSystem
) -> None:
    page = pages.open(viewport)
    me = sign_in(page, "Mira")
    rival_page = pages.open(viewport)
    rival = sign_in(rival_page, "Rolf")  # connected: the gateway reports Rolf online
    table_id = f"e2e-{me}"
    publish_finished_game(local.layout.nats_url_for("admin"), table_id, me, rival)

    page.click("#open-profile")
    dialog = page.locator("#profile-dialog")
    expect(dialog).to_be_visible()
    # progression credits the game moments after it is published: reopen until it shows
    for _ in range(40):
        xp = dialog.locator(".profile-xp").get_attribute("data-xp", timeout=20_000)
        if xp and int(xp) > 0:
            break
        page.keyboard.press("Escape")
        page.wait_for_timeout(500)
        page.click("#open-profile")
    else:
        pytest.fail("the finished game never showed in the profile")
    # the dialog's five reads run at once: the one that saw the XP may have been the only
    # one after the credit's commit, so read them all again (the board too: the service
    # drops its shared top once a credit is committed, so this read has both players)
    page.keyboard.press("Escape")
    page.click("#open-profile")
    expect(dialog.locator(".profile-level")).to_be_visible()
    expect(dialog.locator(".rank")).not_to_have_count(0)
    expect(dialog.locator("#profile-cards li.card-item")).not_to_have_count(0)  # the win's card
    missions = dialog.locator("#profile-missions li[data-mission]")
    expect(missions).to_have_count(6)  # three daily, three weekly
    # the leaderboard has this player; the rival is on it too, with a follow button (the
    # session's other tests have players on this week's board too: rows are found by id)
    expect(dialog.locator("#profile-board li.me")).to_contain_text("Mira")
    follow = dialog.locator(f'#profile-board li[data-player="{rival}"] button.follow')
    expect(follow).to_have_text("Follow")
    follow.click()
    followed = dialog.locator(f'#profile-follows li[data-player="{rival}"]')
    expect(followed).to_contain_text("Rolf")
    expect(followed.locator(".presence-text")).to_have_text("online")
    expect(dialog.locator(f'#profile-board li[data-player="{rival}"] button.follow')).to_have_text(
        "Unfollow"
    )
    page.click('#profile-board [data-scope="following"]')
    expect(dialog.locator(f'#profile-board li[data-player="{rival}"]')).to_be_visible()


@VIEWPORTS
def test_the_post_game_panel_says_a_short_game_pays_no_xp(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    sign_in(page, "Quinn")
    page.select_option("#create-seats", "2")
    page.click("#create-room")
    page.click("#add-bot")
    page.click("#start-game")
    expect(page.locator("#view-table")).to_be_visible()
    page.once("dialog", lambda confirm: confirm.accept())  # "really resign?"
    expect(page.locator("#resign")).to_be_enabled()
    page.click("#resign")
    # the bot is the last one standing: the results open, with what the game paid
    expect(page.locator("#end-dialog")).to_be_visible()
    panel = page.locator("#postgame")
    expect(panel.locator(".postgame-none")).to_have_attribute("data-reason", "too_short")
    expect(panel.locator(".postgame-none")).to_have_text("No XP: the game ended before round 20.")
