"""Snapshot writes on a real nats-server, as the table role (its permissions)."""

from __future__ import annotations

import pytest
from opolyx_table.store import Fenced, Storage, snapshot_key
from opolyx_testing.nats_server import NatsServer


async def test_a_snapshot_write_is_a_compare_and_set_on_its_revision(
    nats_server: NatsServer,
) -> None:
    nc = await nats_server.connect("table", name="store-test")
    try:
        storage = await Storage.open(nc, lease_ttl=2.0)
        key = snapshot_key(3, "t-store")
        first = await storage.create_snapshot(key, {"n": 1})
        second = await storage.write_snapshot(key, {"n": 2}, first)
        assert second > first
        assert await storage.read_snapshot(key) == ({"n": 2}, second)
        third = await storage.write_snapshot(key, {"n": 3, "seats": [1, 2]}, second)
        assert await storage.read_snapshot(key) == ({"n": 3, "seats": [1, 2]}, third)
        with pytest.raises(Fenced):
            await storage.write_snapshot(key, {"n": 4}, second)  # someone wrote since
        assert await storage.read_snapshot(key) == ({"n": 3, "seats": [1, 2]}, third)
        entry = await storage.tables.get(key)
        assert entry.revision == third, "the KV client reads the same revision"
    finally:
        await nc.drain()
