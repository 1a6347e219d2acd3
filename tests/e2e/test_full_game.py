"""A whole paying game in real browsers: two signed-in players (one at 1366x860, one on a
390x844 phone) and a bot play Blitz (round limit 25, RULES.md R2) to its end through the real
system, both players on "autopilot for me"; each follows the other from the table's player
list. After the game each one's post-game panel shows the XP gained and where the missions
stand, the profile's XP and mission bars moved by the same amounts, and the followed player
is in the follows list and on the "following" leaderboard. One game for both viewports:
a game is most of the test's time.

A game pays only from round 20 (R20), so it must really be played to its end. Its own system
(started for this module) asks the bots at once (`OPOLYX_TABLE__BOT_PACE=0`: no think time
between decisions, which at the real pace makes 25 rounds last minutes); the game itself is
the one `make run` plays."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import nats
import pytest
from opolyx_contracts.subjects import GAME_FINISHED, GAMES_STREAM
from opolyx_contracts.table import GameFinished
from opolyx_progression.crediting import plan_game
from opolyx_progression.events import read_game_events
from opolyx_progression.missions import assigned
from opolyx_progression.stats import game_stats
from opolyx_rules.progression import level_for_xp, xp_for_level
from opolyx_testing.streams import read_stored
from playwright.sync_api import Locator, Page, expect

from .conftest import PHONE, WIDE, LocalSystem, PageWatch, local_system

GAME_TIMEOUT_MS = 240_000
"""A 25-round Blitz game of three seats with the bots asked at once took 140 s at load 22."""
CREDIT_TIMEOUT_MS = 40_000


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """A whole local opolyx (scripts/run_local.py) whose tables ask the bots at once."""
    data_dir = tmp_path_factory.mktemp("opolyx-full-game")
    with local_system(data_dir, {"OPOLYX_TABLE__BOT_PACE": "0"}) as system:
        yield system


@dataclass(frozen=True)
class Credited:
    """What one new player's profile must show after the game."""

    xp: int
    missions: dict[str, int]
    """Mission id -> progress, for every mission the player has this day and week."""


def credits_of_game(local: LocalSystem, table_id: str) -> dict[str, Credited]:
    """Player id -> what progression credits each human seat of the finished game, worked
    out from what progression itself reads (the game's `GameFinished` and its events, read
    as the admin) by progression's own planning. The players are new: no XP and no mission
    progress before, and a first game meets nobody often enough to be flagged.

    Each player's missions are picked by a hash of their (random) id, so which of them this
    game moves differs from run to run: a seat that loses on autopilot may move none. The
    test therefore asks what each mission must show instead of expecting one to move."""

    async def read() -> dict[str, Credited]:
        nc = await nats.connect(local.layout.nats_url_for("admin"))
        try:
            games = await read_stored(nc, GAMES_STREAM, GAME_FINISHED, GameFinished, timeout=10)
            (finished,) = [game for game in games if game.table_id == table_id]
            batches = await read_game_events(
                nc.jetstream(), table_id, finished.last_seq, timeout=10
            )
        finally:
            await nc.close()
        stats = game_stats(batches, winner=finished.winner)
        credited: dict[str, Credited] = {}
        for credit in plan_game(finished, stats, {}, {}, flagged=False, new_seed=lambda: 0):
            missions = {
                a.mission.mission_id: 0 for a in assigned(credit.player_id, finished.finished_at)
            }
            missions.update({step.mission_id: step.progress for step in credit.missions})
            credited[credit.player_id] = Credited(credit.xp, missions)
        return credited

    with ThreadPoolExecutor(1) as pool:  # its own event loop, beside Playwright's
        return pool.submit(asyncio.run, read()).result(timeout=60)


def sign_in(page: Page, name: str) -> str:
    page.fill("#signin-name", name)
    page.click("#signin-go")
    expect(page.locator("#conn")).to_have_text("online")
    expect(page.locator("#view-lobby")).to_be_visible()
    return str(page.evaluate("window.opolyx.app.session.player_id"))


def int_attr(page: Page, selector: str, name: str) -> int:
    value = page.locator(selector).get_attribute(name)
    assert value is not None, f"{selector} has no {name}"
    return int(value)


def missions_progress(page: Page, selector: str) -> dict[str, int]:
    """Mission id -> progress, as the list under `selector` shows it."""
    items = page.locator(f"{selector} li[data-mission]")
    expect(items.first).to_be_visible()
    return {
        str(li.get_attribute("data-mission")): int(str(li.get_attribute("data-progress")))
        for li in items.all()
    }


def test_a_blitz_game_to_its_end_pays_xp_and_missions_and_the_players_follow_each_other(
    pages: PageWatch, local: LocalSystem
) -> None:
    quinn = pages.open(WIDE)
    quinn_id = sign_in(quinn, "Quinn")
    vera = pages.open(PHONE)
    vera_id = sign_in(vera, "Vera")

    quinn.select_option("#create-mode", "blitz")
    quinn.select_option("#create-seats", "3")
    quinn.click("#create-room")
    expect(quinn.locator("#members li")).to_have_count(1, timeout=20_000)
    room_id = quinn.evaluate("window.opolyx.app.room.room_id")
    vera.click(f'#rooms li[data-room="{room_id}"] button')
    expect(quinn.locator("#members li")).to_have_count(2, timeout=20_000)
    quinn.click("#add-bot")
    expect(quinn.locator("#members li")).to_have_count(3, timeout=20_000)
    quinn.click("#start-game")
    for page in (quinn, vera):
        expect(page.locator("#view-table")).to_be_visible()
        expect(page.locator("#players li")).to_have_count(3)

    # The players list offers to follow the other human only: not oneself, not the bot.
    follows: dict[Page, Locator] = {}
    for page, other, other_name in ((quinn, vera, "Vera"), (vera, quinn, "Quinn")):
        seat = other.evaluate("window.opolyx.app.table.seat")
        follow = page.locator(f"#players li[data-seat='{seat}'] button.follow")
        expect(follow).to_have_text("Follow")
        expect(follow).to_have_attribute("aria-label", f"Follow {other_name}")
        expect(page.locator("#players button.follow")).to_have_count(1)
        follow.click()
        expect(follow).to_have_text("Following")
        expect(follow).to_have_attribute("aria-pressed", "true")
        follows[page] = follow

    # Both hand their seats to the autopilot; the game plays on to its round limit.
    for page in (quinn, vera):
        toggle = page.locator("#autopilot-toggle")
        toggle.click()
        expect(toggle).to_have_attribute("aria-pressed", "true")
    for page in (quinn, vera):
        expect(page.locator("#end-dialog")).to_be_visible(timeout=GAME_TIMEOUT_MS)
    state = quinn.evaluate("window.opolyx.app.table.view.state")
    assert state["finished"] and state["round"] >= 20, f"ended in round {state['round']}"
    # Once a post-game panel shows XP, progression has read the game: so can the test.
    expect(quinn.locator("#postgame .postgame-xp")).to_be_visible(timeout=CREDIT_TIMEOUT_MS)
    credited = credits_of_game(local, str(quinn.evaluate("window.opolyx.app.watching")))
    assert set(credited) == {quinn_id, vera_id}

    for page, me, me_id, other_id, other_name in (
        (quinn, "Quinn", quinn_id, vera_id, "Vera"),
        (vera, "Vera", vera_id, quinn_id, "Quinn"),
    ):
        # The post-game panel: the XP this game paid, and the missions after it.
        gained = page.locator("#postgame .postgame-xp")
        expect(gained).to_be_visible(timeout=CREDIT_TIMEOUT_MS)
        xp = int_attr(page, "#postgame .postgame-xp", "data-xp")
        assert xp > 0
        assert xp == credited[me_id].xp
        after_game = missions_progress(page, "#postgame .postgame-progress")
        assert after_game == credited[me_id].missions
        expect(follows[page]).to_have_text("Following")  # still, at the finished table

        # The profile: the same XP (a new player: all of it from this game), the XP bar and
        # the mission bars at the credited progress, the followed player on the follows list
        # and the board.
        page.locator("#end-dialog").evaluate("dialog => dialog.close()")
        page.click("#open-profile")
        dialog = page.locator("#profile-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator(".profile-xp")).to_have_attribute("data-xp", str(xp))
        level = level_for_xp(xp)  # the rules' level table (R20), not one of the test's own
        expect(dialog.locator(".profile-level")).to_have_attribute("data-level", str(level))
        bar = dialog.locator("progress.xp-bar")
        assert float(str(bar.get_attribute("value"))) == xp - xp_for_level(level)
        span = xp_for_level(level + 1) - xp_for_level(level)
        assert float(str(bar.get_attribute("max"))) == span
        assert missions_progress(page, "#profile-missions") == after_game
        for mission in dialog.locator("#profile-missions li[data-mission]").all():
            progress = after_game[str(mission.get_attribute("data-mission"))]
            assert float(str(mission.locator("progress").get_attribute("value"))) == progress
        followed = dialog.locator(f'#profile-follows li[data-player="{other_id}"]')
        expect(followed).to_contain_text(other_name)
        page.click('#profile-board [data-scope="following"]')
        board = dialog.locator("#profile-board")
        expect(board.locator(f'li[data-player="{other_id}"]')).to_contain_text(other_name)
        expect(board.locator("li.me")).to_contain_text(me)
        expect(board.locator("li[data-player]")).to_have_count(2)
