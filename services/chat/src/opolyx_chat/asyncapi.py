"""Chat's AsyncAPI document (`make docs`): every request subject with its request and reply
models, and the channel messages it publishes into stream CHAT.

Only feeds the document; nothing here runs.
"""

from __future__ import annotations

from typing import Any

from opolyx_contracts import chat as contract
from opolyx_contracts.subjects import (
    CHAT_BOT_STICKER,
    CHAT_HISTORY_ANY,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_POSTS_ANY,
    CHAT_REPORT,
    CHAT_SETTINGS,
    CHAT_STREAM_SUBJECTS,
)
from opolyx_service.asyncapi import Interface

from opolyx_chat.app import QUEUE

__all__ = ["document"]


def document() -> dict[str, Any]:
    interface = Interface(
        "opolyx chat",
        "Table, spectator, waiting-room and lobby chat: text or stickers, bounded history in "
        "stream CHAT, moderation, mutes and reports. Who is in which channel comes from the "
        "lobby's `rooms` bucket (read only); stateless apart from NATS (queue group `chat`).",
    )
    return (
        interface.handles(
            CHAT_POSTS_ANY,
            contract.ChatPost,
            contract.ChatPosted,
            queue=QUEUE,
            description="Post in a channel (`opolyx.chat.<channel>.post`; gateway only).",
        )
        .handles(
            CHAT_HISTORY_ANY,
            contract.ChatHistoryRequest,
            contract.ChatHistory,
            queue=QUEUE,
            description="Join a channel: its recent history without muted senders; an ok "
            "reply lets the gateway forward the channel's live messages to the player.",
        )
        .handles(
            CHAT_MUTE,
            contract.ChatMute,
            contract.ChatMutes,
            queue=QUEUE,
            description="Mute or unmute a player (remembered); replies the whole list.",
        )
        .handles(
            CHAT_MUTES,
            contract.ChatMutesQuery,
            contract.ChatMutes,
            queue=QUEUE,
            description="Whom a player muted (the gateway filters live messages with it).",
        )
        .handles(
            CHAT_REPORT,
            contract.ChatReport,
            contract.ChatReported,
            queue=QUEUE,
            description="Report a message; stored with its context for an operator.",
        )
        .handles(
            CHAT_SETTINGS,
            contract.ChatSettingsRequest,
            contract.ChatSettingsReply,
            queue=QUEUE,
            description="Read (members) or change (creator) a room's chat settings.",
        )
        .handles(
            CHAT_BOT_STICKER,
            contract.BotSticker,
            contract.ChatPosted,
            queue=QUEUE,
            description="A bot at a table posts the sticker of its persona for an occasion "
            "(bots role), unless the room turned bot stickers off; once per table, occasion "
            "and moment across every instance and bot (a repeat: `chat/duplicate`).",
        )
        .publishes(
            CHAT_STREAM_SUBJECTS,
            contract.ChatMessage,
            description="Every message said, once per channel (stream CHAT, bounded history).",
        )
        .document()
    )
