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
"""

from __future__ import annotations

from typing import TypeVar

from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue
from opolyx_contracts.chat import (
    MAX_MUTES,
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
    CHAT_REPORTS_BUCKET,
    CHAT_ROOMS_BUCKET,
    CHAT_STREAM,
    CHAT_STREAM_SUBJECTS,
    chat_messages,
)
from opolyx_service.connection import ensure_kv, ensure_stream
from pydantic import BaseModel, ValidationError

from opolyx_chat.settings import ChatSection

__all__ = ["ChatStore"]

M = TypeVar("M", bound=BaseModel)
CAS_ATTEMPTS = 20


class ChatStore:
    def __init__(
        self,
        js: JetStreamContext,
        mutes: KeyValue,
        reports: KeyValue,
        rooms: KeyValue,
        moments: KeyValue,
    ) -> None:
        self.js = js
        self.mutes = mutes
        self.reports = reports
        self.rooms = rooms
        self.moments = moments

    @classmethod
    async def open(
        cls, js: JetStreamContext, section: ChatSection, *, replicas: int = 1
    ) -> ChatStore:
        """The stream and buckets, with `replicas` (the service's `jetstream.replicas`)."""
        await ensure_stream(
            js,
            CHAT_STREAM,
            [CHAT_STREAM_SUBJECTS],
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
        )

    # history ---------------------------------------------------------------------------

    async def publish(self, message: ChatMessage) -> None:
        await self.js.publish(chat_messages(message.channel), encode(message), stream=CHAT_STREAM)

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

    async def add_report(self, record: ChatReportRecord) -> None:
        await self.reports.put(record.report_id, encode(record))

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
