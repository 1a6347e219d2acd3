"""The web client's message catalogues are complete: every language has every area and key
English has, with the same placeholders, the plural forms its language needs, and every key
the client's code asks for exists."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from client_files import I18N, STATIC, client_scripts
from opolyx_rules import board, modes

PLACEHOLDER = re.compile(r"\{(\w+)\}")
CATEGORIES = {"zero", "one", "two", "few", "many", "other"}
# Plural categories each language's integers use (CLDR, as Intl.PluralRules selects them).
NEEDED = {
    "en": {"one", "other"},
    "de": {"one", "other"},
    "fr": {"one", "other"},
    "es": {"one", "other"},
    "it": {"one", "other"},
    "pt": {"one", "other"},
    "nl": {"one", "other"},
    "pl": {"one", "few", "many", "other"},
    "tr": {"one", "other"},
    "ru": {"one", "few", "many", "other"},
    "ar": {"zero", "one", "two", "few", "many", "other"},
    "zh": {"other"},
}
# t("area.key") with a literal key in the client's modules
KEY_CALL = re.compile(r"""\bt\(\s*["']([a-z_]+\.[A-Za-z0-9_.-]+)["']""")
KEY_ATTR = re.compile(r"""data-i18n(?:-attr)?="([^"]+)\"""")

Message = str | dict[str, str]


def index() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((I18N / "index.json").read_text(encoding="utf-8"))
    return data


def flatten(prefix: str, value: Any, into: dict[str, Message]) -> None:
    """The loader's rule (i18n.js): nested objects join with dots; an object whose keys
    are plural categories (with "other") is one plural message."""
    if isinstance(value, str):
        into[prefix] = value
        return
    assert isinstance(value, dict), f"{prefix}: {value!r} is neither text nor an object"
    if value and "other" in value and set(value) <= CATEGORIES:
        into[prefix] = value
        return
    for key, item in value.items():
        flatten(f"{prefix}.{key}", item, into)


def catalogue(lang: str) -> dict[str, Message]:
    messages: dict[str, Message] = {}
    for area in index()["areas"]:
        path = I18N / lang / f"{area}.json"
        assert path.exists(), f"{lang} has no {area}.json"
        flatten(area, json.loads(path.read_text(encoding="utf-8")), messages)
    return messages


def placeholders(message: Message) -> set[str]:
    texts = [message] if isinstance(message, str) else list(message.values())
    found: set[str] = set()
    for text in texts:
        found |= set(PLACEHOLDER.findall(text))
    return found


def forms(message: Message) -> list[str]:
    return [message] if isinstance(message, str) else list(message.values())


LANGUAGES = sorted(index()["languages"])
OWN_SQUARE_NAME = re.compile(r"^board\.([a-z]+)\.(\d+)$")


def own_square_name(key: str) -> bool:
    """A language may name a mode's squares itself ("board.fortuna.39") where English
    keeps the server's names (Fortuna's come from the rules' board)."""
    match = OWN_SQUARE_NAME.match(key)
    return match is not None and match[1] in modes.MODES and int(match[2]) < len(board.SQUARES)


def test_chinese_names_fortunas_squares_in_chinese() -> None:
    zh = catalogue("zh")
    for square in board.FORTUNA_NAMES:
        name = zh.get(f"board.fortuna.{square}")
        assert isinstance(name, str) and re.fullmatch(r"[\u4e00-\u9fff]+", name), square


def test_the_twelve_languages_are_listed_with_their_direction() -> None:
    languages = index()["languages"]
    assert set(languages) == set(NEEDED)
    assert {code for code, info in languages.items() if info["dir"] == "rtl"} == {"ar"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_is_there_with_the_same_placeholders(lang: str) -> None:
    english = catalogue("en")
    other = catalogue(lang)
    assert sorted(set(english) - set(other)) == [], f"{lang} lacks these keys"
    extra = {k for k in set(other) - set(english) if not own_square_name(k)}
    assert sorted(extra) == [], f"{lang} has keys English has not"
    for key, message in english.items():
        assert placeholders(other[key]) == placeholders(message), f"{lang} {key}"
        for text in forms(other[key]):
            assert text.strip(), f"{lang} {key} is empty"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_messages_have_the_forms_of_their_language(lang: str) -> None:
    english = catalogue("en")
    other = catalogue(lang)
    for key, message in english.items():
        if isinstance(message, dict):
            assert isinstance(other[key], dict), f"{lang} {key} must be a plural object"
        if isinstance(other[key], dict):
            missing = NEEDED[lang] - set(other[key])
            assert not missing, f"{lang} {key} lacks the plural forms {sorted(missing)}"


def test_translations_are_not_english_copies() -> None:
    english = catalogue("en")
    for lang in LANGUAGES:
        if lang == "en":
            continue
        other = catalogue(lang)
        same = [
            k for k, v in english.items() if isinstance(v, str) and len(v) > 12 and other[k] == v
        ]
        # a few long strings may match (names, formulas), whole areas may not
        assert len(same) <= len(english) // 50, f"{lang} copies English for {same[:10]}"


def test_every_key_the_client_asks_for_exists() -> None:
    english = catalogue("en")
    used: set[str] = set()
    for path in client_scripts():
        used |= set(KEY_CALL.findall(path.read_text(encoding="utf-8")))
    for match in KEY_ATTR.findall((STATIC / "index.html").read_text(encoding="utf-8")):
        used |= {part.split(":")[-1].strip() for part in match.split(";")}
    assert "ui.lobby.no_rooms" in used and "log.rolled" in used
    areas = tuple(f"{area}." for area in index()["areas"])
    missing = sorted(k for k in used if k.startswith(areas) and k not in english)
    assert missing == []
