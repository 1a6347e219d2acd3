"""Storing what the core decided: events messages, and snapshots when they are due.

A batch is stored as one events message (the fence and the dedupe id in its headers, see
`store.py`); the table in memory moves on only once JetStream confirmed it. A snapshot
costs a full state serialisation and a KV write, so it is written every `snapshot_every`
batches, when the table goes idle, when the game ends and before a partition is handed
back; the batches after it are replayed on load.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Sequence
from typing import Any

from opolyx_contracts.table import RecordedEvent

from opolyx_table.core import PlannedBatch
from opolyx_table.messages import StoredEvents, events_message, rules_batch, table_props_parts
from opolyx_table.settings import TableConfig
from opolyx_table.store import Storage
from opolyx_table.table import Table

__all__ = ["Writer"]


class Writer:
    def __init__(self, storage: Storage, config: TableConfig) -> None:
        self.storage = storage
        self.config = config
        # Unique per process start, cheap to make (a counter, not urandom per write: the
        # prefix is drawn once; drawn per write it cost 1.6% of the service's CPU).
        prefix = secrets.token_hex(4)
        self._write_ids = (f"{prefix}-{n}" for n in itertools.count(1))

    async def store(self, table: Table, batch: PlannedBatch) -> StoredEvents:
        """Store a rules batch and move the table to its state (raises Fenced/StoreUnavailable;
        the table is then unchanged and marked for reloading)."""
        message = rules_batch(table, table.seq + 1, batch, next(self._write_ids))
        await self._append(table, message)
        table.state = batch.state
        if batch.command_id is not None:
            table.remember(
                batch.command_id, message.last_seq, len(batch.events), self.config.recent_commands
            )
        return message

    async def store_table_events(
        self, table: Table, events: Sequence[dict[str, Any] | RecordedEvent]
    ) -> StoredEvents:
        """Store the table's own events (creation, seed reveal); no state change."""
        message = StoredEvents.of(
            events_message(table, table.seq + 1, events, None, next(self._write_ids))
        )
        await self._append(table, message)
        return message

    async def _append(self, table: Table, message: StoredEvents) -> None:
        try:
            table.stream_seq = await self.storage.append(
                table.table_id, message.first_seq, message.body, table.stream_seq
            )
        except BaseException:
            table.needs_reload = True
            raise
        table.seq = message.last_seq
        table.write_id = message.write_id

    def snapshot_due(self, table: Table) -> bool:
        return table.seq - table.snapshot_seq >= self.config.snapshot_every or (
            table.finished and table.seq != table.snapshot_seq
        )

    async def snapshot(self, table: Table) -> None:
        """Write the table's snapshot now (compare-and-set; raises Fenced/StoreUnavailable)."""
        seq = table.seq
        table.revision = await self.storage.write_snapshot(
            table.key, table.to_snapshot(table_props_parts(table).squares), table.revision
        )
        table.snapshot_seq = seq

    async def create_snapshot(self, table: Table) -> None:
        table.revision = await self.storage.create_snapshot(table.key, table.to_snapshot())
        table.snapshot_seq = table.seq
