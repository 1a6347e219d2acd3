# ruff: noqa: RUF001  (look-alike letters are what these tests are about)
"""The moderation rules, table-driven, on an in-memory clock."""

from __future__ import annotations

import pytest
from opolyx_chat.moderation import ModerationRules, Moderator, normalise
from opolyx_contracts.chat import (
    CHAT_BAD_REQUEST,
    CHAT_BLOCKED_WORD,
    CHAT_DUPLICATE,
    CHAT_RATE_LIMITED,
    CHAT_TOO_LONG,
)
from opolyx_contracts.errors import ContractError

BLOCKED = ModerationRules.blocked_from(["badword", "very rude"])


def moderator(**rules: object) -> Moderator:
    return Moderator(ModerationRules(blocked=BLOCKED, **rules))  # type: ignore[arg-type]


def code_of(mod: Moderator, text: str | None, sticker: str | None = None, now: float = 0) -> str:
    try:
        mod.check("p1", "lobby", text, sticker, now)
    except ContractError as exc:
        return exc.code
    return "ok"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello there", "ok"),
        ("<b>bold</b> & <script>x</script>", "ok"),  # markup is text, not refused
        ("", CHAT_BAD_REQUEST),
        ("   ", CHAT_BAD_REQUEST),
        ("x" * 300, "ok"),
        ("x" * 301, CHAT_TOO_LONG),
        ("line\nbreak", CHAT_BAD_REQUEST),
        ("bell\x07", CHAT_BAD_REQUEST),
        ("badword", CHAT_BLOCKED_WORD),
        ("you BADWORD!", CHAT_BLOCKED_WORD),
        ("ｂａｄｗｏｒｄ", CHAT_BLOCKED_WORD),  # full-width letters (NFKC)
        ("𝐛𝐚𝐝𝐰𝐨𝐫𝐝", CHAT_BLOCKED_WORD),  # mathematical bold (NFKC)
        ("bad\u200bword", CHAT_BLOCKED_WORD),  # zero-width space (format character)
        ("bádwörd", CHAT_BLOCKED_WORD),  # accents stripped
        ("BADWORD", CHAT_BLOCKED_WORD),
        ("badwords", "ok"),  # a longer word is not the blocked word
        ("notbadword", "ok"),
        ("that was very rude", CHAT_BLOCKED_WORD),  # a phrase
        ("VERY   Rude", CHAT_BLOCKED_WORD),
        ("very nice and rude", "ok"),  # the phrase's words apart
    ],
)
def test_a_text_post_is_checked(text: str, expected: str) -> None:
    assert code_of(moderator(), text) == expected


@pytest.mark.parametrize(
    ("sticker", "expected"), [("gg", "ok"), ("thumbs_up", "ok"), ("nope", CHAT_BAD_REQUEST)]
)
def test_only_known_stickers_are_posted(sticker: str, expected: str) -> None:
    assert code_of(moderator(), None, sticker) == expected


def test_the_length_limit_is_configurable() -> None:
    assert code_of(moderator(max_chars=10), "x" * 11) == CHAT_TOO_LONG
    assert code_of(moderator(max_chars=10), "x" * 10) == "ok"


# (time, text, expected) in order, one player, rate 3 per 10 s, duplicates within 30 s
RATE_SCRIPT = [
    (0.0, "a", "ok"),
    (1.0, "b", "ok"),
    (2.0, "c", "ok"),
    (3.0, "d", CHAT_RATE_LIMITED),  # fourth within 10 s
    (9.9, "d", CHAT_RATE_LIMITED),
    (10.0, "d", "ok"),  # the first has left the window
    (10.5, "e", CHAT_RATE_LIMITED),
    (11.0, "e", "ok"),
]


def test_the_rate_limit_is_a_sliding_window() -> None:
    mod = moderator(rate_count=3, rate_window=10.0)
    for now, text, expected in RATE_SCRIPT:
        assert code_of(mod, text, now=now) == expected, (now, text)


def test_the_rate_limit_says_when_to_try_again() -> None:
    mod = moderator(rate_count=1, rate_window=10.0)
    mod.check("p1", "lobby", "a", None, 0.0)
    with pytest.raises(ContractError) as refused:
        mod.check("p1", "lobby", "b", None, 4.0)
    assert refused.value.code == CHAT_RATE_LIMITED
    assert "6.0 s" in refused.value.message


def test_the_rate_limit_is_per_player() -> None:
    mod = moderator(rate_count=1)
    mod.check("p1", "lobby", "a", None, 0.0)
    mod.check("p2", "lobby", "a", None, 0.0)  # another player is not limited by p1
    with pytest.raises(ContractError):
        mod.check("p1", "r_x", "b", None, 0.1)  # across channels


# (time, channel, text, expected); duplicates within 30 s in the same channel
DUPLICATE_SCRIPT = [
    (0.0, "lobby", "hello", "ok"),
    (1.0, "lobby", "hello", CHAT_DUPLICATE),
    (2.0, "lobby", "HELLO!", CHAT_DUPLICATE),  # same words, normalised
    (3.0, "r_a", "hello", "ok"),  # another channel
    (4.0, "lobby", "hi", "ok"),
    (5.0, "lobby", "hello", "ok"),  # not the last thing said there any more
    (40.0, "lobby", "hello", "ok"),
    (80.0, "lobby", "hello", "ok"),  # 40 s later: the window passed
]


def test_duplicates_are_suppressed_per_channel_for_a_while() -> None:
    mod = moderator(rate_count=100, duplicate_window=30.0)
    for now, channel, text, expected in DUPLICATE_SCRIPT:
        try:
            mod.check("p1", channel, text, None, now)
            got = "ok"
        except ContractError as exc:
            got = exc.code
        assert got == expected, (now, channel, text)


def test_a_refused_post_does_not_count_against_the_rate() -> None:
    mod = moderator(rate_count=2)
    mod.check("p1", "lobby", "a", None, 0.0)
    for _ in range(5):
        assert code_of(mod, "badword", now=0.1) == CHAT_BLOCKED_WORD
    mod.check("p1", "lobby", "b", None, 0.2)


def test_the_same_sticker_twice_is_a_duplicate() -> None:
    mod = moderator()
    assert code_of(mod, None, "gg", now=0) == "ok"
    assert code_of(mod, None, "gg", now=1) == CHAT_DUPLICATE
    assert code_of(mod, None, "wow", now=2) == "ok"


def test_memory_of_quiet_players_is_swept() -> None:
    mod = moderator(rate_count=10_000, rate_window=1.0, duplicate_window=1.0)
    for i in range(2000):
        mod.check(f"p{i}", "lobby", "x", None, float(i))
    assert len(mod._posted) < 10
    assert len(mod._last) < 10


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("ＡＢＣ", "abc"),
        ("Straße", "strasse"),
        ("ﬁne", "fine"),
        ("e\u0301", "e"),
        ("a\u200db", "ab"),
    ],
)
def test_normalise(raw: str, normal: str) -> None:
    assert normalise(raw) == normal
