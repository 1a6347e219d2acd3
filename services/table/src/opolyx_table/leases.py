"""Partition ownership through leases in the KV bucket `table_leases` (TTL).

Keys: `p.<n>` -> the owning instance id; `i.<instance>` -> presence of a live instance.
Every heartbeat an instance renews its keys with compare-and-set; a lease it fails to renew
is dropped at once. It then claims free partitions (create fails while a lease is live)
up to its fair share, ceil(partitions / live instances), and hands back one partition per
heartbeat while it holds more than that, so load spreads when instances join.

Takeover. A lease of a dead instance would expire after the TTL (2 s: a takeover took 3.2 s
in the chaos test). Instead, every instance answers on its own liveness subject
(`table_instance_alive`) on the lease connection, and every `check_interval` each instance
asks the others listed in the bucket. A killed process's connection is gone at once, so the
question gets "no responders": its presence and leases are deleted (compare-and-delete: a
lease renewed meanwhile stays) and a claim round runs at once. Only "no responders" counts
as dead; a slow or busy instance (an answer late, a timeout) keeps its leases, so load
makes no more churn than before. Right after this connection (re)connects the question
proves nothing (after a NATS restart the others may not be back yet): for `reconnect_grace`
seconds nobody is taken over. A host that vanishes without closing its connections is
still caught by the TTL.

`LeaseKeeper` runs all of this in a thread of its own, with its own event loop and NATS
connection: however many commands the service's loop has queued, a renewal is sent and
its answer read on time (measured: on one loop and one connection, 300+ tables at full
speed delayed renewals past the TTL and lost leases). Loading and dropping a partition's
tables still happen on the service's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from opolyx_contracts.subjects import TABLE_LEASES_BUCKET, table_instance_alive
from opolyx_service import ensure_kv, flush_in_order, get_logger
from opolyx_service.tasks import cancel_and_wait

__all__ = ["LeaseKeeper", "PartitionLeases"]

log = get_logger("opolyx_table.leases")

SHUTDOWN_LIMIT = 15.0
"""Seconds the lease thread may take to hand every partition back and close its connection
(one round trip per partition and a drain: well under a second normally)."""

Probe = Callable[[str], Awaitable[bool]]
"""Whether an instance may be alive: False only when it certainly is not."""


async def _always_alive(instance: str) -> bool:
    return True


class PartitionLeases:
    def __init__(
        self,
        kv: KeyValue,
        instance_id: str,
        partitions: int,
        heartbeat: float,
        on_acquired: Callable[[int], Awaitable[None]],
        on_lost: Callable[[int], Awaitable[None]],
        probe: Probe = _always_alive,
        check_interval: float = 0.0,
    ) -> None:
        self._kv = kv
        self._instance = instance_id
        self._partitions = partitions
        self._heartbeat = heartbeat
        self._on_acquired = on_acquired
        self._on_lost = on_lost
        self._probe = probe
        self._check_interval = check_interval
        self.owned: dict[int, int] = {}
        """partition -> revision of our lease entry."""
        self._presence_revision: int | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._round = asyncio.Lock()
        """One heartbeat round at a time (the periodic one, or one after a takeover)."""
        self._peers: set[str] = set()
        """The other instances listed in the bucket at the last heartbeat."""
        self._renewed_at = 0.0
        self.rounds = 0
        """Completed heartbeat rounds (readiness waits for the first)."""
        self.takeovers = 0
        """Instances found dead and taken over (their presence deleted)."""

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(), name="table-leases")]
        if self._check_interval > 0:
            self._tasks.append(asyncio.create_task(self._watch(), name="table-lease-peers"))

    async def stop(self, release: bool = True) -> None:
        for task in self._tasks:
            await cancel_and_wait(task)
        self._tasks = []
        if release:
            for partition in sorted(self.owned):
                await self._release(partition)
            with contextlib.suppress(Exception):
                await self._kv.delete(f"i.{self._instance}")

    async def _run(self) -> None:
        while True:
            try:
                async with self._round:
                    await self.heartbeat_once()
            except Exception as exc:
                log.warning("lease_round_failed", error=repr(exc))
            self.rounds += 1
            # Jitter keeps instances that start together from claiming in lockstep.
            await asyncio.sleep(self._heartbeat * random.uniform(0.8, 1.0))

    async def _watch(self) -> None:
        """Ask the other instances whether they live; take a dead one's partitions over."""
        while True:
            await asyncio.sleep(self._check_interval)
            try:
                dead = [peer for peer in sorted(self._peers) if not await self._probe(peer)]
                if dead:
                    for peer in dead:
                        await self.take_over(peer)
                    async with self._round:
                        await self.heartbeat_once()
            except Exception as exc:
                log.warning("lease_check_failed", error=repr(exc))

    async def take_over(self, peer: str) -> None:
        """Delete a dead instance's presence and leases, so they are free to claim now."""
        self._peers.discard(peer)
        with contextlib.suppress(KeyNotFoundError, KeyWrongLastSequenceError):
            presence = await self._kv.get(f"i.{peer}")
            await self._kv.delete(f"i.{peer}", last=presence.revision)
        entries = await asyncio.gather(
            *(self._kv.get(f"p.{p}") for p in range(self._partitions) if p not in self.owned),
            return_exceptions=True,
        )
        freed = []
        for entry in entries:
            if isinstance(entry, BaseException) or entry.value != peer.encode():
                continue
            try:
                await self._kv.delete(entry.key, last=entry.revision)
            except KeyWrongLastSequenceError:
                continue  # renewed in between: alive after all
            freed.append(entry.key)
        self.takeovers += 1
        log.warning("instance_gone", instance=peer, leases_freed=freed)

    async def heartbeat_once(self) -> None:
        await self._renew_all()
        share = math.ceil(self._partitions / max(1, await self._live_instances()))
        if len(self.owned) > share:
            await self._release(max(self.owned))
            return
        free = [p for p in range(self._partitions) if p not in self.owned]
        random.shuffle(free)
        for partition in free:
            if len(self.owned) >= share:
                break
            try:
                revision = int(await self._kv.create(f"p.{partition}", self._instance.encode()))
            except Exception:
                continue  # held by a live instance
            self.owned[partition] = revision
            log.info("lease_acquired", partition=partition)
            try:
                await self._on_acquired(partition)
            except Exception as exc:
                log.error("partition_load_failed", partition=partition, error=repr(exc))
                await self._release(partition)
            if time.monotonic() - self._renewed_at > self._heartbeat:
                # Loading partitions can take a while: keep the ones held alive meanwhile.
                await self._renew_all()

    async def _renew_all(self) -> None:
        self._renewed_at = time.monotonic()
        await self._renew_presence()
        owned = list(self.owned.items())
        # All at once: one round trip for every lease, not one per lease.
        results = await asyncio.gather(
            *(
                self._kv.update(f"p.{partition}", self._instance.encode(), last=revision)
                for partition, revision in owned
            ),
            return_exceptions=True,
        )
        for (partition, _), result in zip(owned, results, strict=True):
            if isinstance(result, KeyWrongLastSequenceError):
                revision = await self._still_ours(partition)
                if revision is not None:
                    # An earlier renewal that timed out here had gone through: still ours.
                    self.owned[partition] = revision
                    continue
                log.warning("lease_lost", partition=partition)
                del self.owned[partition]
                await self._on_lost(partition)
            elif isinstance(result, BaseException):
                log.warning("lease_renewal_failed", partition=partition, error=repr(result))
            else:
                self.owned[partition] = int(result)

    async def _still_ours(self, partition: int) -> int | None:
        """The revision of our lease entry if the bucket still names this instance."""
        try:
            entry = await self._kv.get(f"p.{partition}")
        except Exception:
            return None
        if entry.revision is None or entry.value != self._instance.encode():
            return None
        return int(entry.revision)

    async def _renew_presence(self) -> None:
        key = f"i.{self._instance}"
        value = self._instance.encode()
        if self._presence_revision is not None:
            try:
                self._presence_revision = int(
                    await self._kv.update(key, value, last=self._presence_revision)
                )
                return
            except KeyWrongLastSequenceError:
                pass
        self._presence_revision = int(await self._kv.put(key, value))

    async def _live_instances(self) -> int:
        try:
            keys = await self._kv.keys()
        except NoKeysError:
            return 1
        instances = {key[2:] for key in keys if key.startswith("i.")}
        self._peers = instances - {self._instance}
        return max(1, len(instances))

    async def _release(self, partition: int) -> None:
        """Hand a partition back: stop serving it, then delete the lease."""
        revision = self.owned.pop(partition, None)
        await self._on_lost(partition)
        if revision is not None:
            with contextlib.suppress(KeyNotFoundError, KeyWrongLastSequenceError):
                await self._kv.delete(f"p.{partition}", last=revision)
            log.info("lease_released", partition=partition)


class LeaseKeeper:
    """`PartitionLeases` in a thread of its own (own event loop, own NATS connection).

    `on_acquired` / `on_lost` run on the loop that called `start` (the service's), and the
    lease thread waits for them, so a partition is served before its lease is counted and
    dropped before it is given back.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable[Client]],
        instance_id: str,
        partitions: int,
        lease_ttl: float,
        heartbeat: float,
        replicas: int,
        on_acquired: Callable[[int], Awaitable[None]],
        on_lost: Callable[[int], Awaitable[None]],
        check_interval: float = 0.25,
        reconnect_grace: float = 2.0,
    ) -> None:
        self._connect = connect
        self._instance = instance_id
        self._partitions = partitions
        self._ttl = lease_ttl
        self._heartbeat = heartbeat
        self._check_interval = check_interval
        self._grace = reconnect_grace
        """Seconds after this connection (re)connects before anyone is taken over: after a
        NATS restart every instance is back within a few reconnect waits (0.5 s each)."""
        self._connected_since = 0.0
        self._reconnects_seen = 0
        self._replicas = replicas
        self._on_acquired = on_acquired
        self._on_lost = on_lost
        self._service_loop: asyncio.AbstractEventLoop | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._leases: PartitionLeases | None = None
        self._nc: Client | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    @property
    def rounds(self) -> int:
        return self._leases.rounds if self._leases is not None else 0

    @property
    def owned(self) -> set[int]:
        return set(self._leases.owned) if self._leases is not None else set()

    @property
    def connected(self) -> bool:
        return self._nc is not None and self._nc.is_connected

    @property
    def takeovers(self) -> int:
        return self._leases.takeovers if self._leases is not None else 0

    async def start(self) -> None:
        self._service_loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="table-leases", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._started.wait)
        if self._error is not None:
            raise self._error

    async def stop(self, release: bool = True) -> None:
        """Stop renewing and (by default) hand every partition back at once."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        self._loop = None
        done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._shutdown(release), loop))
        # Bounded: a stop must end (SIGTERM) even if handing back hangs on a lost server.
        finished, _ = await asyncio.wait({done}, timeout=SHUTDOWN_LIMIT)
        if not finished:
            log.error("lease_shutdown_did_not_finish", limit=SHUTDOWN_LIMIT)
            loop.call_soon_threadsafe(loop.stop)
        elif not done.cancelled() and done.exception() is not None:
            log.warning("lease_shutdown_failed", error=repr(done.exception()))
        await asyncio.to_thread(thread.join, 5.0)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._open())
        except BaseException as exc:
            self._error = exc
            self._started.set()
            loop.close()
            return
        self._started.set()
        loop.run_forever()
        # What the connection left running (its reader, flusher, pinger) ends here.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    async def _open(self) -> None:
        self._nc = await self._connect()
        self._connected_since = time.monotonic()

        async def answer(msg: Msg) -> None:
            with contextlib.suppress(Exception):
                await msg.respond(b"alive")

        # Answering before the presence key exists: a peer that sees the key can ask.
        await self._nc.subscribe(table_instance_alive(self._instance), cb=answer)
        await flush_in_order(self._nc)
        await ensure_kv(
            self._nc.jetstream(timeout=5.0),
            TABLE_LEASES_BUCKET,
            ttl=self._ttl,
            replicas=self._replicas,
        )
        # The rounds' requests time out well within the TTL: one lost in a NATS restart
        # held the round for 5 s, every lease expired meanwhile and moved to the other
        # instance (tables reloaded twice: measured, a 1.9 s stall after the restart).
        kv = await _open_bucket(self._nc.jetstream(timeout=max(0.5, self._ttl / 2)))
        self._leases = PartitionLeases(
            kv,
            self._instance,
            self._partitions,
            self._heartbeat,
            lambda p: self._on_service_loop(self._on_acquired(p)),
            lambda p: self._on_service_loop(self._on_lost(p)),
            probe=self._probe,
            check_interval=self._check_interval,
        )
        self._leases.start()

    async def _probe(self, instance: str) -> bool:
        """False only when `instance`'s lease connection is certainly gone."""
        nc = self._nc
        if nc is None or not nc.is_connected:
            return True
        now = time.monotonic()
        reconnects = int(nc.stats["reconnects"])
        if reconnects != self._reconnects_seen:
            self._reconnects_seen, self._connected_since = reconnects, now
        if now - self._connected_since < self._grace:
            return True  # just (re)connected: the others may not be back yet
        try:
            await nc.request(table_instance_alive(instance), b"", timeout=self._heartbeat)
        except NoRespondersError:
            return False
        except Exception:
            return True  # late or lost: busy, not dead
        return True

    async def _on_service_loop(self, coro: Awaitable[Any]) -> None:
        assert self._service_loop is not None
        await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(_awaited(coro), self._service_loop)
        )

    async def _shutdown(self, release: bool) -> None:
        try:
            if self._leases is not None:
                await self._leases.stop(release=release)
            if self._nc is not None:
                with contextlib.suppress(Exception):
                    await self._nc.drain()
        finally:
            asyncio.get_running_loop().call_soon(asyncio.get_running_loop().stop)


async def _open_bucket(js: Any) -> KeyValue:
    """The leases bucket on `js`; its short timeout may be too short once on a busy start."""
    for _ in range(9):
        with contextlib.suppress(TimeoutError, NatsTimeoutError):
            bucket: KeyValue = await js.key_value(TABLE_LEASES_BUCKET)
            return bucket
    bucket = await js.key_value(TABLE_LEASES_BUCKET)
    return bucket


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
