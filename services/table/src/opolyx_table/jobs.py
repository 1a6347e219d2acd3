"""The per-table queue: a table's commands, timers and bot re-asks run one at a time.

Each table has a job queue worked by one task, so everything that changes a table applies
strictly in arrival order while different tables proceed concurrently. A command job: ask
the core, store its batches, reply, then (the reply already on its way) announce, publish
the update, ask bots, re-arm the timer and write a snapshot when one is due.
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
from opolyx_contracts.table import CommandAccepted, TableCommand, TableEvents
from opolyx_service import extracted_context, get_logger
from opolyx_service.metrics import ServiceMetrics, counter, histogram
from opolyx_service.replies import safe_reply_subject
from prometheus_client import CollectorRegistry

from opolyx_table import core
from opolyx_table.announce import Announcer
from opolyx_table.messages import Change, encode
from opolyx_table.outbox import Outbox
from opolyx_table.scheduler import Scheduler
from opolyx_table.settings import TableConfig
from opolyx_table.store import Fenced, StoreUnavailable
from opolyx_table.table import Table
from opolyx_table.writer import Writer

__all__ = ["BotReask", "CommandJob", "Deadline", "IdleCheck", "Jobs", "Resume"]

log = get_logger("opolyx_table.jobs")
tracer = trace.get_tracer("opolyx_table")


@dataclass(frozen=True, slots=True)
class CommandJob:
    msg: Msg
    request: TableCommand
    received: float
    """`time.perf_counter()` when it arrived (latency metric)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    pass


@dataclass(frozen=True, slots=True)
class BotReask:
    version: int
    seat: int
    attempt: int


@dataclass(frozen=True, slots=True)
class IdleCheck:
    seq: int


@dataclass(frozen=True, slots=True)
class Resume:
    """A table just loaded or created: finish announcing, ask its bots, arm its timer."""

    stored: tuple[TableEvents, ...] = ()
    """Batches stored while loading or creating it, not published yet."""


Job = CommandJob | Deadline | BotReask | IdleCheck | Resume


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
        """The skeleton's `opolyx_handled_total` / `opolyx_handle_seconds` (every service)."""
        self.writer = writer
        self.outbox = outbox
        self.announcer = announcer
        self.scheduler = scheduler
        self.config = config
        self._reload = reload
        self._drop = drop
        self.in_flight = 0
        """Commands received and not answered yet (bounded by `config.max_in_flight`)."""
        self.m_commands = counter(
            registry, "table_commands_total", "Commands handled, by outcome", ("outcome",)
        )
        self._m_latency = histogram(
            registry, "table_command_seconds", "Time from command received to reply sent"
        )
        self._m_timeouts = counter(registry, "table_timeouts_total", "Deadlines fired")

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
                    elif table.dropped:
                        continue
                    elif isinstance(job, Deadline):
                        await self._deadline(table)
                    elif isinstance(job, BotReask):
                        await self._reask(table, job)
                    elif isinstance(job, IdleCheck):
                        await self._idle(table, job)
                    else:
                        await self.after_change(table, list(job.stored))
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
        stored: list[TableEvents] = []
        by_timeout = False
        try:
            if table.quarantined is not None:
                reply, label = error_reply(codes.INTERNAL, table.quarantined), "error"
            else:
                if table.needs_reload and not table.dropped:
                    await self._reload(table)
                outcome = core.accept(table, job.request, time.time())
                for batch in outcome.batches:
                    stored.append(await self.writer.store(table, batch))
                    by_timeout = by_timeout or batch.command_id is None
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
        self.m_commands.labels(label).inc()
        elapsed = time.perf_counter() - job.received
        self._m_latency.observe(elapsed)
        if self._service_metrics is not None:
            self._service_metrics.handled(TABLE_COMMANDS_ANY, label, elapsed)
        if stored:
            # Let the connection's flusher put the reply on the wire first: the follow-up
            # work would otherwise hold it back by its whole CPU time (~0.3 ms).
            await asyncio.sleep(0)
            await self.after_change(table, stored, by_timeout)

    async def reply(self, msg: Msg, body: bytes) -> None:
        # Only to an inbox: a request may name any subject as its reply, and the reply
        # would go out with the table's rights (e.g. onto opolyx.game.finished).
        reply = safe_reply_subject(msg)
        if reply is not None:
            try:
                await self.nc.publish(reply, body)
            except Exception as exc:
                log.warning("reply_failed", error=repr(exc))

    # --- timers and bots ------------------------------------------------------------

    async def _deadline(self, table: Table) -> None:
        if table.needs_reload:
            await self._reload(table)
        stored = []
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
        decisions = [d for d in core.decisions(table.state) if d.seat == job.seat]
        if decisions:
            await self._ask(table, job.seat, job.attempt + 1, Change(table, decisions))

    async def _ask(self, table: Table, seat: int, attempt: int, change: Change) -> None:
        await self.outbox.ask_bot(table, seat, attempt, change)
        self.scheduler.at(
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
            self.scheduler.at(table.wall_time(deadline), table.table_id, Deadline())

    def _arm_idle(self, table: Table) -> None:
        if not table.idle_armed:
            table.idle_armed = True
            self.scheduler.at(
                time.time() + self.config.snapshot_idle, table.table_id, IdleCheck(table.seq)
            )

    # --- after a change -------------------------------------------------------------

    async def after_change(
        self, table: Table, stored: list[TableEvents], by_timeout: bool = False
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
            if not table.seats[decision.seat].bot:
                continue
            asked = table.bot_asked.get(decision.seat)
            if asked is None or asked[0] != table.version:
                await self._ask(table, decision.seat, 1, change)

    def _storage_failed(self, table: Table, exc: Exception) -> None:
        if isinstance(exc, Fenced):
            self._drop(table, str(exc))
            return
        table.needs_reload = True
        log.warning("store_unavailable", table_id=table.table_id, error=str(exc))
        self.scheduler.at(time.time() + 1.0, table.table_id, Deadline())
