"""Partition ownership through leases in the KV bucket `table_leases` (TTL).

Keys: `p.<n>` -> the owning instance id; `i.<instance>` -> presence of a live instance.
Every heartbeat an instance renews its keys with compare-and-set; a lease it fails to renew
is dropped at once. It then claims free partitions (create fails while a lease is live)
up to its fair share, ceil(partitions / live instances), and hands back one partition per
heartbeat while it holds more than that, so load spreads when instances join. A lease of
a dead instance expires after the TTL and is claimed by a live one.

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
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from opolyx_contracts.subjects import TABLE_LEASES_BUCKET
from opolyx_service import ensure_kv, get_logger

__all__ = ["LeaseKeeper", "PartitionLeases"]

log = get_logger("opolyx_table.leases")


class PartitionLeases:
    def __init__(
        self,
        kv: KeyValue,
        instance_id: str,
        partitions: int,
        heartbeat: float,
        on_acquired: Callable[[int], Awaitable[None]],
        on_lost: Callable[[int], Awaitable[None]],
    ) -> None:
        self._kv = kv
        self._instance = instance_id
        self._partitions = partitions
        self._heartbeat = heartbeat
        self._on_acquired = on_acquired
        self._on_lost = on_lost
        self.owned: dict[int, int] = {}
        """partition -> revision of our lease entry."""
        self._presence_revision: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._renewed_at = 0.0
        self.rounds = 0
        """Completed heartbeat rounds (readiness waits for the first)."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="table-leases")

    async def stop(self, release: bool = True) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if release:
            for partition in sorted(self.owned):
                await self._release(partition)
            with contextlib.suppress(Exception):
                await self._kv.delete(f"i.{self._instance}")

    async def _run(self) -> None:
        while True:
            try:
                await self.heartbeat_once()
            except Exception as exc:
                log.warning("lease_round_failed", error=repr(exc))
            self.rounds += 1
            # Jitter keeps instances that start together from claiming in lockstep.
            await asyncio.sleep(self._heartbeat * random.uniform(0.8, 1.0))

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
                log.warning("lease_lost", partition=partition)
                del self.owned[partition]
                await self._on_lost(partition)
            elif isinstance(result, BaseException):
                log.warning("lease_renewal_failed", partition=partition, error=repr(result))
            else:
                self.owned[partition] = int(result)

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
        return max(1, sum(1 for key in keys if key.startswith("i.")))

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
    ) -> None:
        self._connect = connect
        self._instance = instance_id
        self._partitions = partitions
        self._ttl = lease_ttl
        self._heartbeat = heartbeat
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
        done = asyncio.run_coroutine_threadsafe(self._shutdown(release), loop)
        with contextlib.suppress(Exception):
            await asyncio.wrap_future(done)
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
        kv = await ensure_kv(
            self._nc.jetstream(timeout=5.0),
            TABLE_LEASES_BUCKET,
            ttl=self._ttl,
            replicas=self._replicas,
        )
        self._leases = PartitionLeases(
            kv,
            self._instance,
            self._partitions,
            self._heartbeat,
            lambda p: self._on_service_loop(self._on_acquired(p)),
            lambda p: self._on_service_loop(self._on_lost(p)),
        )
        self._leases.start()

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


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
