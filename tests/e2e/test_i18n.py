"""The client in 12 languages: chosen from the browser (ar-EG -> Arabic), ?lang= overrides,
the top bar switches and the choice survives a reload; Arabic is right-to-left with the
panels mirrored and nothing overlapping. A screenshot per viewport and language is kept in
test-artifacts/."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, ViewportSize, expect

from .client_steps import (
    LANGUAGES,
    message,
    outside_viewport,
    overlaps,
    screenshot,
    sign_in,
    start_game_with_bots,
)
from .conftest import DESKTOP, PHONE, PageWatch, on_desktop_and_phone

# Containers whose visible children must not overlap, on the lobby and on the table.
LOBBY_PARTS = [
    ".topbar",
    ".who",
    ".lobby",
    "#create-form",
    "#join-code-form",
    ".card-head",
    ".rooms li",
]
TABLE_PARTS = [".topbar", ".who", ".table-view", ".side", ".tools", ".players li", ".center-top"]


def expect_language(page: Page, lang: str, direction: str = "ltr") -> None:
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("html")).to_have_attribute("dir", direction)
    # an app installed from the page describes itself in the page's language
    manifest = page.locator('link[rel="manifest"]')
    expect(manifest).to_have_attribute("href", f"/manifest.webmanifest?lang={lang}")


def linked_manifest(page: Page) -> dict[str, str]:
    """The manifest the page links now, as the browser fetches it to install the app."""
    manifest: dict[str, str] = page.evaluate(
        """() => fetch(document.querySelector('link[rel="manifest"]').href)
                 .then((response) => response.json())"""
    )
    return manifest


@on_desktop_and_phone()
def test_the_language_switch_is_remembered_across_a_reload(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport, locale="en-US")
    expect_language(page, "en")
    expect(page.locator("#signin-title")).to_have_text(message("en", "ui", "signin.title"))
    page.select_option("#lang", "de")
    expect_language(page, "de")
    expect(page.locator("#signin-title")).to_have_text(message("de", "ui", "signin.title"))
    manifest = linked_manifest(page)
    assert (manifest["lang"], manifest["description"]) == (
        "de",
        message("de", "ui", "meta.description"),
    )
    expect(page.locator("#signin-name")).to_have_attribute(
        "placeholder", message("de", "ui", "signin.placeholder")
    )
    sign_in(page, "Greta")
    expect(page.locator("#create-room")).to_have_text(message("de", "ui", "lobby.create"))
    page.reload()
    expect_language(page, "de")
    expect(page.locator("#lang")).to_have_value("de")
    expect(page.locator("#create-room")).to_have_text(message("de", "ui", "lobby.create"))
    # and back: the page follows at once, without a reload
    page.select_option("#lang", "en")
    expect_language(page, "en")
    expect(page.locator("#create-room")).to_have_text(message("en", "ui", "lobby.create"))


@on_desktop_and_phone()
def test_arabic_from_the_browser_is_right_to_left_and_nothing_overlaps(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport, locale="ar-EG")
    expect_language(page, "ar", "rtl")
    expect(page.locator("#signin-go")).to_have_text(message("ar", "ui", "signin.go"))
    sign_in(page, "Salma")
    expect(page.locator("#create-room")).to_have_text(message("ar", "ui", "lobby.create"))
    assert overlaps(page, ", ".join(LOBBY_PARTS)) == []
    assert outside_viewport(page, ".topbar *, .lobby *") == []
    # mirrored: the brand is at the right end of the top bar, the controls at the left
    brand = page.locator(".brand").bounding_box()
    who = page.locator(".who").bounding_box()
    assert brand and who and brand["x"] > who["x"]

    start_game_with_bots(page, bots=2)
    expect(page.locator("#leave-table")).to_have_text(message("ar", "ui", "table.back_to_lobby"))
    expect(page.locator("#log li").last).to_have_text(message("ar", "log", "table_created"))
    assert overlaps(page, ", ".join(TABLE_PARTS)) == []
    assert outside_viewport(page, ".topbar *, .side *") == []
    board = page.locator(".board-wrap").bounding_box()
    side = page.locator(".side").bounding_box()
    assert board and side
    if viewport != PHONE:
        # the side panel sits left of the board in a right-to-left page
        assert side["x"] + side["width"] <= board["x"] + 1
    else:
        assert side["y"] >= board["y"] + board["height"] - 1
    # the board itself keeps its layout: Start is still the bottom-right corner
    start = page.locator("#board .sq[data-square='0']").bounding_box()
    assert start and start["x"] > board["x"] + board["width"] / 2


def test_lang_in_the_address_overrides_the_browser(pages: PageWatch) -> None:
    page = pages.open(DESKTOP, path="/?lang=ar", locale="de-DE")
    expect_language(page, "ar", "rtl")
    expect(page.locator("#signin-title")).to_have_text(message("ar", "ui", "signin.title"))
    other = pages.open(DESKTOP, path="/", locale="de-DE")
    expect_language(other, "de")
    unknown = pages.open(DESKTOP, path="/?lang=xx", locale="fr-CA")
    expect_language(unknown, "fr")


@on_desktop_and_phone()
def test_every_language_labels_the_lobby_and_the_table(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    """One screenshot per viewport and language (lobby and table) in test-artifacts/."""
    page = pages.open(viewport, locale="en-US")
    sign_in(page, "Polyglot")
    shots: list[Path] = []
    for lang in LANGUAGES:
        page.select_option("#lang", lang)
        expect_language(page, lang, "rtl" if lang == "ar" else "ltr")
        expect(page.locator("#create-room")).to_have_text(message(lang, "ui", "lobby.create"))
        expect(page.locator("#refresh-rooms")).to_have_text(message(lang, "ui", "lobby.refresh"))
        shots.append(screenshot(page, f"i18n-lobby-{viewport['width']}-{lang}"))
    page.select_option("#lang", "en")
    start_game_with_bots(page, bots=2)
    for lang in LANGUAGES:
        page.select_option("#lang", lang)
        expect_language(page, lang, "rtl" if lang == "ar" else "ltr")
        expect(page.locator("#open-manage")).to_have_text(
            message(lang, "ui", "table.my_properties")
        )
        # the log is re-told in the new language, from its first line on
        expect(page.locator("#log li").last).to_have_text(message(lang, "log", "table_created"))
        label = page.locator("#board .sq[data-square='10'] .nm")
        expect(label).to_have_text(message(lang, "ui", "board.jail"))
        assert overlaps(page, ", ".join(TABLE_PARTS)) == [], lang
        shots.append(screenshot(page, f"i18n-table-{viewport['width']}-{lang}"))
    assert all(p.stat().st_size > 0 for p in shots) and len(shots) == 2 * len(LANGUAGES)
