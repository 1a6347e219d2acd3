"""Chat channels as the sockets of this gateway see them: join with history, then live.

One core subscription per watched channel (``opolyx.chat.<channel>.messages``), shared by
every socket of this gateway in it. The chat service's history reply to a join is the
socket's licence to the channel's live messages (`opolyx_contracts.chat`): a socket that
chat refuses (``chat/not_member``) gets nothing.

No gap and no duplicate between history and live: the channel's subscription is made
*before* the history is asked for, and what it delivers meanwhile is held for the joining
socket; the join's reply carries the history plus those held messages not already in it
(by ``message_id``), and from then on the socket gets live pushes. Marking the socket live
and sending its reply happen with no ``await`` in between, so no push can overtake it.

Mutes are per recipient (one message per channel is published): a player's mute list is
asked once when their first socket joins a channel, replaced by every mute reply, and each
live message is pushed only to the sockets whose player did not mute its sender
(`opolyx_contracts.chat.visible_to`). The history chat returns is filtered already.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts import subjects
from opolyx_contracts.chat import ChatMessage, visible_to
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import (
    ChatMessagePush,
    ChatMutesResult,
    ChatPostResult,
    ChatReportResult,
    ChatRoomSettingsResult,
    ChatWatchResult,
)
from opolyx_service import flush_in_order
from opolyx_service.logs import get_logger
from pydantic import ValidationError

from opolyx_gateway.errors import GatewayError
from opolyx_gateway.feed import Sink
from opolyx_gateway.upstream import Upstream

__all__ = ["HELD_LIMIT", "ChatChannels"]

log = get_logger("opolyx.gateway.chat")

HELD_LIMIT = 100
"""Live messages held for one joining socket while its history is read (a channel's whole
history is 100 messages; more than that arriving within one history request is a flood,
and the oldest held go first)."""


@dataclass
class _Channel:
    token: str
    subscription: Subscription | None = None
    subscribing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Two sockets joining at once make one subscription."""
    live: dict[Sink, str] = field(default_factory=dict)
    """Sockets receiving live pushes -> their player id (for mutes)."""
    joining: dict[Sink, list[ChatMessage]] = field(default_factory=dict)
    """Sockets whose history is being read -> the live messages held for them."""

    def empty(self) -> bool:
        return not self.live and not self.joining


class ChatChannels:
    def __init__(self, nc: NatsClient, upstream: Upstream) -> None:
        self.nc = nc
        self.upstream = upstream
        self.channels: dict[str, _Channel] = {}
        self.mutes: dict[str, frozenset[str]] = {}
        """Mute lists of the players with a socket in some channel here."""

    async def stop(self) -> None:
        for channel in list(self.channels.values()):
            if channel.subscription is not None:
                await channel.subscription.unsubscribe()
        self.channels.clear()

    # ------------------------------------------------------------- joining and leaving
    async def watch(self, sink: Sink, player_id: str, token: str) -> ChatWatchResult:
        """Join `token` for `sink`: the history (with what arrived meanwhile) as the reply,
        live pushes after it. Raises the chat service's refusal unchanged."""
        channel = self.channels.get(token)
        if channel is None:
            channel = self.channels[token] = _Channel(token)
        if sink in channel.live:
            channel.live.pop(sink)  # a second watch: history again, then live again
        channel.joining[sink] = []
        try:
            async with channel.subscribing:
                if channel.subscription is None:
                    channel.subscription = await self.nc.subscribe(
                        subjects.chat_messages(token), cb=self._relay
                    )
                    # live on the server before the history is read: nothing falls between
                    await flush_in_order(self.nc)
            if player_id not in self.mutes:
                self.mutes[player_id] = await self._mutes_of(player_id)
            history = await self.upstream.chat_history(token, player_id)
        except BaseException:
            channel.joining.pop(sink, None)
            await self._drop_if_empty(channel)
            raise
        held = channel.joining.pop(sink, [])
        seen = {m.message_id for m in history.messages}
        muted = self.mutes.get(player_id, frozenset())
        late = [m for m in held if m.message_id not in seen and visible_to(m, muted)]
        # no await from here to the reply: the socket turns live exactly after its history
        channel.live[sink] = player_id
        return ChatWatchResult(
            channel=token, messages=[*history.messages, *late], may_post=history.may_post
        )

    async def unwatch(self, sink: Sink, token: str) -> None:
        channel = self.channels.get(token)
        if channel is None:
            return
        channel.live.pop(sink, None)
        channel.joining.pop(sink, None)
        await self._drop_if_empty(channel)

    async def _drop_if_empty(self, channel: _Channel) -> None:
        if not channel.empty() or self.channels.get(channel.token) is not channel:
            return
        del self.channels[channel.token]
        if channel.subscription is not None:
            await channel.subscription.unsubscribe()
        still_here = {p for c in self.channels.values() for p in c.live.values()}
        for player in [p for p in self.mutes if p not in still_here]:
            del self.mutes[player]

    async def _mutes_of(self, player_id: str) -> frozenset[str]:
        try:
            return frozenset((await self.upstream.chat_mutes(player_id)).muted)
        except GatewayError as exc:
            if exc.code != UNAVAILABLE:
                raise
            return frozenset()  # the history request that follows says chat is not running

    # ------------------------------------------------------------- live messages
    async def _relay(self, msg: Msg) -> None:
        token = msg.subject.split(".")[-2]
        channel = self.channels.get(token)
        if channel is None:
            return
        try:
            message = ChatMessage.model_validate_json(msg.data)
        except ValidationError:
            log.warning("chat_message_unreadable", channel=token)
            return
        for held in channel.joining.values():
            held.append(message)
            del held[:-HELD_LIMIT]
        if not channel.live:
            return
        text = ChatMessagePush(channel=token, message=message).model_dump_json()
        for sink, player_id in list(channel.live.items()):
            if visible_to(message, self.mutes.get(player_id, frozenset())):
                sink.push(text)

    # ------------------------------------------------------------- a player's actions
    async def post(
        self,
        player_id: str,
        name: str,
        token: str,
        text: str | None,
        sticker: str | None,
        *,
        request_id: str | None = None,
    ) -> ChatPostResult:
        """Post as the player; chat posts one `request_id` once (a resend gets that post)."""
        posted = await self.upstream.chat_post(
            token, player_id, name, text, sticker, request_id=request_id
        )
        return ChatPostResult(message=posted.message)

    async def mute(self, player_id: str, target: str, muted: bool) -> ChatMutesResult:
        mutes = await self.upstream.chat_mute(player_id, target, muted)
        if player_id in self.mutes or any(
            player_id in c.live.values() for c in self.channels.values()
        ):
            self.mutes[player_id] = frozenset(mutes.muted)
        return ChatMutesResult(muted=mutes.muted)

    async def muted_by(self, player_id: str) -> ChatMutesResult:
        mutes = await self.upstream.chat_mutes(player_id)
        if player_id in self.mutes:
            self.mutes[player_id] = frozenset(mutes.muted)
        return ChatMutesResult(muted=mutes.muted)

    async def report(
        self,
        player_id: str,
        token: str,
        message_id: str,
        reason: str,
        *,
        request_id: str | None = None,
    ) -> ChatReportResult:
        reported = await self.upstream.chat_report(
            player_id, token, message_id, reason, request_id=request_id
        )
        return ChatReportResult(report_id=reported.report_id)

    async def room_settings(
        self,
        player_id: str,
        room_id: str,
        spectator_chat: bool | None,
        bot_stickers: bool | None,
    ) -> ChatRoomSettingsResult:
        reply = await self.upstream.chat_settings(player_id, room_id, spectator_chat, bot_stickers)
        return ChatRoomSettingsResult(
            room=reply.room_id,
            spectator_chat=reply.settings.spectator_chat,
            bot_stickers=reply.settings.bot_stickers,
        )
