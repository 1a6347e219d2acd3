"""The table service: owns the tables of the partitions it leases, one command at a time.

Each table has a job queue worked by one task, so a table's commands, timeouts and bot
re-asks apply strictly in arrival order while different tables proceed concurrently.
A command is answered only after its events are in JetStream and its snapshot is in KV.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from opentelemetry import trace
from opolyx_contracts import CONTRACT_VERSION, ContractError, decode, error_reply
from opolyx_contracts import errors as codes
from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    GAME_FINISHED,
    GAME_SEAT_OUT,
    TABLE_CREATE,
    is_valid_token,
    table_command,
    table_events,
    table_partition,
    table_view,
)
from opolyx_contracts.table import (
    CreateTable,
    TableCommand,
    TableCreated,
    TableView,
    ViewRequest,
)
from opolyx_rules import seed_commitment
from opolyx_service import extracted_context, get_logger, inject_headers
from opolyx_service.metrics import counter, gauge, histogram
from prometheus_client import CollectorRegistry

from opolyx_table.engine import Engine, RulesFailure
from opolyx_table.leases import PartitionLeases
from opolyx_table.results import game_finished, seat_out, seat_out_reason
from opolyx_table.scheduler import Scheduler
from opolyx_table.settings import TableConfig
from opolyx_table.store import Fenced, Storage, StoreUnavailable, snapshot_key
from opolyx_table.table import Job, Table

__all__ = ["TableService"]

log = get_logger("opolyx_table.service")
tracer = trace.get_tracer("opolyx_table")

COMMAND_NOT_ALLOWED = "command/not_allowed"


def _encode(model: Any) -> bytes:
    return bytes(model.model_dump_json().encode())


def _error(code: str, message: str) -> bytes:
    return _encode(error_reply(code, message))


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


class TableService:
    def __init__(
        self,
        nc: Client,
        storage: Storage,
        engine: Engine,
        config: TableConfig,
        instance_id: str,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.nc = nc
        self.storage = storage
        self.engine = engine
        self.config = config
        self.instance_id = instance_id
        self.tables: dict[str, Table] = {}
        self._partition_subs: dict[int, Subscription] = {}
        self._create_sub: Subscription | None = None
        # One lock per table id being created or adopted; an entry lives while it is used.
        self._creating: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._background: set[asyncio.Task[Any]] = set()
        self._outbox: list[tuple[bytes, dict[str, str]]] = []
        self._outbox_flusher: asyncio.Task[None] | None = None
        # Write ids: unique per process start, cheap to make (a counter, not urandom).
        self._write_ids = (f"{secrets.token_hex(4)}-{n}" for n in itertools.count(1))
        self.scheduler = Scheduler(self._on_timer)
        self.leases = PartitionLeases(
            storage.leases,
            instance_id,
            config.partitions,
            config.heartbeat_interval,
            self._acquire_partition,
            self._release_partition,
        )
        registry = registry or CollectorRegistry()
        self._m_commands = counter(
            registry, "table_commands_total", "Commands handled, by outcome", ("outcome",)
        )
        self._m_latency = histogram(
            registry, "table_command_seconds", "Time from command received to reply sent"
        )
        self._m_timeouts = counter(registry, "table_timeouts_total", "Deadlines fired")
        self._m_bot_asks = counter(
            registry, "table_bot_decisions_requested_total", "Decision requests sent to bots"
        )
        self._m_tables = gauge(registry, "table_tables_loaded", "Tables held by this instance")
        self._m_partitions = gauge(registry, "table_partitions_owned", "Partitions leased")

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        self.scheduler.start()
        self._create_sub = await self.nc.subscribe(TABLE_CREATE, queue="table", cb=self._on_create)
        self.leases.start()

    @property
    def ready(self) -> bool:
        return self.nc.is_connected and self.leases.rounds > 0

    async def stop(self) -> None:
        """Hand every partition back (others take over at once) and stop."""
        if self._create_sub is not None:
            with contextlib.suppress(Exception):
                await self._create_sub.unsubscribe()
        await self.leases.stop(release=True)
        await self.scheduler.stop()
        for task in list(self._background):
            task.cancel()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- partitions -----------------------------------------------------------------

    async def _acquire_partition(self, partition: int) -> None:
        loaded = 0
        async for key, snapshot, revision in self.storage.partition_snapshots(partition):
            if snapshot.get("finished") and snapshot.get("finish_announced"):
                continue
            try:
                table = await self._load_table(key, snapshot, revision)
            except (Fenced, StoreUnavailable):
                raise  # transient: the whole partition is retried at the next heartbeat
            except Exception:
                # One unreadable table must not keep a partition's other tables down.
                log.exception("table_load_failed", key=key)
                continue
            self._register(table)
            loaded += 1
        self._partition_subs[partition] = await self.nc.subscribe(
            f"opolyx.table.{partition}.>", queue="table", cb=self._on_partition_message
        )
        # Make sure the server has the subscription before this instance says it serves
        # the partition (a request racing a fresh SUB can see "no responders").
        await self.nc.flush()
        self._m_partitions.set(len(self._partition_subs))
        log.info("partition_loaded", partition=partition, tables=loaded)

    async def _release_partition(self, partition: int) -> None:
        sub = self._partition_subs.pop(partition, None)
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for table in [t for t in self.tables.values() if t.partition == partition]:
            table.dropped = True
            if table.worker is not None:
                with contextlib.suppress(Exception):
                    await table.worker
            self.tables.pop(table.table_id, None)
        self._m_partitions.set(len(self._partition_subs))
        self._m_tables.set(len(self.tables))
        log.info("partition_released", partition=partition)

    def _register(self, table: Table) -> None:
        self.tables[table.table_id] = table
        self._m_tables.set(len(self.tables))
        self._after_change(table)
        if table.finished and not table.finish_announced:
            self._enqueue(table, ("announce", None))

    async def _load_table(self, key: str, snapshot: dict[str, Any], revision: int) -> Table:
        """A table from its snapshot, checked against (and caught up with) its events."""
        state = self.engine.from_json(snapshot["state"])
        table = Table.from_snapshot(snapshot, key, revision, state)
        changed = False
        last = await self.storage.last_events(table.table_id)
        if (
            last is not None
            and last[1].last_seq == table.seq
            and last[1].write_id == table.write_id
        ):
            table.stream_seq = last[0]  # the snapshot matches the stream: the usual case
        elif last is not None or table.seq != 0:
            await self._catch_up(table)
            changed = True
        table.finished = bool(self.engine.to_json(table.state).get("finished"))
        if table.seq == 0:
            # Created but the creation event never made it: store it now.
            view = self.engine.public_view(table.state)
            await self._store_batch(table, "table", [self._created_event(table, view)], None, None)
            changed = True
        if changed:
            await self._save(table)
            log.info("table_recovered", table_id=table.table_id, seq=table.seq)
        return table

    async def _catch_up(self, table: Table) -> None:
        """Bring a table whose snapshot does not match its stream in line with the stream."""
        batches = [item async for item in self.storage.read_events(table.table_id)]
        base = None
        for index, (_, batch) in enumerate(batches):
            if batch.last_seq == table.seq and batch.write_id == table.write_id:
                base = index
        if base is None:
            # The snapshot's own events were never stored: rebuild from the seed.
            log.warning("table_rebuilt_from_events", table_id=table.table_id, seq=table.seq)
            table.state = self.engine.new_game(
                table.mode, [seat.boosts for seat in table.seats], table.seed
            )
            table.seq = 0
            table.write_id = ""
            table.recent.clear()
            table.outs_announced.clear()
            table.seed_revealed = table.finish_announced = False
            tail = batches
        else:
            tail = batches[base + 1 :]
        for _, batch in tail:
            if batch.first_seq != table.seq + 1:
                log.error(
                    "event_gap",
                    table_id=table.table_id,
                    expected=table.seq + 1,
                    got=batch.first_seq,
                )
            if batch.source == "rules":
                for record in batch.events:
                    table.state = self.engine.evolve(table.state, record.event)
            elif any(r.event.get("type") == "seed_revealed" for r in batch.events):
                table.seed_revealed = True
            table.seq = batch.last_seq
            table.write_id = batch.write_id or ""
            if batch.command_id:
                table.remember(
                    batch.command_id, batch.last_seq, len(batch.events), self.config.recent_commands
                )
        table.stream_seq = batches[-1][0] if batches else 0

    async def _reload(self, table: Table) -> None:
        loaded = await self.storage.read_snapshot(table.key)
        if loaded is None:
            raise Fenced(f"table {table.table_id} has no snapshot")
        snapshot, revision = loaded
        fresh = await self._load_table(table.key, snapshot, revision)
        for name in (
            "state", "seq", "stream_seq", "write_id", "revision", "recent",
            "outs_announced", "finished", "seed_revealed", "finish_announced",
        ):  # fmt: skip
            setattr(table, name, getattr(fresh, name))
        table.needs_reload = False
        table.changed = True

    def _drop(self, table: Table, reason: str) -> None:
        log.warning("table_dropped", table_id=table.table_id, reason=reason)
        table.dropped = True
        self.tables.pop(table.table_id, None)
        self._m_tables.set(len(self.tables))

    # --- NATS entry points ----------------------------------------------------------

    async def _on_partition_message(self, msg: Msg) -> None:
        tokens = msg.subject.split(".")
        if len(tokens) == 4 and tokens[3] == "create":
            self._spawn(self._create(msg))
            return
        if len(tokens) != 5:
            return
        table_id, kind = tokens[3], tokens[4]
        table = self.tables.get(table_id)
        if kind == "cmd":
            if table is None:
                self._spawn(self._unknown_table(msg, table_id))
            else:
                self._enqueue(table, ("command", (msg, time.perf_counter())))
        elif kind == "view":
            if table is None:
                self._spawn(self._unknown_table(msg, table_id))
            else:
                await self._reply(msg, self._view(table, msg))

    async def _on_create(self, msg: Msg) -> None:
        self._spawn(self._route_create(msg))

    async def _reply(self, msg: Msg, body: bytes) -> None:
        if msg.reply:
            with contextlib.suppress(Exception):
                await self.nc.publish(msg.reply, body)

    async def _unknown_table(self, msg: Msg, table_id: str) -> None:
        """A message for a table not in memory: adopt it if it is ours, else explain."""
        if not is_valid_token(table_id):
            await self._reply(msg, _error(codes.TABLE_NOT_FOUND, f"no table {table_id!r}"))
            return
        try:
            await self._unknown_valid_table(msg, table_id)
        except Exception:
            log.exception("unknown_table_failed", table_id=table_id)
            await self._reply(msg, _error(codes.INTERNAL, "the table could not be loaded"))

    async def _unknown_valid_table(self, msg: Msg, table_id: str) -> None:
        partition = table_partition(table_id, self.config.partitions)
        key = snapshot_key(partition, table_id)
        lock = self._creating.setdefault(table_id, asyncio.Lock())
        async with lock:
            table = self.tables.get(table_id)
            loaded = None if table is not None else await self.storage.read_snapshot(key)
            if table is None and loaded is not None and partition in self._partition_subs:
                snapshot, revision = loaded
                if not (snapshot.get("finished") and snapshot.get("finish_announced")):
                    try:
                        table = await self._load_table(key, snapshot, revision)
                        self._register(table)
                    except (Fenced, StoreUnavailable) as exc:
                        log.warning("table_adopt_failed", table_id=table_id, error=str(exc))
                        table = None
        if table is not None:
            if msg.subject.endswith(".cmd"):
                self._enqueue(table, ("command", (msg, time.perf_counter())))
            else:
                await self._reply(msg, self._view(table, msg))
            return
        if loaded is None:
            await self._reply(msg, _error(codes.TABLE_NOT_FOUND, f"no table {table_id!r}"))
            return
        snapshot, _ = loaded
        if msg.subject.endswith(".view"):
            state = self.engine.from_json(snapshot["state"])
            await self._reply(msg, self._view(Table.from_snapshot(snapshot, key, 0, state), msg))
        elif snapshot.get("finished"):
            await self._reply(msg, _error(codes.TABLE_FINISHED, f"table {table_id} has ended"))
        else:
            await self._reply(
                msg, _error(codes.NOT_OWNER, f"table {table_id} is moving between instances; retry")
            )

    # --- creation -------------------------------------------------------------------

    async def _route_create(self, msg: Msg) -> None:
        """Pick the table id (in a partition we own when we can) and reach its owner."""
        try:
            request = decode(CreateTable, msg.data)
        except ContractError as exc:
            await self._reply(msg, _encode(error_reply(exc.code, exc.message)))
            return
        owned = set(self._partition_subs)
        table_id = request.table_id
        if table_id is None:
            for _ in range(64):
                table_id = secrets.token_hex(8)
                if not owned or table_partition(table_id, self.config.partitions) in owned:
                    break
        assert table_id is not None
        partition = table_partition(table_id, self.config.partitions)
        request = request.model_copy(update={"table_id": table_id})
        if partition in owned:
            await self._reply(msg, await self._create_here(request, table_id, partition))
            return
        try:
            answer = await self.nc.request(
                f"opolyx.table.{partition}.create", _encode(request), timeout=5.0
            )
            await self._reply(msg, answer.data)
        except (NoRespondersError, NatsTimeoutError):
            await self._reply(
                msg,
                _error(
                    codes.UNAVAILABLE,
                    f"no table-service instance owns partition {partition} yet; retry shortly",
                ),
            )

    async def _create(self, msg: Msg) -> None:
        try:
            request = decode(CreateTable, msg.data)
        except ContractError as exc:
            await self._reply(msg, _encode(error_reply(exc.code, exc.message)))
            return
        table_id = request.table_id or secrets.token_hex(8)
        partition = table_partition(table_id, self.config.partitions)
        if partition not in self._partition_subs:
            await self._reply(msg, _error(codes.NOT_OWNER, "partition moved; retry"))
            return
        await self._reply(msg, await self._create_here(request, table_id, partition))

    def _created_reply(self, table: Table) -> bytes:
        return _encode(
            TableCreated(
                table_id=table.table_id,
                partition=table.partition,
                command_subject=table_command(table.table_id, self.config.partitions),
                view_subject=table_view(table.table_id, self.config.partitions),
                events_subject=table_events(table.table_id),
                seed_commitment=table.seed_commitment,
                seq=table.seq,
            )
        )

    def _created_event(self, table: Table, view: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "table_created",
            "mode": table.mode,
            "rules_version": table.rules_version,
            "room_id": table.room_id,
            "seats": [
                {
                    "seat": i,
                    "player_id": s.player_id,
                    "bot": s.bot,
                    "name": s.name,
                    "boosts": s.boosts,
                }
                for i, s in enumerate(table.seats)
            ],
            "seed_commitment": table.seed_commitment,
            "started_at": table.started_at,
            "state": view,
        }

    async def _create_here(self, request: CreateTable, table_id: str, partition: int) -> bytes:
        lock = self._creating.setdefault(table_id, asyncio.Lock())
        async with lock:
            try:
                return await self._create_locked(request, table_id, partition)
            except (Fenced, StoreUnavailable) as exc:
                return _error(codes.UNAVAILABLE, f"could not store the table ({exc}); retry")
            except Exception:
                log.exception("create_failed", table_id=table_id)
                return _error(codes.INTERNAL, "the table could not be created")

    async def _create_locked(self, request: CreateTable, table_id: str, partition: int) -> bytes:
        existing = self.tables.get(table_id)
        if existing is not None:
            return self._created_reply(existing)
        key = snapshot_key(partition, table_id)
        stored = await self.storage.read_snapshot(key)
        if stored is not None:
            snapshot, revision = stored
            return self._created_reply(Table.from_snapshot(snapshot, key, revision, state=None))
        seed = request.seed if request.seed is not None else secrets.randbelow(2**63)
        try:
            state = self.engine.new_game(request.mode, [s.boosts for s in request.seats], seed)
        except RulesFailure as exc:
            return _error(exc.code, exc.message)
        except (ValueError, KeyError, TypeError) as exc:
            return _error(codes.BAD_REQUEST, f"cannot start this game: {exc}")
        table = Table(
            table_id=table_id,
            partition=partition,
            key=key,
            room_id=request.room_id,
            mode=request.mode,
            rules_version=self.engine.rules_version,
            seats=list(request.seats),
            seed=seed,
            seed_commitment=seed_commitment(seed),
            started_at=time.time(),
            state=state,
            clock_rate=self.config.clock_rate,
        )
        try:
            table.revision = await self.storage.create_snapshot(
                key, table.to_snapshot(self.engine.to_json(state))
            )
        except Exception:
            # Created concurrently by a retry through another path: answer with that table.
            stored = await self.storage.read_snapshot(key)
            if stored is None:
                raise
            return self._created_reply(Table.from_snapshot(stored[0], key, stored[1], None))
        view = self.engine.public_view(state)
        await self._store_batch(table, "table", [self._created_event(table, view)], None, None)
        await self._save(table)
        self._register(table)
        log.info("table_created", table_id=table_id, partition=partition, mode=request.mode)
        return self._created_reply(table)

    # --- per-table work -------------------------------------------------------------

    def _enqueue(self, table: Table, job: Job) -> None:
        table.jobs.append(job)
        if table.worker is None:
            table.worker = asyncio.create_task(self._work(table))

    async def _work(self, table: Table) -> None:
        try:
            while table.jobs:
                kind, payload = table.jobs.popleft()
                try:
                    if kind == "command":
                        await self._run_command(table, *payload)
                    elif table.dropped:
                        continue
                    elif kind == "deadline":
                        await self._run_guarded(
                            table, lambda: self._fire_due(table, table.game_time(time.time()))
                        )
                        self._arm(table)
                    elif kind == "bot":
                        self._reask(table, *payload)
                    elif kind == "announce":
                        await self._run_guarded(
                            table,
                            lambda: self._announce_and_save(table),
                        )
                except Exception:
                    log.exception("table_job_failed", table_id=table.table_id, job=kind)
                if table.changed:
                    table.changed = False
                    self._after_change(table)
        finally:
            table.worker = None

    async def _announce_and_save(self, table: Table) -> None:
        if await self._announce(table, self.engine.to_json(table.state), [], False):
            await self._save(table)

    async def _run_guarded(self, table: Table, work: Callable[[], Awaitable[None]]) -> None:
        try:
            if table.needs_reload:
                await self._reload(table)
            await work()
        except Fenced as exc:
            self._drop(table, str(exc))
        except StoreUnavailable as exc:
            table.needs_reload = True
            log.warning("store_unavailable", table_id=table.table_id, error=str(exc))
            self.scheduler.at(time.time() + 1.0, table.table_id, "deadline")

    async def _run_command(self, table: Table, msg: Msg, received: float) -> None:
        if msg.headers and "traceparent" in msg.headers:
            # Continue the sender's trace; untraced commands skip span bookkeeping (hot path).
            with tracer.start_as_current_span(
                "table.command", context=extracted_context(msg.headers)
            ) as span:
                span.set_attribute("table.id", table.table_id)
                body, outcome = await self._command(table, msg)
                await self._reply(msg, body)
        else:
            body, outcome = await self._command(table, msg)
            await self._reply(msg, body)
        # Let the connection's flusher put the reply on the wire now: everything below
        # and the job's follow-up (timers, bot requests) would otherwise delay it.
        await asyncio.sleep(0)
        self._m_commands.labels(outcome).inc()
        self._m_latency.observe(time.perf_counter() - received)

    async def _command(self, table: Table, msg: Msg) -> tuple[bytes, str]:
        try:
            request = decode(TableCommand, msg.data)
        except ContractError as exc:
            return _error(exc.code, exc.message), "invalid"
        done = table.recent.get(request.command_id)
        if done is not None:
            return self._accepted(done[0], done[1]), "duplicate"
        refused = table.rejected.get(request.command_id)
        if refused is not None:
            return _error(*refused), "duplicate"
        if table.dropped:
            return _error(codes.NOT_OWNER, f"table {table.table_id} moved; retry"), "moved"
        command = dict(request.command)
        kind = command.get("type")
        if not isinstance(kind, str):
            return _error(codes.BAD_REQUEST, 'the command needs a "type" string'), "invalid"
        if kind == "timeout":
            return _error(COMMAND_NOT_ALLOWED, "timeouts are fired by the table"), "invalid"
        mine = table.seat_of(request.player_id)
        seat = command.get("seat", mine[0] if len(mine) == 1 else None)
        if (
            not isinstance(seat, int)
            or isinstance(seat, bool)
            or not 0 <= seat < len(table.seats)
            or table.seats[seat].player_id != request.player_id
        ):
            return (
                _error(
                    codes.SEAT_NOT_YOURS,
                    f"player {request.player_id!r} does not own seat {seat!r} at this table",
                ),
                "refused",
            )
        command["seat"] = seat
        try:
            if table.needs_reload:
                await self._reload(table)
            now = table.game_time(time.time())
            await self._fire_due(table, now)
            if table.finished:
                return _error(codes.TABLE_FINISHED, "the game has ended"), "refused"
            if request.expected_version is not None and request.expected_version != table.version:
                return (
                    _error(
                        codes.COMMAND_STALE,
                        f"the table is at version {table.version}, not "
                        f"{request.expected_version}; decide again on the current state",
                    ),
                    "stale",
                )
            try:
                new_state, events = self.engine.apply(table.state, command, now)
            except RulesFailure as exc:
                table.remember_rejection(
                    request.command_id, exc.code, exc.message, self.config.recent_commands
                )
                return _error(exc.code, exc.message), "refused"
            if not events:
                return self._accepted(table.seq, 0), "ok"
            command["at"] = now
            await self._commit(table, new_state, events, request.command_id, command)
            return self._accepted(table.seq, len(events)), "ok"
        except Fenced as exc:
            self._drop(table, str(exc))
            return _error(codes.NOT_OWNER, f"table {table.table_id} moved; retry"), "moved"
        except StoreUnavailable as exc:
            table.needs_reload = True
            return _error(codes.UNAVAILABLE, f"storage did not confirm ({exc}); retry"), "error"
        except Exception:
            log.exception("command_failed", table_id=table.table_id)
            table.needs_reload = True
            return _error(codes.INTERNAL, "the table could not apply this command"), "error"

    def _accepted(self, seq: int, events: int) -> bytes:
        """A `CommandAccepted` body (built by hand: this is the hot path)."""
        return b'{"v":1,"ok":true,"seq":%d,"version":%d,"events":%d}' % (seq, seq, events)

    async def _fire_due(self, table: Table, now: float) -> None:
        """Fire every deadline up to `now`, each at its own deadline time (as replay does)."""
        while not table.finished and not table.dropped:
            deadline = self.engine.next_deadline(table.state)
            if deadline is None or deadline > now:
                return
            try:
                new_state, events = self.engine.timeout(table.state, deadline)
            except RulesFailure as exc:
                log.error("timeout_refused", table_id=table.table_id, code=exc.code)
                return
            if not events:
                return
            self._m_timeouts.inc()
            await self._commit(table, new_state, events, None, {"type": "timeout", "at": deadline})

    # --- storing --------------------------------------------------------------------

    def _events_payload(
        self,
        table: Table,
        source: str,
        events: list[dict[str, Any]],
        command_id: str | None,
        command: dict[str, Any] | None,
        write_id: str,
    ) -> bytes:
        """A `TableEvents` body, serialised directly (the hot path)."""
        first = table.seq + 1
        last = first + len(events) - 1
        return _dumps(
            {
                "v": CONTRACT_VERSION,
                "table_id": table.table_id,
                "source": source,
                "first_seq": first,
                "last_seq": last,
                "version": last,
                "events": [
                    {"seq": first + i, "version": first + i, "event": event}
                    for i, event in enumerate(events)
                ],
                "command_id": command_id,
                "command": command,
                "at": time.time(),
                "write_id": write_id,
            }
        )

    async def _store_batch(
        self,
        table: Table,
        source: str,
        events: list[dict[str, Any]],
        command_id: str | None,
        command: dict[str, Any] | None,
    ) -> None:
        """Store events without a state change (the table's own events); save after."""
        write_id = next(self._write_ids)
        payload = self._events_payload(table, source, events, command_id, command, write_id)
        first = table.seq + 1
        table.stream_seq = await self.storage.append_events(
            table.table_id, first, payload, table.stream_seq
        )
        table.seq = first + len(events) - 1
        table.write_id = write_id

    async def _commit(
        self,
        table: Table,
        new_state: Any,
        events: list[dict[str, Any]],
        command_id: str | None,
        command: dict[str, Any],
    ) -> None:
        """Store a command's events and the new snapshot (concurrently), then announce."""
        write_id = next(self._write_ids)
        payload = self._events_payload(table, "rules", events, command_id, command, write_id)
        first = table.seq + 1
        expected_stream_seq = table.stream_seq
        # The full state JSON is needed for the snapshot anyway; only its public fields
        # (finished, seats, squares, round, placement) are read here.
        state_json = self.engine.to_json(new_state)
        # The table is updated before the writes are confirmed: if either fails, the
        # table is dropped or reloaded from storage, never used as it is.
        table.state = new_state
        table.seq = first + len(events) - 1
        table.write_id = write_id
        table.finished = bool(state_json.get("finished"))
        if command_id is not None:
            table.remember(command_id, table.seq, len(events), self.config.recent_commands)
        try:
            appended, saved = await self.storage.commit(
                table.table_id,
                first,
                payload,
                expected_stream_seq,
                table.key,
                table.to_snapshot(state_json),
                table.revision,
            )
        except BaseException:
            table.needs_reload = True
            raise
        table.stream_seq = appended
        table.revision = saved
        if await self._announce(table, state_json, events, command.get("type") == "timeout"):
            await self._save(table, state_json)
        # Timers and bot requests follow once the job has answered (see `_work`).
        table.changed = True

    async def _save(self, table: Table, state_json: dict[str, Any] | None = None) -> None:
        if state_json is None:
            state_json = self.engine.to_json(table.state)
        table.revision = await self.storage.write_snapshot(
            table.key, table.to_snapshot(state_json), table.revision
        )

    async def _announce(
        self, table: Table, view: dict[str, Any], events: list[dict[str, Any]], by_timeout: bool
    ) -> bool:
        """Seats that went out and the finished game, on the GAMES stream (deduplicated).

        Returns True when it changed what the snapshot records (save again).
        """
        changed = False
        for seat_view in view.get("seats", []):
            seat = int(seat_view["seat"])
            if seat_view.get("out") and seat not in table.outs_announced:
                reason = seat_out_reason(events, seat, by_timeout)
                await self.storage.publish_game_event(
                    GAME_SEAT_OUT,
                    _encode(seat_out(table, seat, reason, view)),
                    f"{table.table_id}:out:{seat}",
                )
                table.outs_announced.add(seat)
                changed = True
        if not table.finished:
            return changed
        if not table.seed_revealed:
            reveal = {
                "type": "seed_revealed",
                "seed": table.seed,
                "seed_commitment": table.seed_commitment,
            }
            await self._store_batch(table, "table", [reveal], None, None)
            table.seed_revealed = True
            changed = True
        if not table.finish_announced:
            batches = [batch async for _, batch in self.storage.read_events(table.table_id)]
            finished = game_finished(table, view, batches)
            await self.storage.publish_game_event(
                GAME_FINISHED, _encode(finished), f"{table.table_id}:finished"
            )
            table.finish_announced = True
            changed = True
            log.info("game_finished", table_id=table.table_id, winner=finished.winner)
        return changed

    # --- timers and bots ------------------------------------------------------------

    def _after_change(self, table: Table) -> None:
        self._arm(table)
        if table.finished or table.dropped:
            return
        view: dict[str, Any] | None = None
        for seat in self.engine.awaiting(table.state):
            if not table.seats[seat].bot:
                continue
            asked = table.bot_asked.get(seat)
            if asked is None or asked[0] != table.version:
                view = self._ask_bot(table, seat, 1, view)

    def _arm(self, table: Table) -> None:
        if table.finished or table.dropped:
            return
        deadline = self.engine.next_deadline(table.state)
        if deadline is not None and deadline != table.armed_deadline:
            table.armed_deadline = deadline
            self.scheduler.at(table.wall_time(deadline), table.table_id, "deadline", deadline)

    def _ask_bot(
        self, table: Table, seat: int, attempt: int, view: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Publish a `DecisionRequest` for a bot seat; returns the public view it carried."""
        deadline = self.engine.next_deadline(table.state)
        if view is None:
            view = self.engine.public_view(table.state)
        request = {
            "v": CONTRACT_VERSION,
            "table_id": table.table_id,
            "seat": seat,
            "player_id": table.seats[seat].player_id,
            "command_subject": table_command(table.table_id, self.config.partitions),
            "command_id": f"bot-{table.table_id}-{table.version}-{seat}-{attempt}",
            "version": table.version,
            "attempt": attempt,
            "state": view,
            "legal": self.engine.legal(table.state, seat),
            "deadline_at": None if deadline is None else table.wall_time(deadline),
        }
        table.bot_asked[seat] = (table.version, attempt)
        self._m_bot_asks.inc()
        self._outbox.append((_dumps(request), inject_headers()))
        if self._outbox_flusher is None:
            # One task sends every request queued meanwhile, after the current reply.
            self._outbox_flusher = asyncio.create_task(self._flush_outbox())
        self.scheduler.at(
            time.time() + self.config.bot_reask,
            table.table_id,
            "bot",
            (table.version, seat, attempt),
        )
        return view

    async def _flush_outbox(self) -> None:
        try:
            while self._outbox:
                data, headers = self._outbox.pop(0)
                try:
                    await self.nc.publish(BOTS_DECIDE, data, headers=headers or None)
                except Exception as exc:
                    # Not fatal: the re-ask timer asks again.
                    log.warning("decision_request_not_sent", error=repr(exc))
        finally:
            self._outbox_flusher = None

    def _reask(self, table: Table, version: int, seat: int, attempt: int) -> None:
        if table.finished or table.version != version:
            return
        if table.bot_asked.get(seat) != (version, attempt):
            return
        if seat not in self.engine.awaiting(table.state):
            return
        self._ask_bot(table, seat, attempt + 1)

    def _on_timer(self, table_id: str, kind: str, token: Any) -> None:
        table = self.tables.get(table_id)
        if table is None:
            return
        if kind == "deadline":
            if table.armed_deadline == token:
                table.armed_deadline = None
            self._enqueue(table, ("deadline", token))
        elif kind == "bot":
            self._enqueue(table, ("bot", token))

    # --- views ----------------------------------------------------------------------

    def _view(self, table: Table, msg: Msg) -> bytes:
        try:
            request = decode(ViewRequest, msg.data or b"{}")
        except ContractError as exc:
            return _error(exc.code, exc.message)
        legal = None
        if request.seat is not None:
            if not 0 <= request.seat < len(table.seats):
                return _error(codes.BAD_REQUEST, f"no seat {request.seat} at this table")
            legal = [] if table.finished else self.engine.legal(table.state, request.seat)
        deadline = None if table.finished else self.engine.next_deadline(table.state)
        return _encode(
            TableView(
                table_id=table.table_id,
                seq=table.seq,
                version=table.version,
                state=self.engine.public_view(table.state),
                seats=table.seats,
                legal=legal,
                seed_commitment=table.seed_commitment,
                deadline_at=None if deadline is None else table.wall_time(deadline),
            )
        )
