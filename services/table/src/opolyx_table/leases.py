"""Partition ownership through leases in the KV bucket `table_leases` (TTL).

Keys: `p.<n>` -> the owning instance id; `i.<instance>` -> presence of a live instance.
Every heartbeat an instance renews its keys with compare-and-set; a lease it fails to renew
is dropped at once. It then claims free partitions (create fails while a lease is live)
up to its fair share, ceil(partitions / live instances), and hands back one partition per
heartbeat while it holds more than that, so load spreads when instances join. A lease of
a dead instance expires after the TTL and is claimed by a live one.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import Awaitable, Callable

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from opolyx_service import get_logger

__all__ = ["PartitionLeases"]

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
        for partition, revision in list(self.owned.items()):
            try:
                self.owned[partition] = int(
                    await self._kv.update(f"p.{partition}", self._instance.encode(), last=revision)
                )
            except KeyWrongLastSequenceError:
                log.warning("lease_lost", partition=partition)
                del self.owned[partition]
                await self._on_lost(partition)

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
