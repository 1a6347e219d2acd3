"""The installable app and its sounds, in a real browser against the real services: the
service worker keeps the shell, the page says it is offline and carries on by itself when
the network is back, the icons are real PNGs, and the mute switch is remembered while the
table's events play their cues. Each test runs at the desktop and the phone size."""

from __future__ import annotations

import contextlib
import struct
import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, ViewportSize, expect

from .client_steps import SEQ, sign_in, start_game_with_bots, table_seq
from .conftest import DESKTOP, PageWatch, on_desktop_and_phone

CONTROLLED = "() => Boolean(navigator.serviceWorker && navigator.serviceWorker.controller)"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def act(page: Page, selector: str) -> None:
    """Click a decision button and wait for the state after it (predicates are functions:
    the page's CSP allows no string evaluation)."""
    before = table_seq(page)
    page.click(selector)
    page.wait_for_function(f"() => {SEQ} > {before}")


def wait_until_controlled(page: Page) -> None:
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.wait_for_function(CONTROLLED)


@on_desktop_and_phone(DESKTOP)
def test_the_app_installs_and_rides_out_going_offline(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    sign_in(page, "Nomad")
    wait_until_controlled(page)
    worker = page.request.get(pages.base_url.rstrip("/") + "/sw.js")
    assert worker.ok
    assert worker.headers["service-worker-allowed"] == "/"
    assert "no-cache" in worker.headers["cache-control"]
    version = worker.headers["x-opolyx-shell-version"]
    assert len(version) == 16 and f'"{version}"' in worker.text()
    # the manifest names PNG icons of 192 and 512 pixels and a maskable one
    manifest = page.request.get(pages.base_url.rstrip("/") + "/manifest.webmanifest").json()
    icons = {(i["sizes"], i["purpose"]): i["src"] for i in manifest["icons"]}
    for (sizes, _purpose), src in icons.items():
        if sizes == "any":
            continue
        body = page.request.get(pages.base_url.rstrip("/") + src).body()
        width, height = png_size(body)
        assert f"{width}x{height}" == sizes, src
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= set(icons)

    offline = page.locator("#offline")
    expect(offline).to_be_hidden()
    page.context.set_offline(True)
    expect(offline).to_be_visible()
    expect(offline).to_contain_text("You are offline")
    # the shell comes from the service worker: a reload without a network still opens
    page.reload()
    expect(offline).to_be_visible()
    expect(page.locator("#offline-title")).to_have_text("You are offline")
    page.context.set_offline(False)
    # it carries on by itself: the screen goes once the socket is back
    expect(offline).to_be_hidden(timeout=30_000)
    expect(page.locator("#conn")).to_have_text("online")
    expect(page.locator("#view-lobby")).to_be_visible()
    expect(page.locator("#create-room")).to_be_enabled()


MY_DECISIONS = ", ".join(
    f"#decision [data-cmd={kind}]"
    for kind in ("roll", "buy", "pay", "jackpot_decline", "bus", "teleport", "pass")
)


def play_until(page: Page, condition: str, timeout: float = 90) -> None:
    """Take my decisions (roll, buy, pay...) as they come until `condition` (a JS
    expression) holds; the bot plays its own turns meanwhile."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({condition})"):
        assert time.monotonic() < deadline, f"never: {condition}"
        button = page.locator(MY_DECISIONS)
        if button.count():
            # the decision may go away meanwhile (its timeout): then look again
            with contextlib.suppress(PlaywrightError):
                act(page, f"{MY_DECISIONS} >> nth=0")
        else:
            time.sleep(0.2)


@on_desktop_and_phone(DESKTOP)
def test_mute_is_remembered_and_cues_follow_the_live_events(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    sign_in(page, "Hearer")
    mute = page.locator("#mute")
    expect(mute).to_have_attribute("aria-pressed", "false")
    start_game_with_bots(page, bots=1)
    # the dice of every live roll play, and my own turn announces itself
    play_until(page, "window.opolyx.sound.played.roll >= 1 && window.opolyx.sound.played.turn >= 1")
    assert page.evaluate("() => Object.keys(window.opolyx.sound.muted).length") == 0

    page.locator("#mute").click()
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "true")
    page.reload()
    expect(page.locator("#view-table")).to_be_visible()
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("() => localStorage.getItem('opolyx.muted')") == "1"
    # the log replayed on the reload plays nothing; live rolls now count as muted only
    assert page.evaluate("() => Object.keys(window.opolyx.sound.played).length") == 0
    play_until(page, "window.opolyx.sound.muted.roll >= 1")
    assert page.evaluate("() => window.opolyx.sound.played.roll || 0") == 0
    # and back on, remembered too
    page.locator("#mute").click()
    expect(page.locator("#mute")).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("() => localStorage.getItem('opolyx.muted')") == "0"


@on_desktop_and_phone(DESKTOP)
def test_a_new_version_offers_a_reload_and_takes_over(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    sign_in(page, "Updater")
    wait_until_controlled(page)
    # a deploy, as the browser sees it: another worker script for the same scope (its
    # address differs, so it installs beside the running one and waits)
    page.evaluate("() => navigator.serviceWorker.register('/sw.js?deploy=2', { scope: '/' })")
    bar = page.locator("#update-bar")
    expect(bar).to_be_visible(timeout=30_000)
    expect(bar).to_contain_text("A new version of opolyx is ready.")
    with page.expect_navigation():
        page.click("#update-reload")
    expect(page.locator("#view-lobby")).to_be_visible()
    page.wait_for_function(CONTROLLED)
    script = page.evaluate("() => navigator.serviceWorker.controller.scriptURL")
    assert script.endswith("/sw.js?deploy=2")
    expect(page.locator("#update-bar")).to_have_count(0)
