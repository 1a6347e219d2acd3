"""When a table feed resynchronises, on a real nats-server: a command's reply names the
table's new sequence just before the table publishes the update that brings it, and the
feed resyncs (a view request to the table, the stream read) only for a sequence no update
has brought `RESYNC_DELAY` after the reply that named it.

The gateway bench's saturation phase logged 31-77 resyncs per run, each "an update was
lost", with every update there 1-8 ms after its reply: the one timer per feed, armed by an
earlier reply, compared the feed with the sequence a reply had named a millisecond before
it fired, whose update was still on its way."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import nats
import pytest
import structlog
from nats.aio.client import Client as NatsClient
from opolyx_contracts import subjects
from opolyx_contracts.game import Roll, TurnStarted
from opolyx_contracts.table import (
    EventRecord,
    PendingDecision,
    PublicView,
    SeatSpec,
    TableEvents,
    TableUpdate,
    TableView,
)
from opolyx_gateway import feed as feed_module
from opolyx_gateway.feed import TableFeed
from opolyx_rules import new_game, public_view
from opolyx_service import flush_in_order
from opolyx_testing.nats_server import NatsServer

DELAY = 0.5
"""`RESYNC_DELAY` in these tests (the steps below are 0.2 s or more apart from it)."""

TABLE = "t-feed"


class Table:
    """A table as a feed sees it: it stores a batch and answers the command (`store`), then
    publishes the update when the test says so (`publish`); its view is always current."""

    def __init__(self, nc: NatsClient) -> None:
        self.nc = nc
        self.seq = 1
        self.views_asked = 0
        self.view_state = PublicView.model_validate(public_view(new_game("classic", 2, 7)))
        self.pending = [
            PendingDecision(seat=0, kind="roll", deadline_at=None, legal=[Roll(seat=0)])
        ]

    def store(self) -> int:
        """One event stored and the command answered: the sequence its reply names."""
        self.seq += 1
        return self.seq

    async def publish(self, seq: int) -> None:
        record = EventRecord(seq=seq, version=seq, event=TurnStarted(seat=0, round=1, deadline=75))
        update = TableUpdate(
            table_id=TABLE,
            first_seq=seq,
            last_seq=seq,
            version=seq,
            events=[record],
            view=self.view_state,
            pending=self.pending,
            at=time.time(),
        )
        await self.nc.publish(subjects.table_update(TABLE), update.model_dump_json().encode())
        await flush_in_order(self.nc)

    async def table_view(self, table_id: str, seat: int | None) -> TableView:
        self.views_asked += 1
        return TableView(
            table_id=table_id,
            seq=self.seq,
            version=self.seq,
            state=self.view_state,
            seats=[SeatSpec(player_id=p, bot=False, name=p) for p in ("g-a", "g-b")],
            pending=self.pending,
            seed_commitment="0" * 64,
        )


class Sink:
    def __init__(self) -> None:
        self.pushes: list[str] = []

    def push(self, text: str) -> None:
        self.pushes.append(text)

    def push_table(self, table_id: str, seq: int, text: str) -> None:
        self.push(text)

    def kinds(self) -> list[str]:
        return [text.split('"type":"', 1)[1].split('"', 1)[0] for text in self.pushes]


async def no_replay(table_id: str, since: int, upto: int) -> list[TableEvents]:
    return []  # nothing was lost: the stream is not needed


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


@pytest.fixture
async def watched(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Table, TableFeed, Sink]]:
    """A table at seq 1, and a feed of it with one watcher that has its state."""
    monkeypatch.setattr(feed_module, "RESYNC_DELAY", DELAY)
    gateway_nc = await nats.connect(nats_server.url)
    table_nc = await nats.connect(nats_server.url)
    table = Table(table_nc)
    feed = TableFeed(TABLE, gateway_nc, table, no_replay, 100, on_empty=lambda f: None)
    sink = Sink()
    try:
        await feed.join(sink, "g-a", None)
        assert (feed.seq, sink.kinds(), table.views_asked) == (1, ["table.state"], 1)
        yield table, feed, sink
    finally:
        await feed.close()
        await table_nc.close()
        await gateway_nc.close()


async def command(table: Table, feed: TableFeed) -> int:
    """A command accepted: the gateway has its reply, its update is not out yet."""
    seq = table.store()
    feed.expect(seq)
    return seq


async def test_a_reply_just_before_the_check_gets_its_own_delay(
    watched: tuple[Table, TableFeed, Sink],
) -> None:
    table, feed, sink = watched
    first = await command(table, feed)  # arms the check, due at DELAY
    await table.publish(first)
    await until(lambda: feed.seq == first)
    await asyncio.sleep(DELAY - 0.2)
    second = await command(table, feed)  # 0.2 s before that check
    await asyncio.sleep(0.3)  # the check is past; the second update is 0.3 s behind its reply
    await table.publish(second)
    await until(lambda: feed.seq == second)
    await asyncio.sleep(DELAY)  # past the second reply's own deadline too
    assert table.views_asked == 1  # no resync: every update came within DELAY of its reply
    assert sink.kinds() == ["table.state", "table.update", "table.update"]


async def test_an_update_that_never_comes_is_resynced_a_delay_after_its_reply(
    watched: tuple[Table, TableFeed, Sink],
) -> None:
    table, feed, sink = watched
    first = await command(table, feed)
    await table.publish(first)
    await until(lambda: feed.seq == first)
    await asyncio.sleep(DELAY - 0.2)
    replied = time.monotonic()
    lost = await command(table, feed)  # its update never comes
    with structlog.testing.capture_logs() as logs:
        await until(lambda: feed.seq == lost)
    # from its own reply, not before (only a lower bound: a busy machine makes it later)
    assert time.monotonic() - replied >= DELAY - 0.05
    assert table.views_asked == 2
    assert sink.kinds() == ["table.state", "table.update", "table.state"]
    resynced = [entry for entry in logs if entry["event"] == "table_resynced"]
    assert resynced == [
        {
            "event": "table_resynced",
            "log_level": "warning",
            "table_id": feed.table_id,
            "awaited_seq": lost,
            "within_seconds": DELAY,
            "seq": lost,
            "from_seq": first,
        }
    ]


async def test_an_update_later_than_the_delay_is_logged_as_late_after_the_resync(
    watched: tuple[Table, TableFeed, Sink],
) -> None:
    table, feed, sink = watched
    late = await command(table, feed)
    with structlog.testing.capture_logs() as logs:
        await until(lambda: table.views_asked == 2 and feed.seq == late)  # resynced
        await table.publish(late)  # then its update comes after all
        await until(lambda: any(e["event"] == "table_update_late_after_resync" for e in logs))
    (entry,) = [e for e in logs if e["event"] == "table_update_late_after_resync"]
    assert (entry["table_id"], entry["seq"]) == (feed.table_id, late)
    assert entry["seconds_after_resync"] >= 0
    assert sink.kinds() == ["table.state", "table.state"]  # not sent twice


REFUSED_AT_THE_FEEDS_STATE = pytest.mark.parametrize(
    "version", [1, None], ids=["stale at the feed's version", "out of turn, no version"]
)
"""The refusals after which the table may be past the feed (at seq 1 in these tests)."""


@REFUSED_AT_THE_FEEDS_STATE
async def test_a_refusal_at_the_feeds_state_catches_up_with_lost_moves_a_delay_after_it(
    watched: tuple[Table, TableFeed, Sink], version: int | None
) -> None:
    """Moves stored with their updates lost and nothing after them (the instance that
    stored them was killed): the table refuses a command decided on the feed's state."""
    table, feed, sink = watched
    table.store()
    behind = table.store()
    refused = time.monotonic()
    feed.refused(version)
    feed.refused(version)  # a second click: the same look
    await until(lambda: feed.seq == behind)
    assert time.monotonic() - refused >= DELAY - 0.05  # an update may still come meanwhile
    assert table.views_asked == 2
    assert sink.kinds() == ["table.state", "table.state"]


@REFUSED_AT_THE_FEEDS_STATE
async def test_a_refusal_whose_update_comes_within_the_delay_costs_no_view(
    watched: tuple[Table, TableFeed, Sink], version: int | None
) -> None:
    table, feed, sink = watched
    moved = table.store()
    feed.refused(version)
    await table.publish(moved)
    await until(lambda: feed.seq == moved)
    await asyncio.sleep(DELAY + 0.2)
    assert table.views_asked == 1
    assert sink.kinds() == ["table.state", "table.update"]


@REFUSED_AT_THE_FEEDS_STATE
async def test_refusals_on_the_current_state_cost_one_view_and_no_push(
    watched: tuple[Table, TableFeed, Sink], version: int | None
) -> None:
    """The client only raced a push (or is hostile): one look, however many refusals."""
    table, feed, sink = watched
    for _ in range(5):
        feed.refused(version)
    await asyncio.sleep(DELAY + 0.3)
    assert (feed.seq, table.views_asked, sink.kinds()) == (1, 2, ["table.state"])


@pytest.mark.parametrize("version", [0, 2, 10**6])
async def test_a_stale_refusal_at_another_version_than_the_feeds_costs_no_view(
    watched: tuple[Table, TableFeed, Sink], version: int
) -> None:
    """Older: the client has not read the pushes that bring it up to date. Newer: the
    client's own mistake (a hostile client could otherwise make the table answer views)."""
    table, feed, sink = watched
    feed.refused(version)
    await asyncio.sleep(DELAY + 0.2)
    assert (feed.seq, table.views_asked, sink.kinds()) == (1, 1, ["table.state"])
