"""Chat state in NATS: the history in stream `CHAT`, mutes, reports and room settings in KV.

- `CHAT`: one subject per channel (`opolyx.chat.<channel>.messages`), at most
  `history_limit` messages per subject and `history_max_age_seconds` old (the server drops
  the rest), so the history is bounded however long a channel lives.
- `chat_mutes`: player key -> `ChatMutes` (remembered across sessions and instances);
  changed with compare-and-set so two instances cannot lose each other's change.
- `chat_reports`: report id -> `ChatReportRecord`.
- `chat_rooms`: room id -> `ChatRoomSettings`.
- `chat_bot_moments`: `<table>.<occasion>[.<moment>]` -> the bot that took it, created once
  (the server refuses a second create, whichever instance asks), kept as long as the
  history: a bot sticker moment gets one sticker however often it is asked for.
- `chat_post_ids`: a hash of (player, post `request_id`) -> the `ChatMessage` that request
  posts, created once before the post is published and kept `REQUEST_ID_SECONDS`: a
  repeated request (its first reply lost to a timeout) gets that message, never a second
  post. Each post is published with its `message_id` as `Nats-Msg-Id`, so one published
  twice (a repeat that found the first claimed but not yet in the history) is stored once.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TypeVar

from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue
from opolyx_contracts.chat import (
    MAX_MUTES,
    REQUEST_ID_SECONDS,
    ChatMessage,
    ChatMutes,
    ChatReportRecord,
    ChatRoomSettings,
)
from opolyx_contracts.envelope import encode
from opolyx_contracts.errors import BUSY, ContractError
from opolyx_contracts.lobby import member_token
from opolyx_contracts.subjects import (
    CHAT_BOT_MOMENTS_BUCKET,
    CHAT_MUTES_BUCKET,
    CHAT_POST_IDS_BUCKET,
    CHAT_REPORTS_BUCKET,
    CHAT_ROOMS_BUCKET,
    CHAT_STREAM,
    CHAT_STREAM_SUBJECTS,
    chat_messages,
)
from opolyx_service.connection import ensure_kv, ensure_stream
from pydantic import BaseModel, ValidationError

from opolyx_chat.settings import ChatSection

__all__ = ["CHAT_DUPLICATE_WINDOW_SECONDS", "ChatStore", "request_key"]

M = TypeVar("M", bound=BaseModel)
CAS_ATTEMPTS = 20
CHAT_DUPLICATE_WINDOW_SECONDS = 120.0
"""Stream `CHAT` stores a `Nats-Msg-Id` once within this time (longer than a post's
`request_id` is known, so a post published again by a repeat is never stored twice)."""


def request_key(player_id: str, request_id: str) -> str:
    """The key of a player's request id (in `chat_post_ids`, and a report's id): a hash, so
    any player id and request id make a valid key and two players never share one."""
    material = f"{player_id}\x1f{request_id}".encode()
    return hashlib.blake2b(material, digest_size=16).hexdigest()


class ChatStore:
    def __init__(
        self,
        js: JetStreamContext,
        mutes: KeyValue,
        reports: KeyValue,
        rooms: KeyValue,
        moments: KeyValue,
        post_ids: KeyValue,
    ) -> None:
        self.js = js
        self.mutes = mutes
        self.reports = reports
        self.rooms = rooms
        self.moments = moments
        self.post_ids = post_ids

    @classmethod
    async def open(
        cls, js: JetStreamContext, section: ChatSection, *, replicas: int = 1
    ) -> ChatStore:
        """The stream and buckets, with `replicas` (the service's `jetstream.replicas`)."""
        await ensure_stream(
            js,
            CHAT_STREAM,
            [CHAT_STREAM_SUBJECTS],
            # never longer than the messages are kept (the server refuses that)
            duplicate_window=min(CHAT_DUPLICATE_WINDOW_SECONDS, section.history_max_age_seconds),
            max_age=section.history_max_age_seconds,
            max_msgs_per_subject=section.history_limit,
            replicas=replicas,
        )
        return cls(
            js,
            await ensure_kv(js, CHAT_MUTES_BUCKET, replicas=replicas),
            await ensure_kv(js, CHAT_REPORTS_BUCKET, replicas=replicas),
            await ensure_kv(js, CHAT_ROOMS_BUCKET, replicas=replicas),
            await ensure_kv(
                js,
                CHAT_BOT_MOMENTS_BUCKET,
                ttl=section.history_max_age_seconds,
                replicas=replicas,
            ),
            await ensure_kv(js, CHAT_POST_IDS_BUCKET, ttl=REQUEST_ID_SECONDS, replicas=replicas),
        )

    # history ---------------------------------------------------------------------------

    async def publish(self, message: ChatMessage) -> None:
        """Store and deliver `message`; the same message again within the stream's duplicate
        window is not stored again (though its live subscribers get it again)."""
        await self.js.publish(
            chat_messages(message.channel),
            encode(message),
            stream=CHAT_STREAM,
            headers={"Nats-Msg-Id": message.message_id},
        )

    async def stored(self, message: ChatMessage) -> bool:
        """Whether the channel's history holds `message` (by its id)."""
        history = await self.history(message.channel)
        return any(m.message_id == message.message_id for m in history)

    async def history(self, channel: str) -> list[ChatMessage]:
        """Everything the channel's history holds, oldest first (at most `history_limit`)."""
        return await self._read(CHAT_STREAM, chat_messages(channel), ChatMessage)

    async def _read(
        self,
        stream: str,
        subject: str,
        model: type[M],
        deliver: DeliverPolicy = DeliverPolicy.ALL,
    ) -> list[M]:
        """Read a subject's stored messages through a short-lived ephemeral consumer (the
        server removes it a few seconds after its last use)."""
        sub = await self.js.pull_subscribe(
            subject,
            stream=stream,
            config=ConsumerConfig(
                deliver_policy=deliver,
                ack_policy=AckPolicy.NONE,
                inactive_threshold=5.0,
                mem_storage=True,
                num_replicas=1,
            ),
        )
        try:
            pending = (await sub.consumer_info()).num_pending or 0
            found: list[M] = []
            while len(found) < pending:
                try:
                    batch = await sub.fetch(batch=pending - len(found), timeout=2.0)
                except (NatsTimeoutError, TimeoutError):
                    break  # what was stored expired meanwhile
                for msg in batch:
                    try:
                        found.append(model.model_validate_json(msg.data))
                    except ValidationError:
                        continue  # not ours to show (it was checked when written)
            return found
        finally:
            await sub.unsubscribe()

    async def claim_moment(self, key: str, bot_id: str) -> bool:
        """Take a bot sticker moment: True the first time, False once any instance took it.

        A create in KV, not a message id on the history's publish: JetStream would store a
        repeat once, but the channel's live subscribers (the gateways) get every publish."""
        try:
            await self.moments.create(key, bot_id.encode())
        except KeyWrongLastSequenceError:
            return False
        return True

    # posts by request id ------------------------------------------------------------

    async def claim_post(self, key: str, message: ChatMessage) -> ChatMessage | None:
        """Claim a request key for `message`, before it is published: None when this call
        claimed it, else the message the key was claimed for first (by any instance)."""
        for _ in range(3):
            try:
                await self.post_ids.create(key, encode(message))
            except KeyWrongLastSequenceError:
                earlier = await self.claimed_post(key)
                if earlier is not None:
                    return earlier
                continue  # expired in between: claim it now
            return None
        raise ContractError(BUSY, "that post's request id changed under us; try again")

    async def claimed_post(self, key: str) -> ChatMessage | None:
        """The message a request key was claimed for, if it was (within its TTL)."""
        try:
            entry = await self.post_ids.get(key)
        except (KeyNotFoundError, NotFoundError):
            return None
        return ChatMessage.model_validate_json(entry.value or b"")

    # mutes -----------------------------------------------------------------------------

    async def muted_by(self, player_id: str) -> list[str]:
        try:
            entry = await self.mutes.get(member_token(player_id))
        except (KeyNotFoundError, NotFoundError):
            return []
        return ChatMutes.model_validate_json(entry.value or b"{}").muted

    async def set_mute(self, player_id: str, target: str, muted: bool) -> list[str]:
        key = member_token(player_id)
        for _ in range(CAS_ATTEMPTS):
            try:
                entry = await self.mutes.get(key)
                current = ChatMutes.model_validate_json(entry.value or b"{}").muted
                revision: int | None = entry.revision
            except (KeyNotFoundError, NotFoundError):
                current, revision = [], None
            wanted = [p for p in current if p != target]
            if muted:
                wanted.append(target)
            wanted = wanted[-MAX_MUTES:]  # the oldest mute goes when the list is full
            if wanted == current:
                return current
            body = encode(ChatMutes(muted=wanted))
            try:
                if revision is None:
                    await self.mutes.create(key, body)
                else:
                    await self.mutes.update(key, body, last=revision)
                return wanted
            except KeyWrongLastSequenceError:
                continue
        raise ContractError(BUSY, "the mute list changed under us repeatedly; try again")

    # reports ---------------------------------------------------------------------------

    async def add_report(self, record: ChatReportRecord, *, once: bool = False) -> None:
        """Store the report; `once`: only if no report has its id yet (a repeated request)."""
        if not once:
            await self.reports.put(record.report_id, encode(record))
            return
        with contextlib.suppress(KeyWrongLastSequenceError):  # the same request stored it
            await self.reports.create(record.report_id, encode(record))

    async def has_report(self, report_id: str) -> bool:
        try:
            await self.reports.get(report_id)
        except (KeyNotFoundError, NotFoundError):
            return False
        return True

    async def list_reports(self, limit: int) -> list[ChatReportRecord]:
        """The newest `limit` reports, newest first."""
        found = await self._read(
            f"KV_{CHAT_REPORTS_BUCKET}",
            f"$KV.{CHAT_REPORTS_BUCKET}.>",
            ChatReportRecord,
            DeliverPolicy.LAST_PER_SUBJECT,
        )
        found.sort(key=lambda r: r.reported_at, reverse=True)
        return found[:limit]

    # room settings ---------------------------------------------------------------------

    async def room_settings(self, room_id: str) -> ChatRoomSettings:
        try:
            entry = await self.rooms.get(room_id)
        except (KeyNotFoundError, NotFoundError):
            return ChatRoomSettings()
        return ChatRoomSettings.model_validate_json(entry.value or b"{}")

    async def put_room_settings(self, room_id: str, settings: ChatRoomSettings) -> None:
        await self.rooms.put(room_id, settings.model_dump_json().encode())
