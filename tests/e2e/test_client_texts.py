"""What the client's pages say comes from the catalogues, in the player's language, in a real
browser against the real services: an "advance to" event card names its square as the board
does (Fortuna's names in Chinese too); every error code the gateway serves reads as a
sentence in every language, and the trade dialog's verdict on an unfair offer is the
catalogue's; no text of the lobby or the table (hidden ones included, like the autopilot
switch) is English or a bare key in German or Arabic.

A card drawn is fed to the page's own reducer on top of a real game (the dice decide which
card comes), as in test_client_bugs."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from .client_steps import sign_in, start_game_with_bots, wait_for_my_roll
from .conftest import DESKTOP, PageWatch
from .test_client_bugs import inject


def card(seat: int, number: int) -> dict[str, Any]:
    return {"type": "card_drawn", "seat": seat, "card": number, "text": "x", "reshuffled": False}


def board_name(page: Page, square: int) -> str:
    name: str = page.evaluate(f"window.opolyx.app.board[{square}].name")
    return name


def test_an_advance_card_names_its_square_as_the_board_does(pages: PageWatch) -> None:
    page = pages.open(DESKTOP)
    sign_in(page, "Cato")
    start_game_with_bots(page, bots=1)
    # the game waits for this seat's roll, so no card the bot draws replaces the injected one
    wait_for_my_roll(page)
    banner = page.locator("#card-drawn")
    for number, square in ((10, 11), (11, 24), (12, 39)):
        inject(page, card(1, number))
        name = board_name(page, square)
        expect(banner).to_contain_text(f"“Advance to {name}”")
        expect(page.locator("#log li.card").first).to_contain_text(f"Advance to {name}")
        assert not re.search(r"\d", banner.inner_text().split("“")[1]), banner.inner_text()
    page.select_option("#lang", "de")
    expect(banner).to_contain_text(f"Rücken Sie vor bis {board_name(page, 39)}")


def test_fortuna_in_chinese_names_its_squares_and_cards_in_chinese(pages: PageWatch) -> None:
    page = pages.open(DESKTOP, path="/?lang=zh")
    sign_in(page, "Mei")
    start_game_with_bots(page, bots=1, mode="fortuna")
    expect(page.locator("#board [data-square='39']")).to_have_attribute(
        "aria-label", re.compile("紫金宫")
    )
    inject(page, card(1, 12))
    expect(page.locator("#card-drawn")).to_contain_text("前进到紫金宫")
    expect(page.locator("#glance")).to_contain_text("福运奖池")
    expect(page.locator("#board")).not_to_contain_text("Zijin")


def test_every_served_error_code_reads_as_a_sentence_in_every_language(
    pages: PageWatch,
) -> None:
    page = pages.open(DESKTOP)
    sign_in(page, "Eda")
    texts: dict[str, dict[str, str]] = page.evaluate(
        """async () => {
          const constants = await import('/js/constants.js');
          const i18n = await import('/js/i18n.js');
          const { errorText } = await import('/js/actions.js');
          const codes = Object.entries(constants)
            .filter(([group]) => group === 'ERRORS' || group.endsWith('_ERRORS'))
            .flatMap(([, values]) => Object.values(values));
          const out = {};
          for (const { code: lang } of i18n.languages()) {
            await i18n.setLanguage(lang, { remember: false });
            out[lang] = Object.fromEntries(codes.map((code) => [code, errorText({ code })]));
          }
          await i18n.setLanguage('en', { remember: false });
          return out;
        }"""
    )
    assert len(texts) == 12
    english = texts["en"]
    assert english["trade/unfair"] == "That trade breaks the fairness rule."
    assert len(english) > 100
    for lang, by_code in texts.items():
        for code, text in by_code.items():
            # a sentence of the catalogue: not the code, no key, not the general fallback
            assert code not in text and "ui.errors" not in text, (lang, code, text)
            if lang != "en":
                assert text != english[code], (lang, code, text)


def test_the_trade_dialog_tells_an_unfair_offer_in_words(pages: PageWatch) -> None:
    page = pages.open(DESKTOP, path="/?lang=fr")
    sign_in(page, "Faye")
    start_game_with_bots(page, bots=1)
    wait_for_my_roll(page)  # offers are made on one's turn before rolling
    page.click("#open-trade")
    expect(page.locator("#trade-dialog")).to_be_visible()
    page.fill("#trade-take-cash", "1000")  # something for nothing
    verdict = page.locator("#trade-fairness")
    expect(verdict).to_contain_text("Interdit")  # ui.trade.unfair in French
    expect(verdict).not_to_contain_text("trade/")
    expect(page.locator("#trade-send")).to_be_disabled()
    page.keyboard.press("Escape")


# Every readable text of the page, hidden ones included: text nodes and the attributes a
# screen reader or a tooltip reads.
PAGE_TEXTS = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && ['SCRIPT', 'STYLE', 'CODE'].includes(parent.tagName)) continue;
    const text = node.textContent.trim();
    if (text) out.push(text);
  }
  for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
    for (const attr of ['aria-label', 'title', 'placeholder']) {
      const text = (el.getAttribute(attr) || '').trim();
      if (text) out.push(text);
    }
  }
  return out;
}"""

ENGLISH = """async () => {
  const index = await (await fetch('/i18n/index.json')).json();
  const read = async (lang) => {
    const out = {};
    const flat = (prefix, value) => {
      if (typeof value === 'string') out[prefix] = value;
      else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) flat(`${prefix}.${k}`, v);
    };
    for (const area of index.areas)
      flat(area, await (await fetch(`/i18n/${lang}/${area}.json`)).json());
    return out;
  };
  return { en: await read('en'), here: await read(document.documentElement.lang) };
}"""

RAW_KEY = re.compile(r"^[a-z]+(\.[a-z0-9_]+){1,}$|^[a-z]+/[a-z_]+$")


def untranslated(page: Page) -> list[str]:
    """Texts of the page that are an English catalogue message its language translates
    differently, or a bare catalogue key or error code."""
    catalogues: dict[str, dict[str, str]] = page.evaluate(ENGLISH)
    translated = set(catalogues["here"].values())  # "Speed" is a German word as well
    english = {
        text
        for key, text in catalogues["en"].items()
        if "{" not in text and catalogues["here"].get(key, text) != text
    } - translated
    texts = set(page.evaluate(PAGE_TEXTS)) - translated
    return sorted(t for t in texts if t in english or RAW_KEY.match(t))


def test_no_text_of_the_lobby_or_the_table_escapes_the_catalogues(pages: PageWatch) -> None:
    for lang in ("de", "ar"):
        page = pages.open(DESKTOP, path=f"/?lang={lang}")
        sign_in(page, f"Lin{lang}")
        assert untranslated(page) == [], lang  # the lobby, with the table's hidden parts
        start_game_with_bots(page, bots=1)  # waits for the players and the board drawn
        expect(page.locator("#log li").first).to_be_visible()
        assert untranslated(page) == [], lang
