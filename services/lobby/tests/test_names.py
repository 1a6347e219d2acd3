"""Display names: NFKC, and look-alikes of bots and room-mates refused (pure, no NATS)."""

from __future__ import annotations

import pytest
from opolyx_lobby import names
from opolyx_lobby.errors import LobbyError

CYRILLIC_A = "\u0410"
GREEK_O = "\u03bf"
FULLWIDTH_ALICE = "\uff21\uff4c\uff49\uff43\uff45"
ZERO_WIDTH_SPACE = "\u200b"
COMBINING_ACUTE = "\u0301"


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("Alice", "Alice"),
        (FULLWIDTH_ALICE, "Alice"),
        ("  Hana   Mori ", "Hana Mori"),
        (f"Ha{ZERO_WIDTH_SPACE}na", "Hana"),
        ("\u2163", "IV"),  # Roman numeral four is two letters after NFKC
        ("Zo\u00eb", "Zo\u00eb"),
    ],
)
def test_names_are_stored_in_nfkc(raw: str, stored: str) -> None:
    assert names.normalize_name(raw) == stored


@pytest.mark.parametrize(
    "raw",
    ["", "   ", ZERO_WIDTH_SPACE, "x" * 33, "bad\x00name", "tab\x07", "...", "\ue000"],
)
def test_bad_names_get_a_clear_code(raw: str) -> None:
    with pytest.raises(LobbyError) as info:
        names.normalize_name(raw)
    assert info.value.code == "lobby/bad_name" and info.value.message


@pytest.mark.parametrize(
    ("one", "other", "confusable"),
    [
        (f"{CYRILLIC_A}da", "Ada", True),
        ("ada", "Ada", True),
        ("A.D.A", "Ada", True),
        (f"N{GREEK_O}{GREEK_O}r", "Noor", True),
        ("N00r", "Noor", True),
        ("Ine5", "Ines", True),
        ("lnes", "Ines", True),
        (f"Ade{COMBINING_ACUTE}", "Ade", True),
        (FULLWIDTH_ALICE, "alice", True),
        ("Adam", "Ada", False),
        ("Bob", "Rob", False),
        ("Hana", "Hanna", False),
    ],
)
def test_confusable_names_share_a_skeleton(one: str, other: str, confusable: bool) -> None:
    assert (names.skeleton(one) == names.skeleton(other)) is confusable


@pytest.mark.parametrize("raw", [f"{CYRILLIC_A}da", "ADA", "Greta", "m1ra"])
def test_names_of_roster_bots_and_their_look_alikes_are_refused(raw: str) -> None:
    with pytest.raises(LobbyError) as info:
        names.check_not_bot_like(names.normalize_name(raw))
    assert info.value.code == "lobby/name_taken"


def test_other_names_pass_the_bot_check() -> None:
    names.check_not_bot_like("Adam")
    names.check_not_bot_like("Hana")


def test_a_name_like_a_room_mates_is_refused() -> None:
    names.check_unlike("Bob", ["Alice", "Rob"])
    with pytest.raises(LobbyError) as info:
        names.check_unlike(FULLWIDTH_ALICE, ["Bob", "alice"])
    assert info.value.code == "lobby/name_taken"
