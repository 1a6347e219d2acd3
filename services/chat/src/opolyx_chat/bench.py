"""Benchmark: chat delivery latency under table load, next to raw NATS publish-subscribe.

    python -m opolyx_chat.bench [--tables 100] [--members 6] [--rate 1.0] [--seconds 5]
                                [--rounds 3]

One nats-server (JetStream on disk, one user per role) and the real `opolyx-chat` process
(role chat). `--tables` started tables with `--members` humans each are written to the
lobby's `rooms` bucket; every member posts `--rate` messages a second, spread evenly
(100 x 6 x 1/s = 600 posts/s).

- chat (B): a gateway connection sends each post (request to `opolyx.chat.<t>.post`) with a
  request id, as the gateway sends every post; a second gateway connection follows
  `opolyx.chat.*.messages` as a gateway does. Latency is from the request's send to the
  message's arrival: moderation, the membership check, the request id's claim (a KV
  create), the JetStream write and the fan-out included.
- plain (C): the same posts without a request id (no claim): what the claim costs.
- raw (A): the same rate and payload size published on a core subject and received by a
  second connection: the floor NATS itself sets on this machine.

Phases alternate A B C A B C (`--rounds` of each, `--seconds` long); target: chat p99
under 50 ms. Prints p50/p95/p99 of every side, the ratios, what chat refused or lost, the
chat process's CPU per post on each chat side and the machine load (os.getloadavg) at start
and end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.chat import (
    ChatMutesQuery,
    ChatPost,
    RoomRecordView,
    channel_token,
)
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import RoomMember
from opolyx_contracts.subjects import (
    CHAT_MUTES,
    CHAT_STREAM_SUBJECTS,
    ROOMS_BUCKET,
    chat_post,
)
from opolyx_service import flush_in_order
from opolyx_service.connection import ensure_kv
from opolyx_testing.measuring import cpu_seconds, percentile
from opolyx_testing.nats_server import NatsServer, start_nats_server

RAW_SUBJECT = "bench.raw"


@contextlib.contextmanager
def chat_process(server: NatsServer, workdir: Path) -> Iterator[subprocess.Popen[bytes]]:
    exe = Path(sysconfig.get_path("scripts")) / "opolyx-chat"
    env = {
        **os.environ,
        **server.env_for("chat"),
        "OPOLYX_HTTP__PORT": "-1",
        "OPOLYX_CHAT__OPERATOR__PORT": "-1",
        "OPOLYX_LOG__LEVEL": "WARNING",
        # Each member posts at the bench's rate for many seconds in a row; the check still
        # runs on every post, only its limit is raised above what the bench sends.
        "OPOLYX_CHAT__RATE_COUNT": "1000",
    }
    with (workdir / "chat.log").open("wb") as log:
        process = subprocess.Popen([str(exe)], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


async def wait_until_answering(nc: Client) -> None:
    for _ in range(200):
        with contextlib.suppress(Exception):
            await nc.request(CHAT_MUTES, encode(ChatMutesQuery(player_id="x")), timeout=0.5)
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the chat service never answered")


async def write_tables(admin: Client, tables: int, members: int) -> list[tuple[str, list[str]]]:
    kv = await ensure_kv(admin.jetstream(), ROOMS_BUCKET)
    seated: list[tuple[str, list[str]]] = []
    for t in range(tables):
        players = [f"p{t}x{m}" for m in range(members)]
        room = RoomRecordView(
            room_id=f"r-{t}",
            public=True,
            creator=players[0],
            members=tuple(RoomMember(player_id=p, name=p) for p in players),
            status="started",
            table_id=f"t-{t}-a",
        )
        await kv.put(room.room_id, room.model_dump_json().encode())
        seated.append((channel_token("table", f"t-{t}-a"), players))
    return seated


class Phase:
    def __init__(self) -> None:
        self.sent: dict[str, float] = {}
        self.latencies: list[float] = []
        self.refused = 0
        self.codes: dict[str, int] = {}

    def refuse(self, code: str) -> None:
        self.refused += 1
        self.codes[code] = self.codes.get(code, 0) + 1


async def run_phase(
    kind: str,
    sender: Client,
    seated: list[tuple[str, list[str]]],
    rate: float,
    seconds: float,
    phase: Phase,
    counter: list[int],
) -> None:
    """Send every member's messages for `seconds`, evenly spread, without waiting on replies."""
    speakers = [(channel, player) for channel, players in seated for player in players]
    interval = 1.0 / (rate * len(speakers))
    pending: set[asyncio.Task[None]] = set()

    async def post(channel: str, player: str, tag: str) -> None:
        post = ChatPost(
            player_id=player,
            name=player,
            text=f"{tag} is my move now",
            request_id=f"bench-{tag}" if kind == "chat" else None,
        )
        body = encode(post)
        phase.sent[tag] = time.perf_counter()
        try:
            reply = await sender.request(chat_post(channel), body, timeout=5)
            if b'"ok":false' in reply.data:
                phase.refuse(json.loads(reply.data)["error"]["code"])
        except Exception as exc:
            phase.refuse(type(exc).__name__)

    start = time.perf_counter()
    n = 0
    while (now := time.perf_counter()) - start < seconds:
        due = start + n * interval
        if due > now:
            await asyncio.sleep(due - now)
        channel, player = speakers[n % len(speakers)]
        counter[0] += 1
        tag = f"m{counter[0]}"
        if kind == "raw":
            phase.sent[tag] = time.perf_counter()
            payload = json.dumps({"text": f"{tag} is my move now", "pad": "x" * 160}).encode()
            await sender.publish(RAW_SUBJECT, payload)
        else:
            task = asyncio.create_task(post(channel, player, tag))
            pending.add(task)
            task.add_done_callback(pending.discard)
        n += 1
    await asyncio.gather(*pending)
    await flush_in_order(sender)
    await asyncio.sleep(0.5)  # the last deliveries


def follower(phases: dict[str, Phase | None]) -> object:
    async def on_message(msg: Msg) -> None:
        arrived = time.perf_counter()
        phase = phases["current"]
        if phase is None:
            return
        text = json.loads(msg.data).get("text", "")
        sent = phase.sent.get(text.split(" ", 1)[0])
        if sent is not None:
            phase.latencies.append(arrived - sent)

    return on_message


def summary(name: str, phases: list[Phase]) -> tuple[float, float, float]:
    lat = [x * 1000 for p in phases for x in p.latencies]
    sent = sum(len(p.sent) for p in phases)
    refused = sum(p.refused for p in phases)
    codes: dict[str, int] = {}
    for p in phases:
        for code, n in p.codes.items():
            codes[code] = codes.get(code, 0) + n
    p50, p95, p99 = (percentile(lat, q) for q in (0.5, 0.95, 0.99))
    print(
        f"  {name:<5} delivered {len(lat):>6} of {sent:>6} (refused {refused}{codes or ''})"
        f"  p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  p99 {p99:7.2f} ms"
        f"  mean {statistics.fmean(lat) if lat else float('nan'):6.2f} ms"
    )
    return p50, p95, p99


async def main_async(args: argparse.Namespace) -> None:
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="chat-bench-") as tmp:
        workdir = Path(tmp)
        with start_nats_server(workdir / "nats", prefer_docker=False) as server:
            admin = await server.connect()
            seated = await write_tables(admin, args.tables, args.members)
            with chat_process(server, workdir) as process:
                gateway = await server.connect("gateway")
                follow = await server.connect("gateway")
                raw_in = await server.connect()
                await wait_until_answering(gateway)
                phases: dict[str, Phase | None] = {"current": None}
                cb = follower(phases)
                await follow.subscribe(CHAT_STREAM_SUBJECTS, cb=cb)  # type: ignore[arg-type]
                await raw_in.subscribe(RAW_SUBJECT, cb=cb)  # type: ignore[arg-type]
                await flush_in_order(follow)
                await flush_in_order(raw_in)
                counter = [0]
                # Warm-up (not counted): the first seconds of posting were seen to be slow.
                await asyncio.sleep(1.0)
                await run_phase("chat", gateway, seated, args.rate, args.warmup, Phase(), counter)
                results: dict[str, list[Phase]] = {"raw": [], "chat": [], "plain": []}
                posting_cpu = {"chat": 0.0, "plain": 0.0}
                nats_pid = server._process.pid if server._process is not None else None
                own_before = time.process_time()
                nats_before = cpu_seconds(nats_pid) if nats_pid else 0.0
                chat_time = 0.0
                for _ in range(args.rounds):
                    for kind, sender in (("raw", admin), ("chat", gateway), ("plain", gateway)):
                        phase = Phase()
                        phases["current"] = phase
                        began = time.perf_counter()
                        phase_cpu = cpu_seconds(process.pid)
                        await run_phase(
                            kind, sender, seated, args.rate, args.seconds, phase, counter
                        )
                        if kind != "raw":
                            posting_cpu[kind] += cpu_seconds(process.pid) - phase_cpu
                        if kind == "chat":
                            chat_time += time.perf_counter() - began
                        phases["current"] = None
                        results[kind].append(phase)
                own_cpu = time.process_time() - own_before
                nats_cpu = cpu_seconds(nats_pid) - nats_before if nats_pid else float("nan")
                total = chat_time * 3  # every side's phases together
                for nc in (gateway, follow, raw_in, admin):
                    await nc.drain()
    load_end = os.getloadavg()
    speakers = args.tables * args.members
    print(
        f"opolyx chat benchmark: {args.tables} tables x {args.members} members,"
        f" {args.rate:g} message/s each = {speakers * args.rate:g} posts/s;"
        f" {args.rounds} rounds of {args.seconds:g} s per side, interleaved raw chat plain ..."
    )
    for kind in ("raw", "chat", "plain"):
        rounds = [percentile([x * 1000 for x in p.latencies], 0.99) for p in results[kind]]
        print(f"  {kind:<5} p99 per round: " + ", ".join(f"{v:.1f} ms" for v in rounds))
    raw = summary("raw", results["raw"])
    chat = summary("chat", results["chat"])
    plain = summary("plain", results["plain"])
    print(
        f"  ratio chat/raw: p50 {chat[0] / raw[0]:.1f}x  p95 {chat[1] / raw[1]:.1f}x"
        f"  p99 {chat[2] / raw[2]:.1f}x"
    )
    print(f"  ratio chat/plain (the request id's claim): p50 {chat[0] / plain[0]:.2f}x")
    per_post = {
        kind: 1e6 * posting_cpu[kind] / max(1, sum(len(p.sent) for p in results[kind]))
        for kind in posting_cpu
    }
    print(
        f"  chat process CPU per post: with request ids {per_post['chat']:.0f} us, without"
        f" {per_post['plain']:.0f} us ({per_post['chat'] / per_post['plain']:.2f}x)"
    )
    print(
        f"  chat p99 {chat[2]:.1f} ms against a target of 50 ms:"
        f" {'met' if chat[2] < 50 else 'MISSED'}"
    )
    print(
        f"  CPU (% of one core): chat process {100 * posting_cpu['chat'] / chat_time:.0f}%"
        f" during chat phases; over all phases: nats-server {100 * nats_cpu / total:.0f}%,"
        f" this load generator {100 * own_cpu / total:.0f}%"
    )
    print(
        f"  load average at start {load_start[0]:.2f} / {load_start[1]:.2f},"
        f" at end {load_end[0]:.2f} / {load_end[1]:.2f} (cores: {os.cpu_count()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--rate", type=float, default=1.0, help="messages per member per second")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one phase")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of chat, not counted")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
