"""Partition ownership and recovery: which tables this instance serves, and loading them.

When a lease is acquired the partition's tables are loaded (snapshot, then the events
stored after it, replayed through the rules) and its subjects subscribed; when a lease is
lost or handed back the subscription goes first and the tables are dropped at once (their
workers notice and stop; nothing here waits behind a command). A table whose stored events
do not parse is quarantined: it answers every command with a clear error and the other
tables of the partition are served as usual.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import opolyx_rules
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts.subjects import table_partition_subjects
from opolyx_contracts.table import AutopilotChanged, SeedRevealed, TableCreatedEvent, TableEvents
from opolyx_service import flush_in_order, get_logger, subscribe_direct
from opolyx_service.metrics import counter, gauge
from prometheus_client import CollectorRegistry

from opolyx_table import autopilot
from opolyx_table.engine import new_game, rules_event
from opolyx_table.messages import created_event
from opolyx_table.store import Fenced, Storage, StoreUnavailable, Unreadable
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = ["Partitions"]

log = get_logger("opolyx_table.partitions")

Handler = Callable[[Msg], None]

TABLE_QUEUE = "table"
"""Queue group of the table service's subscriptions (an instance per partition holds the
lease; the group only matters while a lease moves)."""


class Partitions:
    def __init__(
        self,
        nc: Client,
        storage: Storage,
        writer: Writer,
        recent_commands: int,
        registry: CollectorRegistry,
    ) -> None:
        self.nc = nc
        self.storage = storage
        self.writer = writer
        self.recent_commands = recent_commands
        self.tables: dict[str, Table] = {}
        self.subs: dict[int, Subscription] = {}
        self.on_message: Handler | None = None
        """The NATS handler of a partition's subjects (set by the instance)."""
        self.on_loaded: Callable[[Table, list[TableEvents]], None] = lambda table, stored: None
        """Called for every table loaded (re-arms its timer, asks its bots)."""
        self._m_tables = gauge(
            registry, "opolyx_table_tables_loaded", "Tables held by this instance"
        )
        self._m_partitions = gauge(registry, "opolyx_table_partitions_owned", "Partitions leased")
        self._m_quarantined = counter(
            registry, "opolyx_table_quarantined", "Tables whose stored events do not parse"
        )

    # --- ownership ------------------------------------------------------------------

    async def acquire(self, partition: int) -> None:
        loaded = 0
        async for key, snapshot, revision in self.storage.partition_snapshots(partition):
            if snapshot.get("finished") and snapshot.get("finish_announced"):
                continue
            try:
                table = await self.load(key, snapshot, revision)
            except (Fenced, StoreUnavailable):
                raise  # transient: the whole partition is retried at the next heartbeat
            except Exception:
                # One unreadable snapshot must not keep a partition's other tables down.
                log.exception("table_load_failed", key=key)
                continue
            self.register(table)
            loaded += 1
        assert self.on_message is not None
        self.subs[partition] = await subscribe_direct(
            self.nc, table_partition_subjects(partition), self.on_message, queue=TABLE_QUEUE
        )
        # The server must have the subscription before this instance says it serves the
        # partition (a request racing a fresh SUB can see "no responders").
        await flush_in_order(self.nc)
        self._m_partitions.set(len(self.subs))
        log.info("partition_loaded", partition=partition, tables=loaded)

    async def release(self, partition: int) -> None:
        sub = self.subs.pop(partition, None)
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for table in [t for t in self.tables.values() if t.partition == partition]:
            self.drop(table, "partition released")
        self._m_partitions.set(len(self.subs))
        log.info("partition_released", partition=partition)

    def owns(self, partition: int) -> bool:
        return partition in self.subs

    def register(self, table: Table, stored: list[TableEvents] | None = None) -> None:
        self.tables[table.table_id] = table
        self._m_tables.set(len(self.tables))
        self.on_loaded(table, stored or [])

    def drop(self, table: Table, reason: str) -> None:
        if reason != "partition released":
            log.warning("table_dropped", table_id=table.table_id, reason=reason)
        table.dropped = True
        if self.tables.get(table.table_id) is table:
            del self.tables[table.table_id]
        self._m_tables.set(len(self.tables))

    # --- recovery -------------------------------------------------------------------

    async def load(self, key: str, snapshot: dict[str, Any], revision: int) -> Table:
        """A table from its snapshot, caught up with the events stored after it."""
        table = Table.from_snapshot(snapshot, key, revision)
        try:
            await self._catch_up(table)
        except Unreadable as exc:
            table.quarantined = (
                f"table {table.table_id} cannot be loaded: {exc}; it is out of service"
            )
            self._m_quarantined.inc()
            log.error("table_quarantined", table_id=table.table_id, error=str(exc))
            return table
        if table.seq == 0:
            # Created, but the creation event never made it: store it now.
            await self.writer.store_table_events(table, [created_event(table)])
        if table.seq != table.snapshot_seq:
            # The snapshot is brought up to date by the table's own job once it runs
            # (idle or every few batches): loading writes nothing else.
            log.info("table_recovered", table_id=table.table_id, seq=table.seq)
        return table

    async def reload(self, table: Table) -> None:
        """Replace a table's state with what storage holds (a write's outcome was unknown)."""
        loaded = await self.storage.read_snapshot(table.key)
        if loaded is None:
            raise Fenced(f"table {table.table_id} has no snapshot")
        fresh = await self.load(table.key, *loaded)
        for name in (
            "state", "seq", "stream_seq", "write_id", "revision", "snapshot_seq", "recent",
            "outs_announced", "seed_revealed", "finish_announced", "quarantined",
            "autopilot", "autopilot_chosen",
        ):  # fmt: skip
            setattr(table, name, getattr(fresh, name))
        table.needs_reload = False

    async def _catch_up(self, table: Table) -> None:
        last = await self.storage.last_events(table.table_id)
        if last is None:
            if table.seq != 0:
                raise Unreadable(f"the stream holds no events up to seq {table.seq}")
            return
        if _includes(table, last[1]):
            table.stream_seq = last[0]  # the snapshot is current: the usual case
            return
        tail: list[tuple[int, TableEvents]] | None = None
        if table.seq == 0:
            tail = [item async for item in self.storage.read_events(table.table_id)]
        elif table.stream_seq > 0:
            batches = [i async for i in self.storage.read_events(table.table_id, table.stream_seq)]
            if batches and _includes(table, batches[0][1]):
                tail = batches[1:]
        if tail is None:
            batches = [item async for item in self.storage.read_events(table.table_id)]
            bases = [i for i, (_, batch) in enumerate(batches) if _includes(table, batch)]
            if bases:
                tail = batches[bases[-1] + 1 :]
            else:
                # The snapshot's own events were never stored: rebuild from the seed.
                log.warning("table_rebuilt_from_events", table_id=table.table_id, seq=table.seq)
                table.state = new_game(table.mode, [s.boosts for s in table.seats], table.seed)
                table.seq = 0
                table.write_id = ""
                table.snapshot_seq = -1
                table.recent.clear()
                table.outs_announced.clear()
                table.autopilot.clear()
                table.autopilot_chosen.clear()
                table.seed_revealed = table.finish_announced = False
                tail = batches
        self._replay(table, tail)

    def _replay(self, table: Table, tail: list[tuple[int, TableEvents]]) -> None:
        for stream_seq, batch in tail:
            if batch.first_seq != table.seq + 1:
                raise Unreadable(
                    f"events message {stream_seq} starts at seq {batch.first_seq}, "
                    f"expected {table.seq + 1}"
                )
            state = table.state
            for record in batch.events:
                event = record.event
                if isinstance(event, TableCreatedEvent | SeedRevealed | AutopilotChanged):
                    if batch.source == "rules":
                        raise Unreadable(f"events message {stream_seq}: a table event as rules")
                    table.seed_revealed = table.seed_revealed or isinstance(event, SeedRevealed)
                    if isinstance(event, AutopilotChanged):
                        autopilot.record(table, event)
                elif batch.source == "rules":
                    state = opolyx_rules.evolve(state, rules_event(event))
                else:
                    raise Unreadable(f"events message {stream_seq}: a rules event as the table's")
            table.state = state
            table.seq = batch.last_seq
            table.write_id = batch.write_id or ""
            table.stream_seq = stream_seq
            if batch.command_id:
                table.remember(
                    batch.command_id, batch.last_seq, len(batch.events), self.recent_commands
                )


def _includes(table: Table, batch: TableEvents) -> bool:
    """The snapshot's state includes this events message as its last."""
    return batch.last_seq == table.seq and (batch.write_id or "") == table.write_id
