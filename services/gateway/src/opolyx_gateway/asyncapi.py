"""The gateway's NATS interface, for its AsyncAPI document only (`make docs`).

The gateway's NATS side is plain nats-py: it sits on every command's path, and FastStream's
per-message cost (a round trip 1.7x plain nats-py's one at a time, about 4x in throughput with
64 in flight: bench/messaging.py, STACK.md) would be paid on each. Its
browser side (HTTP and websocket) is the OpenAPI document (`app.openapi_schema`).
"""

from __future__ import annotations

from typing import Any

from opolyx_contracts import progression
from opolyx_contracts.chat import (
    ChatHistory,
    ChatHistoryRequest,
    ChatMessage,
    ChatMute,
    ChatMutes,
    ChatMutesQuery,
    ChatPost,
    ChatPosted,
    ChatReport,
    ChatReported,
)
from opolyx_contracts.lobby import (
    LOBBY_MEMBER_EVENTS_WILDCARD,
    LobbyCommand,
    LobbyEvent,
    LobbyReply,
)
from opolyx_contracts.subjects import (
    CHAT_HISTORY_ANY,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_POSTS_ANY,
    CHAT_REPORT,
    CHAT_STREAM_SUBJECTS,
    LOBBY_CMD,
    LOBBY_EVENTS,
    TABLE_COMMANDS_ANY,
    TABLE_EVENTS_SUBJECTS,
    TABLE_SEATS_ANY,
    TABLE_VIEWS_ANY,
    table_update_wildcard,
)
from opolyx_contracts.table import (
    CommandAccepted,
    SeatPresence,
    SeatStatus,
    TableCommand,
    TableEvents,
    TableUpdate,
    TableView,
    ViewRequest,
)
from opolyx_service.asyncapi import Interface

__all__ = ["document"]


def document() -> dict[str, Any]:
    return (
        Interface(
            "opolyx gateway",
            "Holds the players' websockets: turns their messages into commands as the "
            "token's player (the only service that asserts a player's identity) and streams "
            "what happened back.",
        )
        .handles(
            table_update_wildcard(),
            TableUpdate,
            description="Live updates of the tables its clients watch (one subscription per "
            "watched table, one encoding per push for all its watchers).",
        )
        .handles(
            TABLE_EVENTS_SUBJECTS,
            TableEvents,
            description="Read back from stream TABLE_EVENTS when a client resumes after a "
            "gap (ordered consumer from the client's last sequence).",
        )
        .handles(LOBBY_EVENTS, LobbyEvent, description="Public room changes, pushed to lobbies.")
        .handles(
            LOBBY_MEMBER_EVENTS_WILDCARD,
            LobbyEvent,
            description="A private room's events, pushed to its members.",
        )
        .publishes(
            TABLE_COMMANDS_ANY,
            TableCommand,
            CommandAccepted,
            description="A player's command, to the owning table instance; `service/busy` "
            "and `table/not_owner` are retried with backoff and the same command id.",
        )
        .publishes(
            TABLE_SEATS_ANY,
            SeatPresence,
            SeatStatus,
            description="A seated player's first socket on a table came or their last went "
            "(the table's autopilot takes a dropped seat after its grace period), or the "
            "player switched autopilot for their seat.",
        )
        .publishes(
            TABLE_VIEWS_ANY,
            ViewRequest,
            TableView,
            description="A table's public view when a client (re)joins.",
        )
        .publishes(
            LOBBY_CMD,
            LobbyCommand,
            LobbyReply,
            description="A lobby command as the token's player.",
        )
        .handles(
            CHAT_STREAM_SUBJECTS,
            ChatMessage,
            description="Live messages of the chat channels its clients watch (one core "
            "subscription per channel, made before the history is asked for), each filtered "
            "per recipient by the recipient's mutes.",
        )
        .publishes(
            CHAT_POSTS_ANY,
            ChatPost,
            ChatPosted,
            description="A player's text or sticker, as the token's player.",
        )
        .publishes(
            CHAT_HISTORY_ANY,
            ChatHistoryRequest,
            ChatHistory,
            description="Joining a channel: its recent history, the licence to forward its "
            "live messages.",
        )
        .publishes(CHAT_MUTE, ChatMute, ChatMutes, description="A player mutes or unmutes.")
        .publishes(
            CHAT_MUTES, ChatMutesQuery, ChatMutes, description="A player's mutes, to filter."
        )
        .publishes(CHAT_REPORT, ChatReport, ChatReported, description="A reported message.")
        .publishes(
            progression.PROFILE,
            progression.ProfileRequest,
            progression.Profile,
            description="My profile (REST).",
        )
        .publishes(
            progression.PUBLIC_PROFILE,
            progression.PublicProfileRequest,
            progression.PublicProfile,
            description="A player's public profile (REST).",
        )
        .publishes(
            progression.CARDS,
            progression.CardsRequest,
            progression.CardsReply,
            description="My cards (REST).",
        )
        .publishes(
            progression.MISSIONS,
            progression.MissionsRequest,
            progression.MissionsReply,
            description="My missions (REST).",
        )
        .publishes(
            progression.LEADERBOARD,
            progression.LeaderboardRequest,
            progression.LeaderboardReply,
            description="The weekly or following leaderboard (REST).",
        )
        .publishes(
            progression.FOLLOW,
            progression.FollowRequest,
            progression.FollowReply,
            description="Follow a player (REST).",
        )
        .publishes(
            progression.UNFOLLOW,
            progression.FollowRequest,
            progression.FollowReply,
            description="Unfollow a player (REST).",
        )
        .publishes(
            progression.FOLLOWING,
            progression.FollowingRequest,
            progression.FollowingReply,
            description="The players I follow (REST).",
        )
        .publishes(
            progression.CREDIT,
            progression.GameCreditRequest,
            progression.GameCreditReply,
            description="What a finished game paid me (REST).",
        )
        .publishes(
            progression.PRESENCE,
            progression.PresenceReport,
            progression.PresenceAck,
            description="Who is connected here: a player's first and last socket, every 30 s.",
        )
        .document()
    )
