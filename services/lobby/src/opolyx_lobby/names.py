"""Display names: one normal form, and no name that looks like a bot's or a room-mate's.

Pure functions (no I/O). A name is NFKC-normalised (full-width letters become `Alice`),
stripped of invisible format characters, its spaces collapsed. Two names are *confusable*
when their skeletons are equal: the skeleton folds case, drops accents, punctuation and
spaces, maps Cyrillic and Greek letters that look like Latin ones to those (`Ada` spelt
with a Cyrillic capital A is `ada`) and the usual digit look-alikes (`0` o, `1` l). The
table is small on purpose: it covers the letters that pass for Latin in common fonts.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from opolyx_contracts.lobby import BOT_ROSTER, LOBBY_BAD_NAME, LOBBY_NAME_TAKEN

from opolyx_lobby.errors import LobbyError

__all__ = ["MAX_NAME_LENGTH", "check_not_bot_like", "check_unlike", "normalize_name", "skeleton"]

MAX_NAME_LENGTH = 32

# Letters of other scripts drawn like a Latin letter (before case folding, so capitals
# map to capitals: Cyrillic capital VE looks like B, its small form does not look like b).
_LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
        "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0425": "X", "\u0423": "Y",
        "\u0405": "S", "\u0406": "I", "\u0408": "J", "\u051a": "Q", "\u051c": "W", "\u04ae": "Y",
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
        "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u051b": "q", "\u051d": "w",
        "\u04bb": "h", "\u0501": "d", "\u04cf": "l", "\u04af": "y",
        # Greek
        "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I",
        "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T",
        "\u03a5": "Y", "\u03a7": "X", "\u03b1": "a", "\u03bf": "o", "\u03bd": "v", "\u03b9": "i",
        "\u03ba": "k", "\u03c1": "p", "\u03c5": "u", "\u03c7": "x",
        # Latin
        "\u0131": "i", "\u0237": "j", "\u0261": "g", "\u0251": "a",
    }
)  # fmt: skip
# After case folding: characters drawn alike in most fonts.
_SAME_SHAPE = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o", "5": "s"})
_MULTI = (("rn", "m"), ("vv", "w"), ("cl", "d"))


def normalize_name(raw: str) -> str:
    """The name as stored and shown, or `lobby/bad_name`."""
    name = unicodedata.normalize("NFKC", raw)
    name = "".join(ch for ch in name if unicodedata.category(ch) != "Cf")  # zero-width etc.
    name = " ".join(name.split())
    if not name:
        raise LobbyError(LOBBY_BAD_NAME, "a name needs at least one visible character")
    if len(name) > MAX_NAME_LENGTH:
        raise LobbyError(LOBBY_BAD_NAME, f"a name has at most {MAX_NAME_LENGTH} characters")
    if any(unicodedata.category(ch) in ("Cc", "Co", "Cs", "Cn") for ch in name):
        raise LobbyError(LOBBY_BAD_NAME, "a name cannot contain control or unassigned characters")
    if not skeleton(name):
        raise LobbyError(LOBBY_BAD_NAME, "a name needs at least one letter or digit")
    return name


def skeleton(name: str) -> str:
    """What a name looks like: equal skeletons mean a reader could take one for the other."""
    text = unicodedata.normalize("NFKC", name).translate(_LOOKALIKES)
    decomposed = unicodedata.normalize("NFD", text)
    text = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    text = text.casefold().translate(_SAME_SHAPE)
    text = "".join(ch for ch in text if ch.isalnum())
    for many, one in _MULTI:
        text = text.replace(many, one)
    return text


_BOT_SKELETONS = {skeleton(bot.name): bot.name for bot in BOT_ROSTER}


def check_not_bot_like(name: str) -> None:
    """Refuse a human name that reads as one of the roster bots' (`lobby/name_taken`)."""
    bot = _BOT_SKELETONS.get(skeleton(name))
    if bot is not None:
        raise LobbyError(
            LOBBY_NAME_TAKEN, f"{name!r} looks like the bot {bot!r}; choose another name"
        )


def check_unlike(name: str, others: Iterable[str]) -> None:
    """Refuse a name that reads as one already in the room (`lobby/name_taken`)."""
    mine = skeleton(name)
    for other in others:
        if skeleton(other) == mine:
            raise LobbyError(
                LOBBY_NAME_TAKEN, f"{name!r} looks like {other!r}, already in this room"
            )
