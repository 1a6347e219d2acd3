"""The chat behaviour: one coded reply for every request, never a crash.

Subjects (`opolyx_contracts.chat` describes each request and reply):
`opolyx.chat.<channel>.post|history` and `opolyx.chat.mute|mutes|report|settings` from the
gateway (which alone fills `player_id` and `name`: NATS lets only the gateway role publish
there), `opolyx.chat.bot_sticker` from the bots role. Where a player is comes from the
lobby's rooms (`access.py`), never from the request.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from opolyx_contracts import chat as contract
from opolyx_contracts.chat import (
    CHAT_BAD_CHANNEL,
    CHAT_BOT_STICKERS_OFF,
    CHAT_DUPLICATE,
    CHAT_NOT_CREATOR,
    CHAT_NOT_MEMBER,
    CHAT_UNKNOWN_MESSAGE,
    MAX_CHAT_REQUEST_BYTES,
    ChannelRef,
    ChatMessage,
    ChatRoomSettings,
    RoomRecordView,
    parse_channel,
    sticker_for,
)
from opolyx_contracts.envelope import Message, decode, encode, error_reply
from opolyx_contracts.errors import BAD_REQUEST, INTERNAL, ContractError
from opolyx_contracts.subjects import (
    CHAT_BOT_STICKER,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_REPORT,
    CHAT_SETTINGS,
    PREFIX,
)
from opolyx_service.logs import get_logger
from pydantic import BaseModel

from opolyx_chat.access import Access, access
from opolyx_chat.directory import RoomDirectory
from opolyx_chat.moderation import ModerationRules, Moderator
from opolyx_chat.settings import ChatSection
from opolyx_chat.store import ChatStore, request_key

__all__ = ["REQUEST_SUBJECTS", "Chat", "rules_from"]

log = get_logger("opolyx.chat")

M = TypeVar("M", bound=Message)
Clock = Callable[[], float]

REQUEST_SUBJECTS: tuple[str, ...] = (
    f"{PREFIX}.chat.*.post",
    f"{PREFIX}.chat.*.history",
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_REPORT,
    CHAT_SETTINGS,
    CHAT_BOT_STICKER,
)


def rules_from(section: ChatSection) -> ModerationRules:
    return ModerationRules(
        max_chars=section.max_text_chars,
        rate_count=section.rate_count,
        rate_window=section.rate_window_seconds,
        duplicate_window=section.duplicate_window_seconds,
        blocked=ModerationRules.blocked_from(section.blocked_words),
    )


class Chat:
    def __init__(
        self,
        store: ChatStore,
        directory: RoomDirectory,
        section: ChatSection,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.directory = directory
        self.section = section
        self.clock = clock
        self.moderator = Moderator(rules_from(section))
        self._fixed: dict[str, Callable[[bytes], Awaitable[BaseModel]]] = {
            CHAT_MUTE: self._mute,
            CHAT_MUTES: self._mutes,
            CHAT_REPORT: self._report,
            CHAT_SETTINGS: self._settings,
            CHAT_BOT_STICKER: self._bot_sticker,
        }

    async def answer(self, subject: str, body: bytes) -> bytes:
        try:
            if len(body) > MAX_CHAT_REQUEST_BYTES:
                raise ContractError(
                    BAD_REQUEST,
                    f"a chat request has at most {MAX_CHAT_REQUEST_BYTES} bytes,"
                    f" this one has {len(body)}",
                )
            return encode(await self._route(subject, body))
        except ContractError as exc:
            return encode(error_reply(exc.code, exc.message))
        except Exception:
            log.exception("chat_request_failed", subject=subject)
            return encode(error_reply(INTERNAL, "chat failed on this request; try again"))

    async def _route(self, subject: str, body: bytes) -> BaseModel:
        fixed = self._fixed.get(subject)
        if fixed is not None:
            return await fixed(body)
        tokens = subject.split(".")
        if len(tokens) == 4 and tokens[3] in ("post", "history"):
            channel = parse_channel(tokens[2])
            if channel is None:
                raise ContractError(CHAT_BAD_CHANNEL, f"{tokens[2]!r} names no chat channel")
            if tokens[3] == "post":
                return await self._post(channel, decode(contract.ChatPost, body))
            return await self._history(channel, decode(contract.ChatHistoryRequest, body))
        raise ContractError(BAD_REQUEST, f"chat does not answer {subject}")

    # channels --------------------------------------------------------------------------

    async def _room_of(self, channel: ChannelRef) -> RoomRecordView | None:
        if channel.kind == "room":
            return await self.directory.room(channel.id)
        if channel.kind in ("table", "spectators"):
            return self.directory.room_of_table(channel.id)
        return None

    async def access(self, channel: ChannelRef, player_id: str) -> Access:
        room = await self._room_of(channel)
        settings = ChatRoomSettings()
        if channel.kind == "spectators" and room is not None:
            settings = await self.store.room_settings(room.room_id)
        return access(channel, player_id, room, settings)

    async def _post(self, channel: ChannelRef, post: contract.ChatPost) -> contract.ChatPosted:
        key = None if post.request_id is None else request_key(post.player_id, post.request_id)
        allowed = await self.access(channel, post.player_id)
        if not allowed.post:
            refusal = ContractError(allowed.refusal, "you cannot post in this channel")
            return await self._unless_posted(key, refusal)
        return await self._send(
            channel, post.player_id, post.name, post.text, post.sticker, False, key=key
        )

    async def _send(
        self,
        channel: ChannelRef,
        sender_id: str,
        sender_name: str,
        text: str | None,
        sticker: str | None,
        bot: bool,
        moment: str | None = None,
        *,
        key: str | None = None,
    ) -> contract.ChatPosted:
        # A moment taken already is refused before moderation notes the post (a bot refused
        # here has said nothing, and may say its sticker for the next moment).
        if moment is not None and not await self.store.claim_moment(moment, sender_id):
            raise ContractError(CHAT_DUPLICATE, "that moment already has its bot sticker")
        now = self.clock()
        try:
            self.moderator.check(sender_id, channel.token, text, sticker, now)
        except ContractError as refusal:
            return await self._unless_posted(key, refusal)
        message = ChatMessage(
            message_id=uuid.uuid4().hex,
            channel=channel.token,
            sender_id=sender_id,
            sender_name=sender_name,
            bot=bot,
            text=text,  # verbatim: markup stays text
            sticker=sticker,
            sent_at=now,
        )
        if key is not None:
            # Claimed before it is published: a repeat of this request, here or at another
            # instance, finds the claim and answers with this message.
            earlier = await self.store.claim_post(key, message)
            if earlier is not None:
                return await self._posted_again(earlier)
        await self.store.publish(message)
        return contract.ChatPosted(message=message)

    async def _unless_posted(self, key: str | None, refusal: ContractError) -> contract.ChatPosted:
        """Raise `refusal`, unless it refuses the repeat of a request that posted already (its
        first reply was lost; the repeat is now a duplicate, over the rate, or from a player
        who has left the channel since): then the answer is the first post."""
        if key is not None:
            earlier = await self.store.claimed_post(key)
            if earlier is not None:
                return await self._posted_again(earlier)
        raise refusal

    async def _posted_again(self, message: ChatMessage) -> contract.ChatPosted:
        """The answer to a repeated request: the post it made. Published only when the
        history does not hold it (the first request is still publishing it, or failed to after
        its claim): the stream stores it once by its message id either way, its live
        subscribers may then get it twice (the web client keeps one per `message_id`)."""
        if not await self.store.stored(message):
            await self.store.publish(message)
        return contract.ChatPosted(message=message)

    async def _history(
        self, channel: ChannelRef, request: contract.ChatHistoryRequest
    ) -> contract.ChatHistory:
        allowed = await self.access(channel, request.player_id)
        if not allowed.read:
            raise ContractError(CHAT_NOT_MEMBER, "you are not in this channel")
        muted = set(await self.store.muted_by(request.player_id))
        messages = [m for m in await self.store.history(channel.token) if m.sender_id not in muted]
        return contract.ChatHistory(
            channel=channel.token, messages=messages[-request.limit :], may_post=allowed.post
        )

    # mutes, reports, settings ------------------------------------------------------------

    async def _mute(self, body: bytes) -> contract.ChatMutes:
        request = decode(contract.ChatMute, body)
        if request.target == request.player_id:
            raise ContractError(contract.CHAT_BAD_REQUEST, "you cannot mute yourself")
        muted = await self.store.set_mute(request.player_id, request.target, request.muted)
        return contract.ChatMutes(muted=muted)

    async def _mutes(self, body: bytes) -> contract.ChatMutes:
        request = decode(contract.ChatMutesQuery, body)
        return contract.ChatMutes(muted=await self.store.muted_by(request.player_id))

    async def _report(self, body: bytes) -> contract.ChatReported:
        request = decode(contract.ChatReport, body)
        once = request.request_id is not None
        report_id = uuid.uuid4().hex
        if request.request_id is not None:
            # a repeated request (its first reply lost) gets the first report, not a second
            report_id = request_key(request.player_id, request.request_id)
            if await self.store.has_report(report_id):
                return contract.ChatReported(report_id=report_id)
        channel = parse_channel(request.channel)
        if channel is None:
            raise ContractError(CHAT_BAD_CHANNEL, f"{request.channel!r} names no chat channel")
        if not (await self.access(channel, request.player_id)).read:
            raise ContractError(CHAT_NOT_MEMBER, "you can report only what you can read")
        history = await self.store.history(channel.token)
        at = next((i for i, m in enumerate(history) if m.message_id == request.message_id), None)
        if at is None:
            raise ContractError(CHAT_UNKNOWN_MESSAGE, "that message is not in the history")
        record = contract.ChatReportRecord(
            report_id=report_id,
            reporter=request.player_id,
            reason=request.reason,
            reported_at=self.clock(),
            message=history[at],
            context=history[max(0, at - self.section.report_context) : at + 1],
        )
        await self.store.add_report(record, once=once)
        log.info("chat_message_reported", report_id=record.report_id, channel=channel.token)
        return contract.ChatReported(report_id=record.report_id)

    async def _settings(self, body: bytes) -> contract.ChatSettingsReply:
        request = decode(contract.ChatSettingsRequest, body)
        room = await self.directory.room(request.room_id)
        if room is None or room.member(request.player_id) is None:
            raise ContractError(CHAT_NOT_MEMBER, "you are not in this room")
        current = await self.store.room_settings(room.room_id)
        changes = {
            k: v
            for k, v in (
                ("spectator_chat", request.spectator_chat),
                ("bot_stickers", request.bot_stickers),
            )
            if v is not None
        }
        if changes:
            if room.creator != request.player_id:
                raise ContractError(CHAT_NOT_CREATOR, "only the room's creator changes this")
            current = current.model_copy(update=changes)
            await self.store.put_room_settings(room.room_id, current)
        return contract.ChatSettingsReply(room_id=room.room_id, settings=current)

    async def _bot_sticker(self, body: bytes) -> contract.ChatPosted:
        request = decode(contract.BotSticker, body)
        room = self.directory.room_of_table(request.table_id)
        if room is None and request.occasion == "game_end":
            # the lobby closes the room as the game ends: who sat there is still known
            room = self.directory.ended_room_of_table(request.table_id)
        bot = None if room is None else room.member(request.bot_id)
        if room is None or bot is None or not bot.bot or room.status != "started":
            raise ContractError(CHAT_NOT_MEMBER, "that bot does not sit at that table")
        if not (await self.store.room_settings(room.room_id)).bot_stickers:
            raise ContractError(CHAT_BOT_STICKERS_OFF, "the room turned bot stickers off")
        channel = ChannelRef(kind="table", id=request.table_id)
        sticker = sticker_for(bot.style, request.occasion)
        # One sticker per moment across every chat instance: the same moment reaches chat
        # again from another bot worker (a game's end announced twice after a table
        # takeover, a bankruptcy seen by two workers); the moderator's duplicate rule is
        # per instance and per sender, so it does not catch that.
        moment = ".".join(m for m in (request.table_id, request.occasion, request.moment) if m)
        return await self._send(channel, bot.player_id, bot.name, None, sticker, True, moment)
