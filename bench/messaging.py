"""What FastStream's typed handlers cost against plain nats-py on request-reply: the figure
behind "FastStream by default, plain nats-py only on a measured hot path" (opolyx_service).

One nats-server; in this process a responder and a requester, one request at a time, a
small contract-sized body. Side A: a plain nats-py subscription that parses the body with
the model and replies with encoded bytes (what the table and the gateway do). Side B: a
FastStream typed handler on the service skeleton's broker (`create_broker`: error replies,
tracing, Prometheus middlewares), body validated from the annotation, reply a model. Rounds
interleave A B A B; each prints the median round trip per side, then the ratio B/A and the
machine load.

Then the requester's side, on the plain responder: nats-py's `Client.request` against the
skeleton's `opolyx_service.requests.Requests` (one inbox, no timer per request), rounds
interleaved; the CPU time of this process per round trip (both ends of it: the responder's
share is the same on both sides, so the difference is the requester's) and the p50.

Last, the receiving side: a callback subscription (nats-py's queue and task per
subscription) against `opolyx_service.subscribe_direct` (handled as read), each counting
`--requests` messages another connection of this process publishes; the CPU time of this
process per message (the publisher's share is the same on both sides), rounds interleaved.

And the sending side: `Client.publish` against `opolyx_service.publishing.publish`, with no
headers and with a JetStream write's three, CPU per message of this process (nobody
subscribes: the server drops them), rounds interleaved.

    python bench/messaging.py [--rounds 6] [--requests 1500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import nats
from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.envelope import Message, OkReply
from opolyx_service import flush_in_order
from opolyx_service.broker import create_broker, start_broker
from opolyx_service.direct import subscribe_direct
from opolyx_service.publishing import publish
from opolyx_service.requests import Requests
from opolyx_service.settings import NatsSettings, ServiceSettings
from opolyx_testing import start_nats_server
from prometheus_client import CollectorRegistry
from pydantic import Field

PLAIN = "opolyx.bench.plain"
TYPED = "opolyx.bench.typed"
DELIVERED = "opolyx.bench.delivered"


class Ask(Message):
    command_id: str = Field(max_length=64)
    player_id: str = Field(max_length=64)
    amount: int


class Answer(OkReply):
    seq: int
    version: int


BODY = Ask(command_id="t-1:17:0", player_id="alice", amount=120).model_dump_json().encode()


async def plain_responder(nc: Client) -> None:
    async def on_request(msg: Msg) -> None:
        ask = Ask.model_validate_json(msg.data)
        await msg.respond(Answer(seq=ask.amount, version=1).model_dump_json().encode())

    await nc.subscribe(PLAIN, cb=on_request)
    await flush_in_order(nc)


def typed_broker(url: str) -> NatsBroker:
    broker = create_broker(
        ServiceSettings(service_name="bench", nats=NatsSettings(url=url)), CollectorRegistry()
    )

    @broker.subscriber(TYPED)
    async def on_request(ask: Ask) -> Answer:
        return Answer(seq=ask.amount, version=1)

    return broker


async def round_trip_us(nc: Client, subject: str, requests: int) -> float:
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        await nc.request(subject, BODY, timeout=5)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


async def requester_costs(requester: Client | Requests, requests: int) -> tuple[float, float]:
    """(CPU us per round trip of this process, p50 us) for `requests` requests in a row."""
    samples = []
    cpu = time.process_time()
    for _ in range(requests):
        started = time.perf_counter()
        await requester.request(PLAIN, BODY, timeout=5)
        samples.append(time.perf_counter() - started)
    cpu = time.process_time() - cpu
    return cpu / requests * 1e6, statistics.median(samples) * 1e6


async def compare_requesters(client: Client, rounds: int, requests: int) -> None:
    muxed = Requests(client)
    await requester_costs(client, 200)  # warm both paths up
    await requester_costs(muxed, 200)
    costs: dict[str, list[tuple[float, float]]] = {"Client.request": [], "Requests": []}
    for index in range(rounds):
        for name, requester in (("Client.request", client), ("Requests", muxed)):
            costs[name].append(await requester_costs(requester, requests))
        print(
            f"round {index + 1}: "
            + ", ".join(
                f"{n} {c[-1][0]:.0f} us CPU, p50 {c[-1][1]:.0f} us" for n, c in costs.items()
            )
        )
    cpu = {n: statistics.median(c[0] for c in v) for n, v in costs.items()}
    p50 = {n: statistics.median(c[1] for c in v) for n, v in costs.items()}
    print(
        f"requester CPU per round trip (this process, both ends): Client.request "
        f"{cpu['Client.request']:.0f} us, Requests {cpu['Requests']:.0f} us; ratio "
        f"{cpu['Requests'] / cpu['Client.request']:.2f}x; p50 {p50['Client.request']:.0f} vs "
        f"{p50['Requests']:.0f} us  (load average {os.getloadavg()})"
    )


async def delivery_cost(publisher: Client, subject: str, seen: list[int], messages: int) -> float:
    """CPU us of this process per message, `messages` published and all of them seen."""
    seen[0] = 0
    cpu = time.process_time()
    for index in range(messages):
        await publisher.publish(subject, BODY)
        if index % 100 == 99:
            await flush_in_order(publisher)  # bounded in flight: no slow-consumer drops
    while seen[0] < messages:
        await asyncio.sleep(0.001)
    return (time.process_time() - cpu) / messages * 1e6


async def compare_deliveries(url: str, rounds: int, messages: int) -> None:
    publisher = await nats.connect(url)
    receiver = await nats.connect(url)
    seen = {"callback": [0], "direct": [0]}

    async def count(msg: Msg) -> None:
        seen["callback"][0] += 1

    def count_now(msg: Msg) -> None:
        seen["direct"][0] += 1

    await receiver.subscribe(f"{DELIVERED}.callback", cb=count)
    await subscribe_direct(receiver, f"{DELIVERED}.direct", count_now)
    await flush_in_order(receiver)
    costs: dict[str, list[float]] = {"callback": [], "direct": []}
    try:
        for index in range(rounds):
            for name in ("callback", "direct") if index % 2 == 0 else ("direct", "callback"):
                subject = f"{DELIVERED}.{name}"
                costs[name].append(await delivery_cost(publisher, subject, seen[name], messages))
            print(
                f"round {index + 1}: "
                + ", ".join(f"{n} {c[-1]:.1f} us CPU per message" for n, c in costs.items())
            )
    finally:
        await publisher.drain()
        await receiver.drain()
    cpu = {n: statistics.median(v) for n, v in costs.items()}
    print(
        f"receiving CPU per message (this process, publisher included): callback subscription "
        f"{cpu['callback']:.1f} us, subscribe_direct {cpu['direct']:.1f} us; ratio "
        f"{cpu['direct'] / cpu['callback']:.2f}x  (load average {os.getloadavg()})"
    )


WRITE_HEADERS = {
    "Nats-Msg-Id": "t-1:17",
    "Nats-Expected-Last-Subject-Sequence": "1234",
    "Nats-Expected-Stream": "TABLE_EVENTS",
}


async def publish_cost(nc: Client, fast: bool, headers: bool, messages: int) -> float:
    """CPU us of this process per message, `messages` published one after the other."""
    sent = WRITE_HEADERS if headers else None
    cpu = time.process_time()
    for index in range(messages):
        if fast:
            await publish(nc, DELIVERED, BODY, headers=sent)
        else:
            await nc.publish(DELIVERED, BODY, headers=sent)
        if index % 100 == 99:
            await flush_in_order(nc)
    return (time.process_time() - cpu) / messages * 1e6


async def compare_publishers(url: str, rounds: int, messages: int) -> None:
    nc = await nats.connect(url)
    sides = [
        (f"{name}{' with headers' if headers else ''}", fast, headers)
        for headers in (False, True)
        for name, fast in (("Client.publish", False), ("publish", True))
    ]
    costs: dict[str, list[float]] = {name: [] for name, _, _ in sides}
    try:
        for index in range(rounds):
            for name, fast, headers in sides if index % 2 == 0 else reversed(sides):
                costs[name].append(await publish_cost(nc, fast, headers, messages))
            print(
                f"round {index + 1}: " + ", ".join(f"{n} {c[-1]:.2f} us" for n, c in costs.items())
            )
    finally:
        await nc.drain()
    cpu = {n: statistics.median(v) for n, v in costs.items()}
    print(
        "sending CPU per message (this process): "
        + ", ".join(f"{n} {c:.2f} us" for n, c in cpu.items())
        + f"; ratio publish / Client.publish {cpu['publish'] / cpu['Client.publish']:.2f}x, "
        f"with headers {cpu['publish with headers'] / cpu['Client.publish with headers']:.2f}x"
        f"  (load average {os.getloadavg()})"
    )


async def main(rounds: int, requests: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, start_nats_server(Path(tmp)) as server:
        responder = await nats.connect(server.url)
        await plain_responder(responder)
        broker = typed_broker(server.url)
        await start_broker(broker)
        client = await nats.connect(server.url)
        try:
            await round_trip_us(client, PLAIN, 200)  # warm both paths up
            await round_trip_us(client, TYPED, 200)
            plain: list[float] = []
            typed: list[float] = []
            for index in range(rounds):
                plain.append(await round_trip_us(client, PLAIN, requests))
                typed.append(await round_trip_us(client, TYPED, requests))
                print(f"round {index + 1}: plain {plain[-1]:.0f} us, faststream {typed[-1]:.0f} us")
            await compare_requesters(client, rounds, requests)
            await compare_deliveries(server.url, rounds, requests * 10)
            await compare_publishers(server.url, rounds, requests * 10)
        finally:
            await client.drain()
            await broker.stop()
            await responder.drain()
    a, b = statistics.median(plain), statistics.median(typed)
    print(
        f"request-reply p50, one at a time: plain nats-py {a:.0f} us, FastStream typed {b:.0f} us"
    )
    print(f"ratio FastStream / plain: {b / a:.2f}x  (load average {os.getloadavg()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=1500)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.requests))
