"""Resuming a table (``table.watch`` with ``since``) costs the gateway what was missed, not
the game's length: far behind gets the state alone, near reads from the first missed batch
on (found in the shared stream among other tables' batches), and one socket re-watching in
a loop soon gets the state alone too. Real nats-server and JetStream; the tables store
their batches as the table service does."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway_builders import FakeTable, RunningGateway, WsClient, gateway_settings, serve_gateway
from opolyx_testing.http import metric_value
from opolyx_testing.nats_server import NatsServer


async def replay_reads(gw: RunningGateway) -> float:
    text = (await gw.http.get("/metrics")).text
    return metric_value(text, "opolyx_gateway_replay_reads_total") or 0.0


async def replayed_seqs(client: WsClient, table: str, count: int) -> list[int]:
    seqs: list[int] = []
    while len(seqs) < count:
        seqs += [e["seq"] for e in (await client.push("table.events", table=table))["events"]]
    return seqs


async def test_a_resume_beyond_the_limit_gets_the_state_not_the_stream(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t-far", [me, "bot-1"]).start()
    for _ in range(300):
        await table.act(seat=1)
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t-far", since=1)  # 300 behind
    assert watch["data"]["replayed"] == 0 and watch["data"]["seq"] == 301
    assert (await client.push("table.state", table="t-far"))["seq"] == 301
    assert not [p for p in client.pushes if p["type"] == "table.events"]
    assert await replay_reads(gateway) == 0


async def test_a_resume_reads_only_from_the_first_missed_batch(nats_server: NatsServer) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), replay_events_per_second=1e6)
    async with serve_gateway(settings, nats_server.url) as gateway:
        await _resume_reads_only_from_the_first_missed_batch(gateway)


async def _resume_reads_only_from_the_first_missed_batch(gateway: RunningGateway) -> None:
    token, me = await gateway.sign_in()
    mine = await FakeTable(gateway.nc, "t-mine", [me, "bot-1"]).start()
    other = await FakeTable(gateway.nc, "t-other", ["g-x", "bot-1"]).start()
    for n in range(200):  # the two tables' batches interleave in the one stream
        await mine.act(seat=1, events=1 + n % 3)
        await other.act(seat=1, events=1 + n % 2)
    last = mine.seq
    client = await gateway.client(token)
    for since in (last - 5, last - 1, last - 40, last - 255):
        before = await replay_reads(gateway)
        watch = await client.request("table.watch", table="t-mine", since=since)
        assert watch["data"]["replayed"] == last - since, (since, watch)
        assert await replayed_seqs(client, "t-mine", last - since) == list(
            range(since + 1, last + 1)
        )
        assert (await client.push("table.state", table="t-mine"))["seq"] == last
        batches = (last - since) / 2 + 2  # 2 events a batch on average
        reads = await replay_reads(gateway) - before
        # the search reads about log2(stream length) messages, then the batches missed
        assert 1 <= reads <= batches + 2 * 11 + 5, (since, reads)


async def test_re_watching_in_a_loop_soon_gets_the_state_alone(nats_server: NatsServer) -> None:
    settings = gateway_settings(
        nats_server.url_for("gateway"), replay_limit=10, replay_events_per_second=0.5
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, me = await gw.sign_in()
        table = await FakeTable(gw.nc, "t-loop", [me, "bot-1"]).start()
        await table.act(seat=1, events=9)
        attacker = await gw.client(token)
        first = await attacker.request("table.watch", table="t-loop", since=2)
        assert first["data"]["replayed"] == 8
        for _ in range(3):
            again = await attacker.request("table.watch", table="t-loop", since=2)
            assert again["ok"] and again["data"]["replayed"] == 0  # budget spent: the state
            assert again["data"]["seq"] == 10
        # another client has its own budget
        other = await gw.client(token)
        assert (await other.request("table.watch", table="t-loop", since=2))["data"][
            "replayed"
        ] == 8


async def test_a_resume_while_the_game_goes_on_misses_nothing_and_repeats_nothing(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "t-live", [me, "bot-1"]).start()
    for _ in range(60):
        await table.act(seat=1)
    watcher = await gateway.client((await gateway.sign_in("Watcher"))[0])
    await watcher.request("table.watch", table="t-live")
    await watcher.push("table.state", table="t-live")

    async def game_goes_on() -> None:
        for _ in range(40):
            await table.act(seat=1)
            await asyncio.sleep(0.005)

    playing = asyncio.create_task(game_goes_on())
    client = await gateway.client(token)
    watch = await client.request("table.watch", table="t-live", since=10)
    await playing
    seen: list[int] = []
    state_at: int | None = None
    while not seen or seen[-1] < table.seq:
        while not client.pushes:  # what came before the reply first, then what comes
            await client.receive()
        push: dict[str, Any] = client.pushes.pop(0)
        if push["type"] == "table.events":
            assert state_at is None, "a replayed event after the state"
            seen += [e["seq"] for e in push["events"]]
        elif push["type"] == "table.state":
            state_at = push["seq"]
            assert seen == list(range(11, state_at + 1))
        elif push["type"] == "table.update":
            assert state_at is not None, "an update before the state"
            seen += [e["seq"] for e in push["events"]]
    assert state_at is not None and watch["data"]["replayed"] == state_at - 10
    assert seen == list(range(11, table.seq + 1))  # in order, none missing, none twice
    # the other watcher was not held up: it saw every update
    updates: list[int] = []
    while not updates or updates[-1] < table.seq:
        updates += [e["seq"] for e in (await watcher.push("table.update"))["events"]]
    assert updates[0] > 1 and updates == list(range(updates[0], table.seq + 1))
