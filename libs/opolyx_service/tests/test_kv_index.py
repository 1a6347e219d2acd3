"""`KeyValueIndex` against a real nats-server: what was stored before it started is there
when `start` returns, later writes and deletes arrive, an entry that does not parse counts as
absent, a late update never undoes a newer one, and a bucket made after the index started is
found."""

from __future__ import annotations

import asyncio

from nats.aio.client import Client
from nats.js.api import KeyValueConfig
from opolyx_service.kv_index import KeyValueIndex
from pydantic import BaseModel


class Item(BaseModel):
    name: str


async def until(check: object, seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)


async def test_start_waits_for_existing_entries_then_follows_changes(nc: Client) -> None:
    js = nc.jetstream()
    kv = await js.create_key_value(KeyValueConfig(bucket="items"))
    for n in range(50):
        await kv.put(f"k{n}", Item(name=f"item {n}").model_dump_json().encode())
    await kv.put("bad", b"{not json")
    changes: list[tuple[str, Item | None, Item | None]] = []
    index = KeyValueIndex(js, "items", Item, on_change=lambda *c: changes.append(c))
    await index.start(wait_seconds=5)
    try:
        assert len(index.values()) == 50  # every entry, at once, without the unreadable one
        assert index.get("k7") == Item(name="item 7")
        assert index.get("bad") is None

        await kv.put("k7", Item(name="renamed").model_dump_json().encode())
        await kv.delete("k8")
        await until(lambda: index.get("k7") == Item(name="renamed") and index.get("k8") is None)
        assert ("k8", Item(name="item 8"), None) in changes

        # An own write noted at a newer revision is not undone by an older update.
        revision = index.revision_of("k9")
        index.note("k9", Item(name="newer"), revision + 100)
        index.note("k9", Item(name="older"), revision + 1)
        assert index.get("k9") == Item(name="newer")
    finally:
        await index.stop()


async def test_a_bucket_made_after_the_index_started_is_found(nc: Client) -> None:
    js = nc.jetstream()
    index = KeyValueIndex(js, "later", Item)
    # The bucket does not exist yet: nothing was stored before, so there is nothing to wait for.
    await index.start(wait_seconds=5)
    try:
        kv = await js.create_key_value(KeyValueConfig(bucket="later"))
        await kv.put("a", Item(name="first").model_dump_json().encode())
        await until(lambda: index.get("a") is not None)
        assert index.kv is not None
    finally:
        await index.stop()
