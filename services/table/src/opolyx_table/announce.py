"""Telling the rest of the system a seat went out or the game ended (GAMES stream).

Each announcement is published once per table (deduplicated by message id within the
stream's window) and recorded in the snapshot, which is written right after, so a table
taken over later does not announce again. At the end the seed is revealed as the table's
last event, so anyone can replay the game and check the dice.
"""

from __future__ import annotations

import opolyx_rules
from opolyx_service import get_logger

from opolyx_table.messages import StoredEvents, seed_revealed
from opolyx_table.outbox import Outbox
from opolyx_table.results import game_finished, seat_out, seat_out_reason
from opolyx_table.store import Storage
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = ["Announcer"]

log = get_logger("opolyx_table.announce")


class Announcer:
    def __init__(self, storage: Storage, writer: Writer, outbox: Outbox) -> None:
        self.storage = storage
        self.writer = writer
        self.outbox = outbox

    def pending(self, table: Table) -> bool:
        """Something is left to announce (after a crash between storing and announcing)."""
        if table.finished:
            return not (table.seed_revealed and table.finish_announced)
        return any(s.out and s.seat not in table.outs_announced for s in table.state.seats)

    async def announce(
        self, table: Table, stored: list[StoredEvents], by_timeout: bool
    ) -> list[StoredEvents]:
        """Announce what `stored` changed; returns the table events it stored (the seed)."""
        if not self.pending(table):
            return []
        view = opolyx_rules.public_view(table.state)
        for seat_state in table.state.seats:
            seat = seat_state.seat
            if seat_state.out and seat not in table.outs_announced:
                reason = seat_out_reason([s.message for s in stored], seat, by_timeout)
                await self.outbox.seat_out(table, seat_out(table, seat, reason, view))
                table.outs_announced.add(seat)
        added: list[StoredEvents] = []
        if table.finished and not table.seed_revealed:
            added.append(await self.writer.store_table_events(table, [seed_revealed(table)]))
            table.seed_revealed = True
        if table.finished and not table.finish_announced:
            first = await self.storage.first_stream_seq(table.table_id)
            finished = game_finished(table, view, first)
            await self.outbox.game_finished(table, finished)
            table.finish_announced = True
            log.info("game_finished", table_id=table.table_id, winner=finished.winner)
        await self.writer.snapshot(table)
        return added
