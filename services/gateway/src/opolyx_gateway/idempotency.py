"""Every client message that changes something runs once per message id: a retry (the same
player, the same id, the same message) within the window gets the first one's reply, and
one sent again while the first is still running waits for it instead of running twice.

A client resends what it did not see answered when its socket comes back (web client:
`net.js`), and a lobby ``create`` or a chat post that ran twice is a second room or a
second message. Table commands have their own, longer memory keyed by command id
(`upstream.RecentCommands`, and the table's own); this covers the rest: lobby actions that
change rooms, the autopilot switch, chat posts, mutes, reports and room chat settings.

Kept per gateway instance, in memory, bounded by count and by age: a retry reaches the
same instance while its socket's address is routed there (a gateway that restarted has
forgotten; the lobby and chat then see the message again). A refusal after which the
message may not have run (`upstream.NOTHING_RAN`: "unavailable", "busy", "not the table's
owner" while it moves, a gateway failure) is forgotten at once, so the retry runs (the
service must know a retry of what did run: chat by `request_key`, the lobby by its own
rules); but "unavailable" is also a request that timed out, which the service may
have run all the same, slowly. Chat knows such a retry itself: a post and a report carry
`request_key` (the same for the same player and message, on every gateway instance) as their
``request_id``, and chat answers a repeat with the first post or report and stores nothing
(`opolyx_contracts.chat`).
The lobby refuses most repeats itself (a second ``create`` or ``join``: the player is in a
room already).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import (
    ONCE_PER_ID_MESSAGES,
    ChatRoomSettingsRequest,
    ClientMessage,
    LobbyRequest,
    ReplyResult,
    TableCmd,
)

from opolyx_gateway.errors import GatewayError
from opolyx_gateway.upstream import NOTHING_RAN

__all__ = [
    "CHANGING_TYPES",
    "LOBBY_CHANGES",
    "RecentReplies",
    "changes_something",
    "request_key",
]

LOBBY_CHANGES = frozenset({"create", "join", "leave", "add_bot", "remove_bot", "kick", "start"})
"""Lobby actions that change a room (the others only read)."""

Dispatch = Callable[[ClientMessage], Awaitable[ReplyResult]]


CHANGING_TYPES: frozenset[type] = frozenset(ONCE_PER_ID_MESSAGES) - {TableCmd}
"""Message types some or all of which change something: those the contract says run once
per id (`ONCE_PER_ID_MESSAGES`, which the web client resends after a reconnect) but table
commands, which have their own memory. One set lookup per message on the hot path: table
commands and pings are not among them."""


def changes_something(message: ClientMessage) -> bool:
    kind = type(message)
    if kind not in CHANGING_TYPES:
        return False
    if isinstance(message, LobbyRequest):
        return message.action in LOBBY_CHANGES
    if isinstance(message, ChatRoomSettingsRequest):
        return message.spectator_chat is not None or message.bot_stickers is not None
    return True


class RecentReplies:
    def __init__(self, window_seconds: float, limit: int) -> None:
        self.window = window_seconds
        self.limit = limit
        self._answers: OrderedDict[str, tuple[float, asyncio.Future[ReplyResult]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    async def run(self, player_id: str, message: ClientMessage, dispatch: Dispatch) -> ReplyResult:
        """`dispatch(message)`, once per (player, message) within the window (a message
        that changes nothing is simply dispatched)."""
        if not changes_something(message):
            return await dispatch(message)
        key = request_key(player_id, message)
        now = time.monotonic()
        self._expire(now)
        earlier = self._answers.get(key)
        if earlier is not None:
            return await asyncio.shield(earlier[1])
        answer: asyncio.Future[ReplyResult] = asyncio.get_running_loop().create_future()
        self._answers[key] = (now, answer)
        if len(self._answers) > self.limit:
            self._answers.popitem(last=False)
        try:
            result = await dispatch(message)
        except GatewayError as exc:
            if exc.code in NOTHING_RAN:
                self._forget(key, answer)
            answer.set_exception(exc)
            answer.exception()  # read: a refusal nobody else waited for is no error to log
            raise
        except BaseException:
            self._forget(key, answer)
            answer.set_exception(GatewayError(UNAVAILABLE, "the request was cut short; retry"))
            answer.exception()
            raise
        answer.set_result(result)
        return result

    def _forget(self, key: str, answer: asyncio.Future[ReplyResult]) -> None:
        entry = self._answers.get(key)
        if entry is not None and entry[1] is answer:
            del self._answers[key]

    def _expire(self, now: float) -> None:
        while self._answers:
            key, (stamp, answer) = next(iter(self._answers.items()))
            if now - stamp < self.window or not answer.done():
                return
            del self._answers[key]


def request_key(player_id: str, message: ClientMessage) -> str:
    """The key of a player's message: the same for the same player, id and content (so a
    client's resend), another for anything else; 32 hex digits."""
    material = f"{player_id}\x1f{message.model_dump_json()}"
    return hashlib.blake2b(material.encode(), digest_size=16).hexdigest()
