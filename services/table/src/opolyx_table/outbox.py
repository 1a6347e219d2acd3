"""What a table publishes after its batches are stored.

- `TableUpdate` on `table_update(table_id)` (core NATS): the stored events, the public view
  after them and the decisions now pending with their legal commands; a gateway renders
  and offers the next decisions from it without asking the table or running the rules.
- `DecisionRequest` on `opolyx.bots.decide` for each bot seat that must act.
- `SeatOut` / `GameFinished` on the GAMES stream (awaited: they must not be lost).

Core NATS publishes are only queued on the connection (no round trip), after the command's
reply, so they never delay it. The view and legal commands are computed once per change
and shared by the update and the decision requests.
"""

from __future__ import annotations

from nats.aio.client import Client
from opolyx_contracts.subjects import BOTS_DECIDE, GAME_FINISHED, GAME_SEAT_OUT, table_update
from opolyx_contracts.table import GameFinished, SeatOut
from opolyx_service import get_logger, traced_headers
from opolyx_service.metrics import counter
from opolyx_service.publishing import publish
from prometheus_client import CollectorRegistry

from opolyx_table.messages import Change, StoredEvents, decision_request, encode
from opolyx_table.messages import table_update as update_of
from opolyx_table.store import Storage
from opolyx_table.table import Table

__all__ = ["Outbox"]

log = get_logger("opolyx_table.outbox")


class Outbox:
    def __init__(
        self, nc: Client, storage: Storage, partitions: int, registry: CollectorRegistry
    ) -> None:
        self.nc = nc
        self.storage = storage
        self.partitions = partitions
        self._m_updates = counter(registry, "opolyx_table_updates", "TableUpdate messages sent")
        self._m_bot_asks = counter(
            registry, "opolyx_table_bot_decisions_requested", "Decision requests sent to bots"
        )

    async def publish_update(
        self, table: Table, stored: list[StoredEvents], change: Change
    ) -> None:
        await self._publish(table_update(table.table_id), update_of(table, stored, change))
        self._m_updates.inc()

    async def ask_bot(self, table: Table, seat: int, attempt: int, change: Change) -> None:
        request = decision_request(table, seat, attempt, change, self.partitions)
        table.bot_asked[seat] = (table.version, attempt)
        self._m_bot_asks.inc()
        await self._publish(BOTS_DECIDE, request)

    async def _publish(self, subject: str, body: bytes) -> None:
        try:
            # Queued on the connection's buffer: no round trip.
            await publish(self.nc, subject, body, headers=traced_headers())
        except Exception as exc:
            # Not fatal: watchers resync from the stream, bots are asked again.
            log.warning("publish_failed", subject=subject, error=repr(exc))

    async def seat_out(self, table: Table, message: SeatOut) -> None:
        await self.storage.publish_game_event(
            GAME_SEAT_OUT, encode(message), f"{table.table_id}:out:{message.seat}"
        )

    async def game_finished(self, table: Table, message: GameFinished) -> None:
        await self.storage.publish_game_event(
            GAME_FINISHED, encode(message), f"{table.table_id}:finished"
        )
