"""Fan-out of what the services publish to the connected clients.

One live JetStream subscription per watched table, shared by every client watching it;
one core subscription to the lobby events, shared by every client. A client that joins a
table (or comes back) gets the events it missed (replayed from JetStream), then the public
view at that sequence, then every later event; nothing is lost or sent twice in between.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.api import DeliverPolicy
from nats.js.client import JetStreamContext
from opolyx_contracts import subjects
from opolyx_contracts.errors import SEAT_NOT_YOURS, UNAVAILABLE
from opolyx_contracts.table import TableEvents, TableView
from opolyx_rules import command_to_json, legal_commands, state_from_json

from opolyx_gateway.errors import GatewayError
from opolyx_gateway.upstream import Upstream, parse_table_events

__all__ = ["Hub", "Sink"]

log = logging.getLogger("opolyx.gateway.hub")


class Sink(Protocol):
    """A connected client as the hub sees it."""

    def push(self, message: dict[str, Any] | str) -> None:
        """Send a push: a message, or one already encoded (shared by many clients)."""


def encode(message: Any) -> str:
    return json.dumps(message, separators=(",", ":"))


def events_push(batch: TableEvents, after: int) -> dict[str, Any] | None:
    """The events of ``batch`` with a sequence above ``after``, as one push (None if none)."""
    records = [r for r in batch.events if r.seq > after]
    if not records:
        return None
    return {
        "type": "table.events",
        "table": batch.table_id,
        "seq": records[-1].seq,
        "events": [{"seq": r.seq, "version": r.version, "event": r.event} for r in records],
        "at": batch.at,
    }


def local_legal(view: TableView, seats: set[int]) -> dict[int, list[dict[str, Any]]] | None:
    """The seats' legal commands computed here from the public view (the rules need no
    secret for that), sparing the table a request per seat; None if that fails."""
    try:
        state = state_from_json(view.state)
        return {seat: [command_to_json(c) for c in legal_commands(state, seat)] for seat in seats}
    except Exception as exc:  # a newer state schema, say: ask the table instead
        log.warning("legal commands of table %s computed by the table: %s", view.table_id, exc)
        return None


Legal = dict[int | None, list[dict[str, Any]] | None]


def state_pushes(view: TableView, legal: Legal) -> dict[int | None, str]:
    """The encoded ``table.state`` push for each seat; the state is encoded only once."""
    common = encode(
        {
            "type": "table.state",
            "table": view.table_id,
            "seq": view.seq,
            "version": view.version,
            "seats": [
                {"seat": i, "player_id": s.player_id, "name": s.name, "bot": s.bot}
                for i, s in enumerate(view.seats)
            ],
            "deadline_at": view.deadline_at,
            "now": time.time(),
        }
    )
    state = encode(view.state)
    return {
        seat: f'{common[:-1]},"state":{state},"seat":{encode(seat)},"legal":{encode(moves)}}}'
        for seat, moves in legal.items()
    }


@dataclass(eq=False)
class Watcher:
    sink: Sink
    seat: int | None
    cursor: int = 0
    """Last event sequence pushed to this client."""
    state_seq: int = -1
    """Sequence of the last view pushed to this client."""
    buffer: list[TableEvents] | None = field(default_factory=list)
    """Live events held back while the client is being brought up to date."""

    def deliver(self, batch: TableEvents) -> None:
        push = events_push(batch, self.cursor)
        if push is not None:
            self.sink.push(push)
            self.cursor = push["seq"]


class TableFeed:
    def __init__(self, hub: Hub, table_id: str) -> None:
        self.hub = hub
        self.table_id = table_id
        self.watchers: dict[Sink, Watcher] = {}
        self.seats: list[str] | None = None
        self._sub: Subscription | None = None
        self._start_lock = asyncio.Lock()
        self._dirty = False
        self._refresher: asyncio.Task[None] | None = None
        self.latest_seq = 0
        """Highest event sequence seen on the live subscription."""
        self._view_seq = 0
        """Sequence of the view pushed in the last refresh."""

    async def _ensure_live(self) -> None:
        async with self._start_lock:
            if self._sub is not None:
                return
            try:
                self._sub = await self.hub.js.subscribe(
                    subjects.table_events(self.table_id),
                    cb=self._on_msg,
                    ordered_consumer=True,
                    deliver_policy=DeliverPolicy.NEW,
                )
            except Exception as exc:  # no stream yet, or JetStream down
                raise GatewayError(
                    UNAVAILABLE, f"the table events cannot be followed right now ({exc})"
                ) from None

    async def _on_msg(self, msg: Msg) -> None:
        batch = parse_table_events(msg.data)
        if batch is None:
            log.warning("unreadable table events on %s", msg.subject)
            return
        self.latest_seq = max(self.latest_seq, batch.last_seq)
        for watcher in list(self.watchers.values()):
            if watcher.buffer is not None:
                watcher.buffer.append(batch)
            else:
                watcher.deliver(batch)
        self._dirty = True
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.create_task(self._refresh_views())

    async def _refresh_views(self) -> None:
        """Push the new public view after events; bursts of events cost one view each seat.

        The table stores a command's events before it answers views with the new state, so
        a view older than the events seen is asked for again shortly.
        """
        attempts = 0
        while self.watchers and (self._dirty or self._view_seq < self.latest_seq):
            if not self._dirty:
                attempts += 1
                if attempts > 40:
                    log.warning("views of table %s stay behind its events", self.table_id)
                    return
                await asyncio.sleep(min(0.005 * attempts, 0.1))
            self._dirty = False
            seats = {w.seat for w in self.watchers.values() if w.buffer is None}
            try:
                view, legal = await self.snapshot(seats)
            except GatewayError as exc:
                log.warning("view of table %s failed: %s", self.table_id, exc.message)
                continue
            for seat, push in state_pushes(view, legal).items():
                for watcher in list(self.watchers.values()):
                    if (
                        watcher.seat == seat
                        and watcher.buffer is None
                        and view.seq > watcher.state_seq
                    ):
                        watcher.sink.push(push)
                        watcher.state_seq = view.seq
            self._view_seq = view.seq

    async def snapshot(self, seats: set[int | None]) -> tuple[TableView, Legal]:
        """The current public view once, and each seat's legal commands (None: spectator)."""
        public = await self.hub.upstream.table_view(self.table_id, None)
        players = {seat for seat in seats if seat is not None}
        legal: Legal = dict.fromkeys(seats)
        computed = local_legal(public, players)
        for seat in players:
            if computed is not None:
                legal[seat] = computed[seat]
            else:
                legal[seat] = (await self.hub.upstream.table_view(self.table_id, seat)).legal
        return public, legal

    def seat_of(self, player_id: str) -> int | None:
        if self.seats is None:
            return None
        return next((i for i, p in enumerate(self.seats) if p == player_id), None)

    async def load_seats(self) -> list[str]:
        if self.seats is None:
            view = await self.hub.upstream.table_view(self.table_id, None)
            self.seats = [s.player_id for s in view.seats]
        return self.seats

    async def add(self, sink: Sink, player_id: str, since: int | None) -> dict[str, Any]:
        await self._ensure_live()
        old = self.watchers.pop(sink, None)
        watcher = Watcher(sink=sink, seat=None)
        self.watchers[sink] = watcher
        try:
            await self.load_seats()
            watcher.seat = self.seat_of(player_id)
            view, legal = await self.snapshot({watcher.seat})
            replayed = 0
            if since is not None and 0 < view.seq - since <= self.hub.replay_limit:
                watcher.cursor = since
                for batch in await self.hub.replay(self.table_id, since, view.seq):
                    before = watcher.cursor
                    watcher.deliver(batch)
                    replayed += watcher.cursor - before
            sink.push(state_pushes(view, legal)[watcher.seat])
            watcher.cursor = max(watcher.cursor, view.seq)
            watcher.state_seq = view.seq
            buffered, watcher.buffer = watcher.buffer or [], None
            for batch in buffered:
                watcher.deliver(batch)
            if watcher.cursor > view.seq:  # events after the view: its state follows them
                self._dirty = True
                if self._refresher is None or self._refresher.done():
                    self._refresher = asyncio.create_task(self._refresh_views())
        except BaseException:
            self.watchers.pop(sink, None)
            if old is not None:
                self.watchers[sink] = old
            raise
        return {
            "table": self.table_id,
            "seat": watcher.seat,
            "spectator": watcher.seat is None,
            "seq": view.seq,
            "replayed": replayed,
        }

    async def remove(self, sink: Sink) -> None:
        self.watchers.pop(sink, None)
        if not self.watchers:
            await self.close()

    async def close(self) -> None:
        self.hub.feeds.pop(self.table_id, None)
        if self._refresher is not None:
            self._refresher.cancel()
        sub, self._sub = self._sub, None
        if sub is not None:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # connection already gone
                log.debug("unsubscribe failed: %s", exc)


class Hub:
    def __init__(self, nc: NatsClient, upstream: Upstream, replay_limit: int) -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.upstream = upstream
        self.replay_limit = replay_limit
        self.feeds: dict[str, TableFeed] = {}
        self.lobby_sinks: set[Sink] = set()
        self._lobby_sub: Subscription | None = None
        self.chat_sinks: dict[str, set[Sink]] = {}
        self._chat_subs: dict[str, Subscription] = {}

    async def start(self) -> None:
        self._lobby_sub = await self.nc.subscribe(subjects.LOBBY_EVENTS, cb=self._on_lobby)
        await asyncio.sleep(0)
        await self.nc.flush()

    async def stop(self) -> None:
        for feed in list(self.feeds.values()):
            await feed.close()
        for sub in self._chat_subs.values():
            await sub.unsubscribe()
        self._chat_subs.clear()
        if self._lobby_sub is not None:
            await self._lobby_sub.unsubscribe()

    async def _on_lobby(self, msg: Msg) -> None:
        try:
            event = json.loads(msg.data)
        except ValueError:
            log.warning("unreadable lobby event")
            return
        push = encode({"type": "lobby.event", "event": event})
        for sink in list(self.lobby_sinks):
            sink.push(push)

    async def watch_chat(self, sink: Sink, room: str) -> None:
        """Push the chat messages of ``room`` (one shared subscription per room)."""
        sinks = self.chat_sinks.setdefault(room, set())
        sinks.add(sink)
        if room not in self._chat_subs:

            async def relay(msg: Msg) -> None:
                try:
                    message = json.loads(msg.data)
                except ValueError:
                    log.warning("unreadable chat message in %s", room)
                    return
                push = encode({"type": "chat.message", "room": room, "message": message})
                for target in list(self.chat_sinks.get(room, ())):
                    target.push(push)

            self._chat_subs[room] = await self.nc.subscribe(subjects.chat_messages(room), cb=relay)
            # the subscription is live on the server before the client hears "ok"
            await asyncio.sleep(0)
            await self.nc.flush()

    async def unwatch_chat(self, sink: Sink, room: str) -> None:
        sinks = self.chat_sinks.get(room)
        if sinks is None:
            return
        sinks.discard(sink)
        if not sinks:
            del self.chat_sinks[room]
            sub = self._chat_subs.pop(room, None)
            if sub is not None:
                await sub.unsubscribe()

    def feed(self, table_id: str) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None:
            feed = self.feeds[table_id] = TableFeed(self, table_id)
        return feed

    async def watch(
        self, sink: Sink, table_id: str, player_id: str, since: int | None
    ) -> dict[str, Any]:
        feed = self.feed(table_id)
        try:
            return await feed.add(sink, player_id, since)
        except BaseException:
            if not feed.watchers:
                await feed.close()
            raise

    async def unwatch(self, sink: Sink, table_id: str) -> None:
        feed = self.feeds.get(table_id)
        if feed is not None:
            await feed.remove(sink)

    async def seat_for_command(self, table_id: str, player_id: str, command: dict[str, Any]) -> int:
        """The player's seat at the table; refuses a command naming somebody else's seat."""
        feed = self.feeds.get(table_id)
        if feed is not None:
            seats = await feed.load_seats()
        else:
            view = await self.upstream.table_view(table_id, None)
            seats = [s.player_id for s in view.seats]
        mine = next((i for i, p in enumerate(seats) if p == player_id), None)
        if mine is None:
            raise GatewayError(SEAT_NOT_YOURS, "you have no seat at this table; you can only watch")
        claimed = command.get("seat", mine)
        if claimed != mine:
            raise GatewayError(SEAT_NOT_YOURS, f"seat {claimed} is not yours; you play seat {mine}")
        return mine

    async def replay(self, table_id: str, since: int, upto: int) -> list[TableEvents]:
        """The stored batches holding the events ``since < seq <= upto`` of one table."""
        missed: list[TableEvents] = []
        done = asyncio.Event()

        async def collect(msg: Msg) -> None:
            batch = parse_table_events(msg.data)
            if batch is None:
                return
            if batch.last_seq > since and batch.first_seq <= upto:
                missed.append(batch)
            if batch.last_seq >= upto:
                done.set()

        sub = await self.js.subscribe(
            subjects.table_events(table_id),
            cb=collect,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
        )
        try:
            await asyncio.wait_for(done.wait(), timeout=5)
        except TimeoutError:
            log.warning("replay of table %s stopped short at %d events", table_id, len(missed))
        finally:
            await sub.unsubscribe()
        return missed
