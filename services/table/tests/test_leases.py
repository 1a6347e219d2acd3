"""Partition leases on a real nats-server: a renewal that timed out here but went through
on the server is not a lost lease, and a dead peer (no responders) is taken over at once
while a live one keeps its partitions."""

from __future__ import annotations

from nats.aio.client import Client
from opolyx_contracts.subjects import TABLE_LEASES_BUCKET
from opolyx_service import ensure_kv
from opolyx_table.leases import PartitionLeases


async def _leases(
    nc: Client, instance: str, probe: object = None
) -> tuple[PartitionLeases, list[str]]:
    kv = await ensure_kv(nc.jetstream(), TABLE_LEASES_BUCKET, ttl=30)
    seen: list[str] = []

    async def acquired(p: int) -> None:
        seen.append(f"+{p}")

    async def lost(p: int) -> None:
        seen.append(f"-{p}")

    extra = {"probe": probe} if probe is not None else {}
    return PartitionLeases(kv, instance, 2, 10.0, acquired, lost, **extra), seen  # type: ignore[arg-type]


async def test_a_renewal_that_went_through_unseen_keeps_the_lease(nc: Client) -> None:
    leases, seen = await _leases(nc, "me")
    await leases.heartbeat_once()
    assert set(leases.owned) == {0, 1}
    kv = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)
    # Our own update, applied by the server while its answer was lost (a timeout here).
    await kv.put("p.0", b"me")
    await leases.heartbeat_once()
    assert set(leases.owned) == {0, 1} and "-0" not in seen
    # Someone else's value is a lost lease.
    await kv.put("p.1", b"other")
    await leases.heartbeat_once()
    assert 1 not in leases.owned and "-1" in seen


async def test_a_dead_peer_is_taken_over_and_a_live_one_is_not(nc: Client) -> None:
    kv = await ensure_kv(nc.jetstream(), TABLE_LEASES_BUCKET, ttl=30)
    await kv.put("i.dead", b"dead")
    await kv.put("i.live", b"live")
    await kv.create("p.0", b"dead")
    await kv.create("p.1", b"live")

    async def probe(instance: str) -> bool:
        return instance != "dead"

    leases, seen = await _leases(nc, "me", probe)
    await leases.heartbeat_once()  # learns the peers; nothing free to claim
    assert leases.owned == {}
    for peer in ("dead", "live"):
        if not await probe(peer):
            await leases.take_over(peer)
    await leases.heartbeat_once()
    assert set(leases.owned) == {0} and seen == ["+0"]
    assert (await kv.get("p.1")).value == b"live"
    assert leases.takeovers == 1
