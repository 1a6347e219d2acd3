"""Reading a finished game's events from TABLE_EVENTS by the reference GAMES carries.

`GameFinished` names the table and the last per-table sequence of its game; the events are
on `subjects.table_events(table_id)`. They are read with an ordered consumer (no state left
behind on the server, gaps re-fetched by the client library) up to that sequence.
"""

from __future__ import annotations

from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError
from opolyx_contracts.envelope import decode
from opolyx_contracts.errors import ContractError
from opolyx_contracts.subjects import TABLE_EVENTS_STREAM, table_events
from opolyx_contracts.table import TableEvents
from opolyx_service.logs import get_logger

__all__ = ["EventsUnavailable", "read_game_events"]

log = get_logger("opolyx.progression.events")


class EventsUnavailable(Exception):
    """The events could not be read now (timeout, NATS trouble): retry the game later."""


async def read_game_events(
    js: JetStreamContext, table_id: str, last_seq: int, timeout: float
) -> list[TableEvents]:
    """The table's event batches up to per-table sequence `last_seq`, in order.

    An empty list when the stream holds nothing for the table (never stored, or removed by
    retention): the game is then credited from its result alone. A batch that does not
    parse is skipped with a warning (nothing read from NATS is trusted to be well-formed).
    """
    subject = table_events(table_id)
    try:
        last = await js.get_last_msg(TABLE_EVENTS_STREAM, subject)
    except NotFoundError:
        log.warning("game_events_missing", table_id=table_id)
        return []
    except Exception as exc:
        raise EventsUnavailable(f"cannot look up the events of {table_id}: {exc!r}") from exc
    last_stream_seq = int(last.seq or 0)
    try:
        sub = await js.subscribe(
            subject,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
            stream=TABLE_EVENTS_STREAM,
        )
    except Exception as exc:
        raise EventsUnavailable(f"cannot read the events of {table_id}: {exc!r}") from exc
    batches: list[TableEvents] = []
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=timeout)
            except (NatsTimeoutError, TimeoutError) as exc:
                raise EventsUnavailable(f"the events of {table_id} did not arrive in time") from exc
            try:
                batch = decode(TableEvents, msg.data)
            except ContractError as exc:
                log.warning("game_events_unreadable", table_id=table_id, error=exc.message)
                batch = None
            if batch is not None:
                batches.append(batch)
                if batch.last_seq >= last_seq:
                    return batches
            if int(msg.metadata.sequence.stream) >= last_stream_seq:
                return batches
    finally:
        await sub.unsubscribe()
