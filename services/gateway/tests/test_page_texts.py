"""Every text a player can read in the client's pages comes from the catalogues.

A text node of the HTML sits in an element with `data-i18n`, and every readable attribute
(aria-label, title, placeholder, alt, a meta description) is set by `data-i18n-attr`; the
only exceptions are the brand name and symbols. (index.html's "Autopilot for me" switch had
an English label and no key: it stayed English until the table first drew it.) The client's
modules build texts with t(); a string literal that reads as an English sentence in a
module's code is a text that escaped the catalogues."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from client_files import STATIC, client_scripts

READABLE_ATTRS = ("aria-label", "title", "placeholder", "alt", "content")
NOT_WORDS = {"opolyx", "opolyx replay"}  # the brand, the same in every language
WORD = re.compile(r"[^\W\d_]{2,}")


class Texts(HTMLParser):
    """(line, text) of every readable text the page has without a catalogue key."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []  # (tag, its text comes from a key)
        self.found: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        keyed_attrs = {
            pair.split(":")[0].strip() for pair in (values.get("data-i18n-attr") or "").split(";")
        }
        for attr in READABLE_ATTRS:
            text = values.get(attr)
            if attr == "content" and values.get("name") != "description":
                continue
            if text and WORD.search(text) and attr not in keyed_attrs:
                self.found.append((self.getpos()[0], f"{tag}[{attr}]={text!r}"))
        if tag not in {"meta", "link", "input", "br", "img", "source"}:
            self.stack.append((tag, "data-i18n" in values))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if not text or not WORD.search(text) or text.lower() in NOT_WORDS:
            return
        if self.stack and self.stack[-1][0] in {"script", "style", "code"}:
            return  # code, and a command to type, read the same in every language
        if not (self.stack and self.stack[-1][1]):
            self.found.append((self.getpos()[0], repr(text)))


@pytest.mark.parametrize("page", ["index.html", "replay.html"])
def test_every_text_of_the_page_has_a_catalogue_key(page: str) -> None:
    parser = Texts()
    parser.feed((STATIC / page).read_text(encoding="utf-8"))
    assert parser.found == []


# An English sentence: a capital, then words with spaces ("Sign-in failed", "Autopilot for me").
SENTENCE = re.compile(r'"([A-Z][a-z]+(?:[ -][a-z]+)+[.!?]?)"')


def test_no_module_builds_an_english_sentence() -> None:
    found = []
    for path in client_scripts():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            found += [f"{path.name}:{number} {text}" for text in SENTENCE.findall(code)]
    assert found == []


def test_the_checks_find_what_they_look_for() -> None:
    parser = Texts()
    page = '<p>Hello there</p><button data-i18n="ui.x">Key</button><input placeholder="Type here">'
    parser.feed(page)
    assert [text for _, text in parser.found] == ["'Hello there'", "input[placeholder]='Type here'"]
    assert SENTENCE.findall('throw new Error("Renewal failed")') == ["Renewal failed"]
