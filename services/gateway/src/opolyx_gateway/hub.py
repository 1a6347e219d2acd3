"""Fan-out of what the services publish to the connected clients.

One `TableFeed` per watched table (one subscription to its updates, shared by every client
of this gateway watching it); one subscription to the public room events, folded every
`ROOMS_PUSH_INTERVAL` into one ``lobby.rooms`` delta for every signed-in client; one to the
member events of every player (routed to that player's sockets as ``lobby.event``); one per
watched chat channel (`ChatChannels`). Every push is encoded once for all its receivers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.client import JetStreamContext
from opolyx_contracts import subjects
from opolyx_contracts.gateway import LobbyEventPush, LobbyRoomsPush, TableWatchResult
from opolyx_contracts.lobby import (
    LOBBY_MEMBER_EVENTS_WILDCARD,
    LobbyEvent,
    coalesce_room_events,
    member_token,
)
from opolyx_contracts.table import TableEvents
from opolyx_service import flush_in_order
from opolyx_service.logs import get_logger
from pydantic import ValidationError

from opolyx_gateway.chat_channels import ChatChannels
from opolyx_gateway.feed import Sink, TableFeed
from opolyx_gateway.pushes import UpdateHeader
from opolyx_gateway.seat_presence import SeatPresenceReports
from opolyx_gateway.upstream import Upstream

__all__ = ["Hub", "Sink"]

log = get_logger("opolyx.gateway.hub")

REPLAY_TIMEOUT = 5.0
"""Seconds a replay from the stream may take before it stops short (and says so)."""
ROOMS_PUSH_INTERVAL = 0.1
"""Seconds public room events are collected before one ``lobby.rooms`` push (a burst of
joins costs each socket one push, not one per event)."""


class Hub:
    def __init__(
        self,
        nc: NatsClient,
        upstream: Upstream,
        replay_limit: int,
        max_spectators: int = 100,
        on_replay_read: Callable[[int], None] | None = None,
    ) -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.upstream = upstream
        self.replay_limit = replay_limit
        self.max_spectators = max_spectators
        self._on_replay_read = on_replay_read or (lambda count: None)
        self.feeds: dict[str, TableFeed] = {}
        self.lobby_sinks: set[Sink] = set()
        self.members: dict[str, set[Sink]] = {}
        """Signed-in sockets by the player's member token (`opolyx_contracts.lobby`)."""
        self._lobby_subs: list[Subscription] = []
        self._room_events: list[LobbyEvent] = []
        self._rooms_flush: asyncio.TimerHandle | None = None
        self.chat = ChatChannels(nc, upstream)
        self.seat_presence = SeatPresenceReports(nc)
        """Tells tables when a seated player's sockets come and go (their autopilot)."""

    async def start(self) -> None:
        self._lobby_subs = [
            await self.nc.subscribe(subjects.LOBBY_EVENTS, cb=self._on_public_room),
            await self.nc.subscribe(LOBBY_MEMBER_EVENTS_WILDCARD, cb=self._on_member_event),
        ]
        await flush_in_order(self.nc)

    async def stop(self) -> None:
        await self.seat_presence.stop()
        for feed in list(self.feeds.values()):
            await feed.close()
        await self.chat.stop()
        for sub in self._lobby_subs:
            await sub.unsubscribe()
        if self._rooms_flush is not None:
            self._rooms_flush.cancel()

    # ------------------------------------------------------------- lobby
    def signed_in(self, sink: Sink, player_id: str) -> None:
        self.lobby_sinks.add(sink)
        self.members.setdefault(member_token(player_id), set()).add(sink)

    def signed_out(self, sink: Sink, player_id: str) -> None:
        self.lobby_sinks.discard(sink)
        token = member_token(player_id)
        sinks = self.members.get(token)
        if sinks is not None:
            sinks.discard(sink)
            if not sinks:
                del self.members[token]

    async def _on_public_room(self, msg: Msg) -> None:
        try:
            event = LobbyEvent.model_validate_json(msg.data)
        except ValidationError:
            log.warning("lobby_event_unreadable")
            return
        self._room_events.append(event)
        if self._rooms_flush is None:
            self._rooms_flush = asyncio.get_running_loop().call_later(
                ROOMS_PUSH_INTERVAL, self._push_rooms
            )

    def _push_rooms(self) -> None:
        self._rooms_flush = None
        events, self._room_events = self._room_events, []
        delta = coalesce_room_events(events)
        text = LobbyRoomsPush(upserted=delta.upserted, removed=delta.removed).model_dump_json()
        for sink in list(self.lobby_sinks):
            sink.push(text)

    async def _on_member_event(self, msg: Msg) -> None:
        token = msg.subject.split(".")[-2]
        sinks = self.members.get(token)
        if not sinks:
            return
        try:
            event = LobbyEvent.model_validate_json(msg.data)
        except ValidationError:
            log.warning("lobby_member_event_unreadable")
            return
        text = LobbyEventPush(event=event).model_dump_json()
        for sink in list(sinks):
            sink.push(text)

    # ------------------------------------------------------------- tables
    def _feed(self, table_id: str) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None:
            feed = self.feeds[table_id] = TableFeed(
                table_id,
                self.nc,
                self.upstream,
                self.replay,
                self.replay_limit,
                on_empty=lambda f: self._forget(f),
                max_spectators=self.max_spectators,
            )
        return feed

    def _forget(self, feed: TableFeed) -> None:
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]

    async def watch(
        self,
        sink: Sink,
        table_id: str,
        player_id: str,
        since: int | None,
        *,
        may_replay: Callable[[int], bool] | None = None,
    ) -> TableWatchResult:
        feed = self._feed(table_id)
        try:
            result = await feed.join(sink, player_id, since, may_replay)
        except BaseException:
            if not feed.watchers:
                await feed.close()
            raise
        if result.seat is not None:
            self.seat_presence.joined(sink, table_id, player_id)
        return result

    async def unwatch(self, sink: Sink, table_id: str) -> None:
        self.seat_presence.left(sink, table_id)
        feed = self.feeds.get(table_id)
        if feed is not None:
            await feed.leave(sink)

    def cursor_of(self, sink: Sink, table_id: str) -> int | None:
        """The last sequence of `table_id` pushed to `sink` (None: it does not watch the
        table, or its pushes are held while its replay is read)."""
        feed = self.feeds.get(table_id)
        watcher = None if feed is None else feed.watchers.get(sink)
        if watcher is None or watcher.held is not None:
            return None
        return watcher.cursor

    def command_done(self, table_id: str, seq: int) -> None:
        """A command at `table_id` was accepted at `seq`: its watchers must see it."""
        feed = self.feeds.get(table_id)
        if feed is not None:
            feed.expect(seq)

    def command_refused(self, table_id: str, version: int | None) -> None:
        """A command at `table_id` was refused as stale (decided on `version`) or, sent
        without a version, as out of turn: the table may be past what this gateway has
        seen (`TableFeed.refused`)."""
        feed = self.feeds.get(table_id)
        if feed is not None:
            feed.refused(version)

    async def replay(self, table_id: str, since: int, upto: int) -> list[TableEvents]:
        """The stored batches holding the events ``since < seq <= upto`` of one table, read
        from the first of them on (found by its stream sequence), not from the table's
        first message: the cost grows with what was missed, not with the game's length."""
        subject = subjects.table_events(table_id)
        try:
            start = await self._stream_seq_after(subject, since)
        except Exception as exc:  # no stream or no events yet, or JetStream down
            log.warning("events_replay_failed", table_id=table_id, error=repr(exc))
            return []
        if start is None:
            return []
        missed: list[TableEvents] = []
        done = asyncio.Event()

        async def collect(msg: Msg) -> None:
            self._on_replay_read(1)
            try:
                batch = TableEvents.model_validate_json(msg.data)
            except ValidationError:
                log.warning("stored_events_unreadable", table_id=table_id)
                return
            if batch.last_seq > since and batch.first_seq <= upto:
                missed.append(batch)
            if batch.last_seq >= upto:
                done.set()

        try:
            sub = await self.js.subscribe(
                subject,
                cb=collect,
                stream=subjects.TABLE_EVENTS_STREAM,
                ordered_consumer=True,
                config=ConsumerConfig(
                    deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start
                ),
            )
        except Exception as exc:  # no stream yet, or JetStream down: a snapshot will do
            log.warning("events_replay_failed", table_id=table_id, error=repr(exc))
            return []
        try:
            await asyncio.wait_for(done.wait(), timeout=REPLAY_TIMEOUT)
        except TimeoutError:
            log.warning("events_replay_stopped_short", table_id=table_id, batches=len(missed))
        finally:
            await sub.unsubscribe()
        return missed

    async def _stream_seq_after(self, subject: str, since: int) -> int | None:
        """The stream sequence of the first stored batch of `subject` with an event after
        `since` (None: there is none), found by bisection over the stream with one-message
        reads: about log2(stream length) of them, whatever the table's history."""
        stream = subjects.TABLE_EVENTS_STREAM
        last = await self.js.get_last_msg(stream, subject)
        self._on_replay_read(1)
        if last.seq is None:
            return None
        newest = UpdateHeader.model_validate_json(last.data or b"")
        if newest.last_seq <= since:
            return None
        found, low, high = last.seq, 1, last.seq - 1
        if newest.first_seq <= since + 1:
            return found
        while low <= high:
            middle = (low + high) // 2
            probe = await self.js.get_msg(stream, seq=middle, subject=subject, next=True)
            self._on_replay_read(1)
            if probe.seq is None or probe.seq > high:  # none of the table's in [middle, high]
                high = middle - 1
                continue
            batch = UpdateHeader.model_validate_json(probe.data or b"")
            if batch.last_seq <= since:
                low = probe.seq + 1
                continue
            found, high = probe.seq, middle - 1
            if batch.first_seq <= since + 1:  # it holds since + 1: nothing earlier is needed
                break
        return found
