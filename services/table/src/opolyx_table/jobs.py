"""The per-table queue: a table's commands, timers and bot re-asks run one at a time.

Each table has a job queue worked by one task, so everything that changes a table applies
strictly in arrival order while different tables proceed concurrently. A command job: ask
the core, store its batches, reply, then (the reply already on its way) announce, publish
the update, ask bots, re-arm the timer and write a snapshot when one is due. A seat job
(the gateway's presence report or the player's autopilot switch) and the end of a grace
period store the autopilot's changes (`autopilot.py`) the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import opolyx_rules
from nats.aio.client import Client
from nats.aio.msg import Msg
from opentelemetry import trace
from opolyx_contracts import ErrorReply, error_reply
from opolyx_contracts import errors as codes
from opolyx_contracts.subjects import TABLE_COMMANDS_ANY
from opolyx_contracts.table import (
    AutopilotChanged,
    CommandAccepted,
    SeatPresence,
    SeatStatus,
    TableCommand,
    TableEvents,
)
from opolyx_service import extracted_context, get_logger
from opolyx_service.metrics import ServiceMetrics, counter
from opolyx_service.publishing import publish
from opolyx_service.replies import safe_reply_subject
from prometheus_client import CollectorRegistry

from opolyx_table import autopilot, core, pace
from opolyx_table.announce import Announcer
from opolyx_table.messages import Change, StoredEvents, encode
from opolyx_table.outbox import Outbox
from opolyx_table.scheduler import Scheduler
from opolyx_table.settings import TableConfig
from opolyx_table.store import Fenced, StoreUnavailable
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = [
    "BotReask",
    "CommandJob",
    "Deadline",
    "GraceOver",
    "IdleCheck",
    "Jobs",
    "Resume",
    "SeatJob",
]

log = get_logger("opolyx_table.jobs")
tracer = trace.get_tracer("opolyx_table")

DEADLINE_TIMER = "deadline"
"""With the table's id, the key of its deadline's timer (`Scheduler.keep`); a bot seat's
re-ask is kept under the table's id and the seat's number."""


@dataclass(frozen=True, slots=True)
class CommandJob:
    msg: Msg
    request: TableCommand
    received: float
    """`time.perf_counter()` when it arrived (latency metric)."""
    via_bots: bool = False
    """Came on the bots' subject (`table_bot_command`), not the players'."""


@dataclass(frozen=True, slots=True)
class SeatJob:
    msg: Msg
    request: SeatPresence


@dataclass(frozen=True, slots=True)
class GraceOver:
    """The grace period of a seat's drop at `since` (wall clock) has ended."""

    seat: int
    since: float


@dataclass(frozen=True, slots=True)
class Deadline:
    at: float | None = None
    """The game time armed (`Jobs.arm`); None: look whatever is armed (a retry)."""

    def superseded(self, table: Table) -> bool:
        """The table armed another deadline since (one kept timer per table replaces the
        one before, so this is a safeguard): dropped before it costs a job. A table
        waiting to reload lets every entry in."""
        return self.at is not None and self.at != table.armed_deadline and not table.needs_reload


@dataclass(frozen=True, slots=True)
class BotReask:
    version: int
    seat: int
    attempt: int
    """0: the first ask, delayed by the bot's think time (`pace.py`)."""


@dataclass(frozen=True, slots=True)
class IdleCheck:
    seq: int


@dataclass(frozen=True, slots=True)
class Resume:
    """A table just loaded or created: finish announcing, ask its bots, arm its timer."""

    stored: tuple[TableEvents, ...] = ()
    """Batches stored while loading or creating it, not published yet."""


Job = CommandJob | SeatJob | Deadline | BotReask | GraceOver | IdleCheck | Resume


class Jobs:
    def __init__(
        self,
        nc: Client,
        writer: Writer,
        outbox: Outbox,
        announcer: Announcer,
        scheduler: Scheduler,
        config: TableConfig,
        reload: Callable[[Table], Awaitable[None]],
        drop: Callable[[Table, str], None],
        registry: CollectorRegistry,
        service_metrics: ServiceMetrics | None = None,
    ) -> None:
        self.nc = nc
        self._service_metrics = service_metrics
        """The skeleton's `opolyx_handled_total` / `opolyx_handle_seconds` (every service):
        the command latency, time from received to reply sent, is the latter's
        `subject` `TABLE_COMMANDS_ANY` (a table histogram of its own beside it cost
        another observe per command)."""
        self.writer = writer
        self.outbox = outbox
        self.announcer = announcer
        self.scheduler = scheduler
        self.config = config
        self._reload_table = reload
        self._drop = drop
        self.in_flight = 0
        """Commands received and not answered yet (bounded by `config.max_in_flight`)."""
        self._m_timeouts = counter(registry, "opolyx_table_timeouts", "Deadlines fired")
        self._m_autopilot = counter(
            registry, "opolyx_table_autopilot_changes", "Autopilot switched on or off", ("reason",)
        )
        self.think_delays: list[tuple[str, int, float]] = []
        """(table id, seat, seconds) of the last paced asks (newest last, a few kept): what
        the pace chose, for tests and the log."""

    async def _reload(self, table: Table) -> None:
        """The stored state replaces the table's; its next deadline is armed afresh (the
        one armed before belonged to the state that was dropped)."""
        await self._reload_table(table)
        table.armed_deadline = None
        self.arm(table)

    def count_command(self, outcome: str, seconds: float | None) -> None:
        """One command answered, whatever its outcome (`busy` and `invalid` included): the
        skeleton's `opolyx_handled_total{subject=TABLE_COMMANDS_ANY, outcome}` and
        `opolyx_handle_seconds`, the one count of commands (a table counter beside it
        counted each command twice). `seconds` None: answered before any handling."""
        if self._service_metrics is not None:
            self._service_metrics.handled(TABLE_COMMANDS_ANY, outcome, seconds)

    def enqueue(self, table: Table, job: Job) -> None:
        table.jobs.append(job)
        if table.worker is None:
            table.worker = asyncio.create_task(self._work(table))

    async def _work(self, table: Table) -> None:
        try:
            while table.jobs:
                job = table.jobs.popleft()
                try:
                    if isinstance(job, CommandJob):
                        await self._command(table, job)
                    elif isinstance(job, SeatJob):
                        await self._seat(table, job)
                    elif table.dropped:
                        continue
                    elif isinstance(job, Deadline):
                        await self._deadline(table)
                    elif isinstance(job, BotReask):
                        await self._reask(table, job)
                    elif isinstance(job, GraceOver):
                        await self._grace_over(table, job)
                    elif isinstance(job, IdleCheck):
                        await self._idle(table, job)
                    else:
                        await self.after_change(table, [StoredEvents.of(m) for m in job.stored])
                except (Fenced, StoreUnavailable) as exc:
                    self._storage_failed(table, exc)
                except Exception:
                    log.exception("table_job_failed", table_id=table.table_id, job=repr(job))
                    table.needs_reload = True
        finally:
            table.worker = None

    # --- commands -------------------------------------------------------------------

    async def _command(self, table: Table, job: CommandJob) -> None:
        headers = job.msg.headers
        if headers and "traceparent" in headers:
            # Continue the sender's trace (its context goes on with the stored events);
            # untraced commands skip the span bookkeeping (hot path).
            with tracer.start_as_current_span(
                "table.command", context=extracted_context(headers)
            ) as span:
                span.set_attribute("table.id", table.table_id)
                await self._run_command(table, job)
        else:
            await self._run_command(table, job)

    async def _run_command(self, table: Table, job: CommandJob) -> None:
        reply: CommandAccepted | ErrorReply
        stored: list[StoredEvents] = []
        by_timeout = False
        try:
            if table.quarantined is not None:
                reply, label = error_reply(codes.INTERNAL, table.quarantined), "error"
            else:
                if table.needs_reload and not table.dropped:
                    await self._reload(table)
                outcome = core.accept(table, job.request, time.time(), job.via_bots)
                for batch in outcome.batches:
                    stored.append(await self.writer.store(table, batch))
                    by_timeout = by_timeout or batch.command_id is None
                if not job.via_bots and (table.away or table.autopilot):
                    # A player's own command: they are here, whatever the gateway said.
                    stored.extend(await self._player_back(table, job.request.player_id))
                if outcome.rejection is not None:
                    table.remember_rejection(*outcome.rejection, self.config.recent_commands)
                reply, label = outcome.reply, outcome.label
        except Fenced as exc:
            self._drop(table, str(exc))
            reply, label = (
                error_reply(codes.NOT_OWNER, f"table {table.table_id} moved; retry"),
                "moved",
            )
        except StoreUnavailable as exc:
            table.needs_reload = True
            reply = error_reply(codes.UNAVAILABLE, f"storage did not confirm ({exc}); retry")
            label = "error"
        except Exception:
            log.exception("command_failed", table_id=table.table_id)
            table.needs_reload = True
            reply, label = (
                error_reply(codes.INTERNAL, "the table could not apply this command"),
                "error",
            )
        await self.reply(job.msg, encode(reply))
        self.in_flight -= 1
        elapsed = time.perf_counter() - job.received
        if stored:
            # Let the connection's flusher put the reply on the wire first: the follow-up
            # work, the metrics included, would otherwise hold it back by its CPU time.
            await asyncio.sleep(0)
        self.count_command(label, elapsed)
        if stored:
            await self.after_change(table, stored, by_timeout)

    async def reply(self, msg: Msg, body: bytes) -> None:
        # Only to an inbox: a request may name any subject as its reply, and the reply
        # would go out with the table's rights (e.g. onto opolyx.game.finished).
        reply = safe_reply_subject(msg)
        if reply is not None:
            try:
                await publish(self.nc, reply, body)
            except Exception as exc:
                log.warning("reply_failed", error=repr(exc))

    # --- timers and bots ------------------------------------------------------------

    async def _deadline(self, table: Table) -> None:
        if table.needs_reload:
            await self._reload(table)
        stored: list[StoredEvents] = []
        for batch in core.fire_due(table.state, table.game_time(time.time())):
            stored.append(await self.writer.store(table, batch))
            self._m_timeouts.inc()
        if stored:
            await self.after_change(table, stored, by_timeout=True)
        else:
            self.arm(table)

    async def _reask(self, table: Table, job: BotReask) -> None:
        if table.finished or table.version != job.version:
            return
        if table.bot_asked.get(job.seat) != (job.version, job.attempt):
            return
        if not self._automated(table, job.seat):
            return  # its player took the seat back
        decisions = [d for d in core.decisions(table.state) if d.seat == job.seat]
        if decisions:
            await self._ask(table, job.seat, job.attempt + 1, Change(table, decisions))

    @staticmethod
    def _automated(table: Table, seat: int) -> bool:
        return table.seats[seat].bot or seat in table.autopilot

    async def _ask(self, table: Table, seat: int, attempt: int, change: Change) -> None:
        await self.outbox.ask_bot(table, seat, attempt, change)
        self.scheduler.keep(
            (table.table_id, seat),
            time.time() + self.config.bot_reask,
            table.table_id,
            BotReask(table.version, seat, attempt),
        )

    async def _idle(self, table: Table, job: IdleCheck) -> None:
        table.idle_armed = False
        if table.seq == table.snapshot_seq:
            return
        if table.seq != job.seq:
            self._arm_idle(table)  # still busy: look again later
            return
        await self.writer.snapshot(table)

    def arm(self, table: Table) -> None:
        """Schedule the table's next deadline (from its state: nothing only in memory)."""
        if table.finished or table.dropped:
            return
        deadline = opolyx_rules.next_deadline(table.state)
        if deadline is not None and deadline != table.armed_deadline:
            table.armed_deadline = deadline
            self.scheduler.keep(
                (table.table_id, DEADLINE_TIMER),
                table.wall_time(deadline),
                table.table_id,
                Deadline(deadline),
            )

    def _arm_idle(self, table: Table) -> None:
        if not table.idle_armed:
            table.idle_armed = True
            self.scheduler.at(
                time.time() + self.config.snapshot_idle, table.table_id, IdleCheck(table.seq)
            )

    # --- after a change -------------------------------------------------------------

    async def after_change(
        self, table: Table, stored: list[StoredEvents], by_timeout: bool = False
    ) -> None:
        """Announce, publish the update, ask bots, re-arm, snapshot: once the reply is out."""
        if table.dropped:
            return
        stored.extend(await self.announcer.announce(table, stored, by_timeout))
        decisions = core.decisions(table.state)
        change = Change(table, decisions)
        if stored:
            await self.outbox.publish_update(table, stored, change)
        await self.ask_bots(table, decisions, change)
        self.arm(table)
        if self.writer.snapshot_due(table):
            await self.writer.snapshot(table)
        elif table.seq != table.snapshot_seq:
            self._arm_idle(table)

    async def ask_bots(self, table: Table, decisions: list[core.Decision], change: Change) -> None:
        for decision in decisions:
            seat = decision.seat
            if not self._automated(table, seat):
                continue
            asked = table.bot_asked.get(seat)
            if asked is not None and asked[0] == table.version:
                continue
            delay = pace.think_seconds(table, decision, self.config.bot_pace)
            if delay <= 0:
                await self._ask(table, seat, 1, change)
                continue
            # Asked once the think time is over (a re-ask with attempt 0), if nothing
            # changed meanwhile.
            table.bot_asked[seat] = (table.version, 0)
            self.scheduler.keep(
                (table.table_id, seat),
                time.time() + delay,
                table.table_id,
                BotReask(table.version, seat, 0),
            )
            self.think_delays.append((table.table_id, seat, delay))
            del self.think_delays[:-64]

    # --- the autopilot --------------------------------------------------------------

    async def _seat(self, table: Table, job: SeatJob) -> None:
        """The gateway reports a seated player's presence, or the player's switch."""
        request = job.request
        seat = autopilot.human_seat(table, request.player_id)
        if seat is None:
            await self.reply(
                job.msg,
                encode(
                    error_reply(
                        codes.SEAT_NOT_YOURS,
                        f"player {request.player_id!r} has no seat of their own at this table",
                    )
                ),
            )
            return
        if table.dropped or table.quarantined is not None:
            why = f"table {table.table_id} moved; retry" if table.dropped else table.quarantined
            await self.reply(job.msg, encode(error_reply(codes.NOT_OWNER, str(why))))
            return
        stored: list[StoredEvents] = []
        try:
            if table.needs_reload:
                await self._reload(table)
            now = time.time()
            changes: list[AutopilotChanged | None] = []
            if request.connected is not None:
                change, grace_end = autopilot.presence(
                    table, seat, request.gateway, request.connected, now,
                    self.config.autopilot_grace, self.config.presence_ttl,
                )  # fmt: skip
                changes.append(change)
                if grace_end is not None:
                    self.scheduler.at(grace_end, table.table_id, GraceOver(seat, now))
            if request.autopilot is not None:
                changes.append(autopilot.switch(table, seat, request.autopilot))
            for change in changes:
                if change is not None:
                    stored.append(await self._store_change(table, change))
            body = encode(
                SeatStatus(
                    seat=seat,
                    away=seat in table.away,
                    autopilot=seat in table.autopilot,
                    chosen=seat in table.autopilot_chosen,
                )
            )
        except (Fenced, StoreUnavailable) as exc:
            body = encode(error_reply(codes.UNAVAILABLE, f"storage did not confirm ({exc}); retry"))
            await self.reply(job.msg, body)
            raise
        await self.reply(job.msg, body)
        if stored:
            await self.after_change(table, stored)

    async def _grace_over(self, table: Table, job: GraceOver) -> None:
        change = autopilot.grace_over(table, job.seat, job.since)
        if change is None:
            return
        if table.needs_reload:
            await self._reload(table)
        await self.after_change(table, [await self._store_change(table, change)])

    async def _player_back(self, table: Table, player_id: str) -> list[StoredEvents]:
        seat = autopilot.human_seat(table, player_id)
        change = None if seat is None else autopilot.back(table, seat)
        return [] if change is None else [await self._store_change(table, change)]

    async def _store_change(self, table: Table, change: AutopilotChanged) -> StoredEvents:
        stored = await self.writer.store_table_events(table, [change])
        autopilot.record(table, change)
        self._m_autopilot.labels(change.reason).inc()
        log.info(
            "autopilot", table_id=table.table_id, seat=change.seat, on=change.on,
            reason=change.reason,
        )  # fmt: skip
        return stored

    def _storage_failed(self, table: Table, exc: Exception) -> None:
        if isinstance(exc, Fenced):
            self._drop(table, str(exc))
            return
        table.needs_reload = True
        log.warning("store_unavailable", table_id=table.table_id, error=str(exc))
        self.scheduler.at(time.time() + 1.0, table.table_id, Deadline())
