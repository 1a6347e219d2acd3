"""Long-lived objects are kept out of full collections, and reclaimed on schedule."""

from __future__ import annotations

import asyncio
import gc
import weakref

from opolyx_service import ServiceRuntime, ServiceSettings
from opolyx_service.gc_policy import (
    YOUNG_GENERATION_OBJECTS,
    freeze_until_shutdown,
    keep_long_lived_objects_frozen,
)
from opolyx_service.settings import HttpSettings


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


async def test_frozen_garbage_waits_for_the_reclaim() -> None:
    node = Node()
    alive = weakref.ref(node)
    freezer = asyncio.create_task(keep_long_lived_objects_frozen(0.01, 3600))
    try:
        await asyncio.sleep(0.05)
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert alive() is not None  # frozen: a full pass does not see it
    finally:
        freezer.cancel()
        gc.unfreeze()
    gc.collect()
    assert alive() is None


async def test_the_reclaim_unfreezes_and_collects() -> None:
    node = Node()
    alive = weakref.ref(node)
    freezer = asyncio.create_task(keep_long_lived_objects_frozen(0.01, 0.05))
    try:
        await asyncio.sleep(0.03)
        del node
        for _ in range(100):
            if alive() is None:
                break
            await asyncio.sleep(0.01)
        assert alive() is None  # collected by the reclaim, nobody called gc.collect()
    finally:
        freezer.cancel()
        gc.unfreeze()


async def test_a_service_freezes_until_its_shutdown() -> None:
    """`freeze_until_shutdown` runs the policy for the runtime's life: objects are frozen
    while it serves, and its shutdown stops the freezing (nothing when it is off); with it
    the youngest generation is collected every `YOUNG_GENERATION_OBJECTS` allocations."""
    gc.unfreeze()
    threshold = gc.get_threshold()
    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=-1)))
    try:
        async with runtime:
            freeze_until_shutdown(runtime, 0, 600)  # off: nothing starts
            await asyncio.sleep(0.05)
            assert gc.get_freeze_count() == 0
            assert gc.get_threshold() == threshold
            freeze_until_shutdown(runtime, 0.01, 3600)
            await asyncio.sleep(0.05)
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold() == (YOUNG_GENERATION_OBJECTS, *threshold[1:])
        gc.unfreeze()
        await asyncio.sleep(0.05)
        assert gc.get_freeze_count() == 0  # stopped with the runtime: nothing froze again
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
