"""The roster the lobby seats: persistent names, every style one the workers know."""

from __future__ import annotations

from opolyx_bots.styles import STYLES, get_style
from opolyx_contracts.lobby import BOT_ROSTER, BOT_STYLES, bot_persona


def test_at_least_twelve_bots_with_unique_names_and_known_styles() -> None:
    assert len(BOT_ROSTER) >= 12
    assert (
        len({b.player_id for b in BOT_ROSTER})
        == len({b.name for b in BOT_ROSTER})
        == len(BOT_ROSTER)
    )
    assert set(BOT_STYLES) == set(STYLES)
    assert {b.style for b in BOT_ROSTER} == set(STYLES)


def test_a_bot_plays_its_roster_style_and_strangers_play_balanced() -> None:
    persona = bot_persona("bot-dmitri")
    assert persona is not None and get_style(persona.style).name == "shark"
    assert bot_persona("bot-nobody") is None
    assert get_style(None).name == "balanced"
