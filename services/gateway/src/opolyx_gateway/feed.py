"""One table as this gateway's clients watch it: one subscription, one encoding per push.

The table publishes a `TableUpdate` after each stored batch (core NATS, subject
`table_update`): its events, the public view and the pending decisions with their legal
commands. A feed subscribes once per watched table and forwards each update to every
watcher as the same pre-encoded text; no view request and no rules call per command.

The rare paths ask the table: a feed's first watcher gets the view by request; core NATS
may drop a message, so an update whose `first_seq` skips past the feed's sequence makes the
feed replay the gap from the TABLE_EVENTS stream first, and a command reply naming a
sequence no update has brought `RESYNC_DELAY` after that reply makes it resynchronise
(stream + view). A command refused as stale at the feed's own sequence, or refused as out
of turn without a version, makes it look at the table's view once (`refused`).
Updates are applied one at a time in order (a lock shared with joins and resyncs): as they
are read, without a task hop (`subscribe_direct`), while the lock is free; queued behind it
when it is not.

A client that resumes (``since``) gets the events it missed from the stream, at most
`replay_limit` of them and only as many as its socket's budget allows (else the state
alone, which it needs anyway); the stream is read outside the lock, so one client's replay
never holds up the table's updates to the others (its own are held back until its replay
and state are out, then sent in order).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts import subjects
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import (
    TOO_MANY_SPECTATORS,
    TableSeat,
    TableStatePush,
    TableWatchResult,
)
from opolyx_contracts.table import TableEvents, TableUpdate, TableView
from opolyx_service import flush_in_order, subscribe_direct
from opolyx_service.logs import get_logger
from pydantic import ValidationError

from opolyx_gateway.errors import GatewayError
from opolyx_gateway.pushes import (
    UpdateHeader,
    encode_state,
    events_push,
    read_update_header,
    seats_of,
    state_from_update,
    state_from_view,
    update_push,
)

__all__ = ["Sink", "TableFeed"]

log = get_logger("opolyx.gateway.feed")

RESYNC_DELAY = 1.0
"""Seconds a command's reply may run ahead of its update before the feed resynchronises,
counted from that reply. The update is published right after the reply: in the gateway
bench's saturation phase (100 clients at full speed, load 2.5-4.5 on 2 cores) it reached
the feed at most 40 ms after the reply (1-8 ms for most). A lost update is rare (core NATS
on a healthy connection) and a lost one before the table's next batch is caught by that
batch's `first_seq`, so the wait is generous: a resync costs the busy table a view request."""


class Sink(Protocol):
    """A connected client as a feed sees it."""

    def push(self, text: str) -> None:
        """Send a push, already encoded (the same text goes to every watcher)."""

    def push_table(self, table_id: str, seq: int, text: str) -> None:
        """`push` of a push that brings the client's view of `table_id` to `seq` (a
        command's reply waiting for that sequence may go in the same frame)."""


class ViewSource(Protocol):
    async def table_view(self, table_id: str, seat: int | None) -> TableView: ...


Replay = Callable[[str, int, int], Awaitable[list[TableEvents]]]
"""(table_id, since, upto) -> the stored batches holding events since < seq <= upto."""


@dataclass(eq=False)
class Watcher:
    seat: int | None
    cursor: int
    """Last event sequence this client has (pushes at or below it are not sent again)."""
    held: list[str] | None = None
    """Pushes kept back while this client's replay is read (None: send at once)."""

    def send(self, sink: Sink, table_id: str, seq: int, text: str) -> None:
        if self.held is None:
            sink.push_table(table_id, seq, text)
        else:
            self.held.append(text)


class TableFeed:
    def __init__(
        self,
        table_id: str,
        nc: NatsClient,
        views: ViewSource,
        replay: Replay,
        replay_limit: int,
        on_empty: Callable[[TableFeed], None],
        max_spectators: int = 100,
    ) -> None:
        self.table_id = table_id
        self._nc = nc
        self._views = views
        self._replay = replay
        self._replay_limit = replay_limit
        self._max_spectators = max_spectators
        self._on_empty = on_empty
        self.watchers: dict[Sink, Watcher] = {}
        self.seats: list[TableSeat] | None = None
        self.seq = -1
        """Sequence of the newest state this feed knows (-1: none yet)."""
        self._state: TableStatePush | None = None
        self._last_update: str | None = None
        """The last update's text: `_state` is read from it when a watcher joins."""
        self._known_seats: set[int] | None = set()
        """Seats whose decisions `_state` lists (None: every seat, from an update)."""
        self._lock = asyncio.Lock()
        self._backlog: deque[tuple[UpdateHeader, str]] | None = None
        """Updates waiting for the lock, oldest first (None: none, `_drain` not running)."""
        self._drainer: asyncio.Task[None] | None = None
        self._sub: Subscription | None = None
        self._resync: asyncio.Task[None] | None = None
        self._named: deque[tuple[int, float]] = deque()
        """(sequence, loop time) of the command replies that named a sequence this feed had
        not reached, oldest first, each sequence higher than the one before (see `expect`)."""
        self._check: asyncio.TimerHandle | None = None
        self._look: asyncio.TimerHandle | None = None
        """A look at the table's view due after a refused command (`refused`)."""
        self._looking: asyncio.Task[None] | None = None
        self._resynced: tuple[int, float] | None = None
        """(the feed's sequence before, loop time) of the last resync, until the next update
        says whether the updates it stood in for were lost or late."""

    # ------------------------------------------------------------- live updates
    async def _ensure_subscribed(self) -> None:
        if self._sub is None:
            self._sub = await subscribe_direct(
                self._nc, subjects.table_update(self.table_id), self._on_update
            )
            await flush_in_order(self._nc)

    def _on_update(self, msg: Msg) -> None:
        """An update as it is read (`subscribe_direct`): applied at once when nothing holds
        the feed (the usual case), else queued behind what does (a join, a resync, a gap
        read from the stream) and applied in order by `_drain`."""
        try:
            raw = msg.data.decode()
            header = read_update_header(raw)
        except (ValidationError, UnicodeDecodeError) as exc:
            log.warning("table_update_unreadable", table_id=self.table_id, error=str(exc))
            return
        if header.table_id != self.table_id:
            return
        if self._backlog is None and not self._lock.locked() and not self._skips(header):
            self._apply_in_order(header, raw)
            return
        if self._backlog is None:
            self._backlog = deque()
            self._drainer = asyncio.create_task(self._drain())
        self._backlog.append((header, raw))

    async def _drain(self) -> None:
        backlog = self._backlog
        assert backlog is not None
        try:
            while backlog:  # updates read while one is applied join the end
                header, raw = backlog.popleft()
                async with self._lock:
                    await self._apply(header, raw)
        finally:
            self._backlog = None

    def _skips(self, header: UpdateHeader) -> bool:
        """The update starts past the feed's sequence: core NATS dropped something."""
        return 0 <= self.seq < header.last_seq and header.first_seq > self.seq + 1

    async def _apply(self, header: UpdateHeader, raw: str) -> None:
        if self._skips(header):  # the stream has what core NATS dropped
            self._resynced = None
            await self._push_missed(self.seq, header.first_seq - 1)
        self._apply_in_order(header, raw)

    def _apply_in_order(self, header: UpdateHeader, raw: str) -> None:
        """Apply an update that follows on from the feed's sequence (or is old)."""
        if self.seq < 0 or header.last_seq <= self.seq:
            # no watcher has a state yet (its join asks for one), or already seen
            if self._resynced is not None and header.last_seq > self._resynced[0]:
                self._late_after_resync(header, self._resynced[1])
            return
        self._resynced = None
        self._broadcast(header.last_seq, update_push(raw))
        self.seq = header.last_seq
        self._last_update = raw
        self._state = None
        self._known_seats = None

    def _late_after_resync(self, header: UpdateHeader, resynced_at: float) -> None:
        """An update the last resync stood in for came after all: it was late, not lost."""
        since = asyncio.get_running_loop().time() - resynced_at
        log.warning(
            "table_update_late_after_resync",
            table_id=self.table_id,
            seq=header.last_seq,
            seconds_after_resync=round(since, 3),
        )
        self._resynced = None

    def _current_state(self) -> TableStatePush | None:
        """The state a joining watcher gets, read from the last update only when asked."""
        if self._state is None and self._last_update is not None:
            try:
                update = TableUpdate.model_validate_json(self._last_update)
            except ValidationError as exc:
                log.warning(
                    "table_update_unreadable", table_id=self.table_id, error=str(exc.errors()[:1])
                )
                return None
            self._state = state_from_update(update, self.seats or [])
        return self._state

    def _broadcast(self, seq: int, text: str) -> None:
        for sink, watcher in list(self.watchers.items()):
            if watcher.cursor < seq:
                watcher.send(sink, self.table_id, seq, text)
                watcher.cursor = seq

    async def _push_missed(self, after: int, upto: int) -> None:
        """Push the events `after < seq <= upto` from the stream, to every watcher."""
        for batch in await self._replay(self.table_id, after, upto):
            text = events_push(batch, after, upto)
            if text is not None:
                self._broadcast(min(batch.last_seq, upto), text)
        self.seq = max(self.seq, upto)

    # ------------------------------------------------------------- the rare paths
    def expect(self, seq: int) -> None:
        """A command's reply said the table is at `seq`: resync if no update brings it
        within `RESYNC_DELAY` of this reply.

        One timer per feed at a time (no task per command), due when the oldest sequence
        named and not reached is `RESYNC_DELAY` old; when it fires, only the sequences named
        at least that long ago must have been reached (a reply from a millisecond before
        has its update still on the way: it is looked at on its own time)."""
        if seq <= self.seq:
            return
        named = self._named
        if named and named[-1][0] >= seq:
            return  # an earlier reply named as much: its deadline comes first
        loop = asyncio.get_running_loop()
        named.append((seq, loop.time()))
        if self._check is None:
            self._check = loop.call_at(named[0][1] + RESYNC_DELAY, self._check_expected)

    def refused(self, version: int | None) -> None:
        """The table refused a command as stale (decided on `version`) or, sent without a
        version (the web client's), as out of turn. When `version` is this feed's own
        sequence, or unknown, the table may be past everything this feed has seen: updates
        lost with nothing after them to show the gap (an instance killed right after storing
        a bot's moves, before their updates went out, and the game then waits for a player
        who sees the old state), or the client only raced a push. The feed looks at the
        table's view once, `RESYNC_DELAY` later, unless an update came meanwhile; one look
        pending per feed at most, however many refusals. A version older than the feed's is
        the client's own lag (the pushes it has not read yet bring it up to date); one ahead
        of it is the client's mistake: neither costs the table a view request."""
        if version is not None and version != self.seq:
            return
        if self._look is None and self.seq >= 0:
            loop = asyncio.get_running_loop()
            self._look = loop.call_later(RESYNC_DELAY, self._look_once, self.seq)

    def _look_once(self, seq: int) -> None:
        self._look = None
        if self.seq == seq and self.watchers:
            self._looking = asyncio.create_task(self._catch_up_from(seq))

    async def _catch_up_from(self, seq: int) -> None:
        async with self._lock:
            if self.seq != seq or not self.watchers:
                return  # an update or a resync came first
            state = await self._watchers_view("table_look_failed")
            if state is not None and state.seq > seq:
                log.warning("table_resynced_after_refusal", table_id=self.table_id, seq=state.seq)
                await self._send_resynced(seq, state)

    def _check_expected(self) -> None:
        self._check = None
        named = self._named
        while named and named[0][0] <= self.seq:
            named.popleft()
        if not named:
            return
        loop = asyncio.get_running_loop()
        if self._resync is not None and not self._resync.done():  # look again after it
            self._check = loop.call_later(RESYNC_DELAY, self._check_expected)
            return
        now, overdue = loop.time(), 0
        while named and named[0][1] + RESYNC_DELAY <= now:
            overdue = named.popleft()[0]  # the sequences rise: the last one is the highest
        if overdue:
            self._resync = asyncio.create_task(self._resync_to(overdue))
        if named:
            self._check = loop.call_at(named[0][1] + RESYNC_DELAY, self._check_expected)

    async def _resync_to(self, seq: int) -> None:
        for attempt in range(5):
            async with self._lock:
                if self.seq >= seq or not self.watchers:
                    return
                before = self.seq
                state = await self._watchers_view("table_resync_failed")
                if state is None:
                    return
                if state.seq >= seq:
                    # no update reached `seq` within the delay of the command reply naming
                    # it: resynchronised from the stream and the view
                    log.warning(
                        "table_resynced",
                        table_id=self.table_id,
                        awaited_seq=seq,
                        within_seconds=RESYNC_DELAY,
                        seq=state.seq,
                        from_seq=before,
                    )
                    await self._send_resynced(before, state)
                    return
            await asyncio.sleep(0.05 * 2**attempt)  # the view lags the reply: ask again

    async def _watchers_view(self, failure: str) -> TableStatePush | None:
        """The table's view for this feed's watchers (`_snapshot`); None when the table did
        not give it, logged as `failure`."""
        try:
            return await self._snapshot({w.seat for w in self.watchers.values()})
        except GatewayError as exc:
            log.warning(failure, table_id=self.table_id, code=exc.code, error=exc.message)
            return None

    async def _send_resynced(self, before: int, state: TableStatePush) -> None:
        """Every watcher gets the events after `before` (from the stream), then `state`."""
        self._resynced = (before, asyncio.get_running_loop().time())
        await self._push_missed(before, state.seq)
        text = encode_state(state)
        for sink, watcher in list(self.watchers.items()):
            watcher.send(sink, self.table_id, state.seq, text)
            watcher.cursor = state.seq

    async def _snapshot(
        self, seats: set[int | None], player_id: str | None = None
    ) -> TableStatePush:
        """The table's view with its open decisions, and remember it as the feed's state when
        it is the newest. One request: the view carries every seat's decisions."""
        view = await self._views.table_view(self.table_id, None)
        self.seats = seats_of(view.seats)
        per_seat: dict[int, TableView] = {}
        if not view.pending and view.state.pending is not None:
            # A table from before `TableView.pending` (a rolling upgrade): ask per seat for
            # the decisions of `seats` and of `player_id`'s seat.
            wanted = {*seats, self.seat_of(player_id)} if player_id is not None else seats
            for seat in sorted(s for s in wanted if s is not None):
                seat_view = await self._views.table_view(self.table_id, seat)
                if seat_view.seq != view.seq:  # the table moved on in between: take the newer
                    view, per_seat = seat_view, {}
                per_seat[seat] = seat_view
        state = state_from_view(view, per_seat, self.seats)
        if state.seq >= self.seq:
            self.seq, self._state = state.seq, state
            self._known_seats = set(per_seat) if per_seat else None
            self._last_update = None
        return state

    def seat_of(self, player_id: str) -> int | None:
        return next((s.seat for s in self.seats or () if s.player_id == player_id), None)

    # ------------------------------------------------------------- watchers
    async def join(
        self,
        sink: Sink,
        player_id: str,
        since: int | None,
        may_replay: Callable[[int], bool] | None = None,
    ) -> TableWatchResult:
        """Start pushing this table to `sink`: missed events (from `since`), then the state,
        then every update. `may_replay(n)` says whether this client may be sent `n` missed
        events now (its budget); if not, or past `replay_limit`, it gets the state alone."""
        try:
            await self._ensure_subscribed()
        except Exception as exc:  # NATS down
            raise GatewayError(UNAVAILABLE, f"the table cannot be followed now ({exc})") from None
        async with self._lock:
            self.watchers.pop(sink, None)
            state = self._current_state()
            if state is None:
                state = await self._snapshot(set(), player_id)
            seat = self.seat_of(player_id)
            if seat is None and self._spectators() >= self._max_spectators:
                raise GatewayError(
                    TOO_MANY_SPECTATORS,
                    f"table {self.table_id} has as many spectators as it takes; try later",
                )
            known = self._known_seats
            if seat is not None and known is not None and seat not in known:
                state = await self._snapshot({seat, *known})
            missed = 0 if since is None else state.seq - since
            replay = 0 < missed <= self._replay_limit and (may_replay is None or may_replay(missed))
            watcher = self.watchers[sink] = Watcher(
                seat=seat, cursor=state.seq, held=[] if replay else None
            )
            if not replay:
                sink.push(encode_state(state))
        replayed = 0
        if replay:
            assert since is not None and watcher.held is not None
            try:
                for batch in await self._replay(self.table_id, since, state.seq):
                    text = events_push(batch, since, state.seq)
                    if text is not None:
                        sink.push(text)
                        replayed += sum(1 for r in batch.events if since < r.seq <= state.seq)
            finally:  # then the state, then what came meanwhile, in order
                sink.push(encode_state(state))
                for text in watcher.held:
                    sink.push(text)
                watcher.held = None
        return TableWatchResult(
            table=self.table_id, seat=seat, spectator=seat is None, seq=state.seq, replayed=replayed
        )

    def _spectators(self) -> int:
        return sum(1 for watcher in self.watchers.values() if watcher.seat is None)

    async def leave(self, sink: Sink) -> None:
        self.watchers.pop(sink, None)
        if not self.watchers:
            await self.close()

    async def close(self) -> None:
        self._on_empty(self)
        if self._check is not None:
            self._check.cancel()
        if self._resync is not None:
            self._resync.cancel()
        if self._look is not None:
            self._look.cancel()
        if self._looking is not None:
            self._looking.cancel()
        if self._drainer is not None:
            self._drainer.cancel()
        sub, self._sub = self._sub, None
        if sub is not None:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # the connection is already gone
                log.debug("unsubscribe_failed", error=repr(exc))
