"""Moderation of what a player posts: pure (no I/O; the clock is an argument).

- length limit and no control characters (a text is shown verbatim, so a newline bomb or a
  bidirectional override would be shown too);
- a per-player rate limit over every channel (a sliding window), with a coded error that
  says when posting works again;
- duplicate suppression: the same text or sticker again in the same channel within a while;
- blocked words, compared on a normalised form: NFKC (full-width and mathematical letters,
  ligatures become plain ones), case-folded, format characters (zero-width joiners and the
  like) dropped and accents stripped, so look-alikes do not slip through. Whole words and
  phrases match, never parts of a longer word (no refusing "classic" for "ass").

State lives per instance: with several chat instances in the queue group a player's limit
is per instance (at most `instances x rate_count`); it only ever gets stricter with one.
Kept so on purpose: a shared counter would cost a post three times its own JetStream write
(the service README, "Moderation", has the figures).
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from opolyx_contracts.chat import (
    CHAT_BAD_REQUEST,
    CHAT_BLOCKED_WORD,
    CHAT_DUPLICATE,
    CHAT_RATE_LIMITED,
    CHAT_TOO_LONG,
    STICKERS,
)
from opolyx_contracts.errors import ContractError

__all__ = ["ModerationRules", "Moderator", "normalise"]

_WORD = re.compile(r"\w+")
#: Unicode category Cc is exactly these two ranges
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
#: every how many checks the per-player memory is swept of players quiet for a while
_SWEEP_EVERY = 1000


def normalise(text: str) -> str:
    """The form blocked words and duplicates are compared in."""
    if text.isascii():  # the common case, 10x faster: nothing to fold but the case
        return text.lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    decomposed = unicodedata.normalize("NFKD", folded)
    kept = (c for c in decomposed if unicodedata.category(c) not in ("Cf", "Mn"))
    return unicodedata.normalize("NFC", "".join(kept))


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalise(text)))


@dataclass(frozen=True)
class ModerationRules:
    max_chars: int = 300
    rate_count: int = 5
    rate_window: float = 10.0
    duplicate_window: float = 30.0
    blocked: tuple[tuple[str, ...], ...] = ()
    """Blocked words and phrases, each as its normalised words."""

    @staticmethod
    def blocked_from(words: Iterable[str]) -> tuple[tuple[str, ...], ...]:
        return tuple(w for w in (_words(word) for word in words) if w)


class Moderator:
    def __init__(self, rules: ModerationRules) -> None:
        self.rules = rules
        self._posted: dict[str, deque[float]] = {}
        self._last: dict[tuple[str, str], tuple[str, float]] = {}
        self._checks = 0

    def check(
        self, player_id: str, channel: str, text: str | None, sticker: str | None, now: float
    ) -> None:
        """Raise a coded `ContractError` when the post may not go out; else note it as posted."""
        words = self._words_of(text, sticker)
        key = f"sticker:{sticker}" if words is None else "text:" + " ".join(words)
        self._check_rate(player_id, now)
        self._check_duplicate(player_id, channel, key, now)
        if words is not None:
            self._check_blocked(words)
        self._note(player_id, channel, key, now)

    def _words_of(self, text: str | None, sticker: str | None) -> tuple[str, ...] | None:
        """The normalised words of a valid text (None for a valid sticker)."""
        if sticker is not None:
            if sticker not in STICKERS:
                raise ContractError(CHAT_BAD_REQUEST, f"{sticker!r} is not one of the stickers")
            return None
        assert text is not None
        if not text.strip():
            raise ContractError(CHAT_BAD_REQUEST, "an empty message is not sent")
        if len(text) > self.rules.max_chars:
            raise ContractError(
                CHAT_TOO_LONG,
                f"a message has at most {self.rules.max_chars} characters, this one {len(text)}",
            )
        if _CONTROL.search(text):
            raise ContractError(CHAT_BAD_REQUEST, "a message may not hold control characters")
        return _words(text)

    def _check_rate(self, player_id: str, now: float) -> None:
        posted = self._posted.get(player_id)
        if posted is None:
            return
        while posted and posted[0] <= now - self.rules.rate_window:
            posted.popleft()
        if len(posted) >= self.rules.rate_count:
            wait = posted[0] + self.rules.rate_window - now
            raise ContractError(
                CHAT_RATE_LIMITED,
                f"at most {self.rules.rate_count} messages in {self.rules.rate_window:g} s;"
                f" try again in {max(wait, 0.1):.1f} s",
            )

    def _check_duplicate(self, player_id: str, channel: str, key: str, now: float) -> None:
        last = self._last.get((player_id, channel))
        if last is not None and last[0] == key and now - last[1] < self.rules.duplicate_window:
            raise ContractError(CHAT_DUPLICATE, "that was just said; say something new")

    def _check_blocked(self, words: tuple[str, ...]) -> None:
        for phrase in self.rules.blocked:
            n = len(phrase)
            if any(words[i : i + n] == phrase for i in range(len(words) - n + 1)):
                raise ContractError(CHAT_BLOCKED_WORD, "the message has a word that is not allowed")

    def _note(self, player_id: str, channel: str, key: str, now: float) -> None:
        self._posted.setdefault(player_id, deque()).append(now)
        self._last[(player_id, channel)] = (key, now)
        self._checks += 1
        if self._checks % _SWEEP_EVERY == 0:
            self._sweep(now)

    def _sweep(self, now: float) -> None:
        """Forget players quiet for longer than either window (bounded memory)."""
        horizon = now - max(self.rules.rate_window, self.rules.duplicate_window)
        self._posted = {p: q for p, q in self._posted.items() if q and q[-1] > horizon}
        self._last = {k: v for k, v in self._last.items() if v[1] > horizon}
