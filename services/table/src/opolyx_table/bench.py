"""Table-service benchmark on a real local nats-server (JetStream on disk).

    python -m opolyx_table.bench [--tables 200] [--seconds 10] [--idle 1000]

Starts a nats-server, one `opolyx-table` process and, as the baseline, a plain nats-py
responder process; then prints, next to the raw request-reply round trip measured in the
same run:
- one command at a time on one table: p50/p99 latency and the ratio to the raw round trip;
- many tables at once (bots answered by this process as fast as decisions come):
  commands per second, p50/p99;
- memory per idle table (service RSS growth over N freshly created tables / N).
Every command is durable when answered (events in JetStream, snapshot in KV).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.subjects import BOTS_DECIDE, BOTS_QUEUE, TABLE_CREATE
from opolyx_contracts.table import CreateTable, SeatSpec

ECHO_SUBJECT = "bench.echo"
PREFERENCE = ("buy", "roll", "pay", "pass", "decline", "jackpot_decline", "bus", "teleport")


def _scripts_dir() -> Path:
    return Path(sysconfig.get_path("scripts"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def nats_server(store: Path) -> Iterator[tuple[str, int]]:
    port = _free_port()
    process = subprocess.Popen(
        [str(_scripts_dir() / "nats-server"), "-js", "-a", "127.0.0.1", "-p", str(port),
         "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock, contextlib.suppress(OSError):
                sock.connect(("127.0.0.1", port))
                break
            time.sleep(0.02)
        yield f"nats://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def child(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env={**os.environ, **env}, stdout=out, stderr=out)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def serve_echo(url: str) -> None:
    nc = await nats.connect(url)

    async def echo(msg: Msg) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO_SUBJECT, cb=echo)
    await nc.flush()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await nc.drain()


async def raw_round_trips(nc: Client, count: int) -> list[float]:
    body = b'{"v":1,"command_id":"x","player_id":"p","command":{"type":"roll"}}'
    for _ in range(200):
        await nc.request(ECHO_SUBJECT, body, timeout=5)
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await nc.request(ECHO_SUBJECT, body, timeout=5)
        samples.append(time.perf_counter() - started)
    return samples


async def wait_for_service(nc: Client) -> None:
    deadline = time.monotonic() + 30
    bad = CreateTable(mode="no-such-mode", seats=[SeatSpec(player_id="a"), SeatSpec(player_id="b")])
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            await nc.request(TABLE_CREATE, bad.model_dump_json().encode(), timeout=1)
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("table service did not answer")


async def create(nc: Client, seats: list[SeatSpec], seed: int) -> dict[str, Any]:
    body = CreateTable(mode="classic", seats=seats, seed=seed).model_dump_json().encode()
    reply: dict[str, Any] = json.loads((await nc.request(TABLE_CREATE, body, timeout=10)).data)
    if not reply.get("ok"):
        raise RuntimeError(f"create failed: {reply}")
    return reply


class BotDriver:
    """Answers every decision request at once and times each command's round trip."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.latencies: list[float] = []
        self.errors = 0
        self.recording = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self.nc.subscribe(BOTS_DECIDE, queue=BOTS_QUEUE, cb=self._on_request)
        await self.nc.flush()

    async def _on_request(self, msg: Msg) -> None:
        task = asyncio.create_task(self._answer(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: Msg) -> None:
        # Plain JSON rather than the pydantic models: the client must not be the bottleneck.
        request: dict[str, Any] = orjson.loads(msg.data)
        legal = request["legal"]
        by_type = {str(c.get("type")): c for c in reversed(legal)}
        command = next((by_type[k] for k in PREFERENCE if k in by_type), None)
        if command is None:
            command = legal[0] if legal else None
        if command is None:
            return
        body = orjson.dumps(
            {
                "v": 1,
                "command_id": request["command_id"],
                "player_id": request["player_id"],
                "command": command,
                "expected_version": request["version"],
            }
        )
        started = time.perf_counter()
        try:
            reply = await self.nc.request(request["command_subject"], body, timeout=10)
        except Exception:
            self.errors += 1
            return
        elapsed = time.perf_counter() - started
        if not orjson.loads(reply.data).get("ok"):
            self.errors += 1
        elif self.recording:
            self.latencies.append(elapsed)


async def run(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="opolyx-table-bench-"))
    env = {"OPOLYX_LOG__LEVEL": "WARNING", "OPOLYX_HTTP__PORT": "-1"}
    with nats_server(workdir / "js") as (url, nats_pid):
        env["OPOLYX_NATS__URL"] = url
        echo_argv = [sys.executable, "-m", "opolyx_table.bench", "--echo", url]
        table_argv = [str(_scripts_dir() / "opolyx-table")]
        if args.profile:
            table_argv = [
                sys.executable, "-m", "cProfile", "-o", args.profile, "-m", "opolyx_table",
            ]  # fmt: skip
        with (
            child(echo_argv, env, workdir / "echo.log"),
            child(table_argv, env, workdir / "table.log") as table_process,
        ):
            nc = await nats.connect(url)
            await wait_for_service(nc)
            for _ in range(100):
                with contextlib.suppress(Exception):
                    await nc.request(ECHO_SUBJECT, b"", timeout=0.5)
                    break
                await asyncio.sleep(0.05)
            raw = await raw_round_trips(nc, args.samples)
            raw_p50 = statistics.median(raw)

            # Memory per idle table (human seats: nothing happens until a deadline).
            await asyncio.sleep(0.5)
            before = rss_kib(table_process.pid)
            for start in range(0, args.idle, 100):
                await asyncio.gather(
                    *(
                        create(nc, [SeatSpec(player_id=f"i{n}a"), SeatSpec(player_id=f"i{n}b")], n)
                        for n in range(start, min(args.idle, start + 100))
                    )
                )
            await asyncio.sleep(1.0)
            after = rss_kib(table_process.pid)

            driver = BotDriver(nc)
            await driver.start()
            # One table, one command in flight: latency of the durable path.
            driver.recording = True
            games = 0
            while len(driver.latencies) < args.samples:
                # A game can end before enough samples: then the next one starts.
                seen = len(driver.latencies)
                await asyncio.sleep(0.5)
                if len(driver.latencies) == seen:
                    games += 1
                    seats = [SeatSpec(player_id=f"g{games}b{i}", bot=True) for i in range(2)]
                    await create(nc, seats, games)
            driver.recording = False
            single = list(driver.latencies)
            await nc.drain()

            # Many tables: each answered as fast as its decisions come.
            nc = await nats.connect(url)
            driver = BotDriver(nc)
            await driver.start()
            await asyncio.gather(
                *(
                    create(nc, [SeatSpec(player_id=f"t{t}b{i}", bot=True) for i in range(4)], t)
                    for t in range(args.tables)
                )
            )
            await asyncio.sleep(1.0)
            driver.recording = True
            started = time.perf_counter()
            cpu_before = [cpu_seconds(p) for p in (table_process.pid, nats_pid, os.getpid())]
            await asyncio.sleep(args.seconds)
            cpu_after = [cpu_seconds(p) for p in (table_process.pid, nats_pid, os.getpid())]
            driver.recording = False
            elapsed = time.perf_counter() - started
            cpu_share = [
                (a - b) / elapsed * 100 for a, b in zip(cpu_after, cpu_before, strict=True)
            ]
            loaded = list(driver.latencies)
            errors = driver.errors
            await nc.drain()

    ms = 1000.0
    single_p50 = statistics.median(single)
    per_table_kb = (after - before) * 1024 / 1000 / max(1, args.idle)
    print("opolyx table-service benchmark (real nats-server, JetStream file storage)")
    print(f"  baseline raw nats-py request-reply, one at a time ({len(raw)} samples):")
    print(f"    p50 {raw_p50 * ms:.3f} ms   p99 {percentile(raw, 0.99) * ms:.3f} ms")
    print(f"  table command, one at a time on one table ({len(single)} samples):")
    print(
        f"    p50 {single_p50 * ms:.3f} ms   p99 {percentile(single, 0.99) * ms:.3f} ms   "
        f"ratio p50/raw p50 = {single_p50 / raw_p50:.2f}x   (target <= 3x)"
    )
    print(f"  table commands, {args.tables} tables at once for {elapsed:.1f} s:")
    print(
        f"    {len(loaded) / elapsed:,.0f} commands/s   (target >= 2,000)   "
        f"p50 {statistics.median(loaded) * ms:.3f} ms   p99 {percentile(loaded, 0.99) * ms:.3f} ms"
        f"   errors {errors}"
    )
    print(
        f"    CPU during the run: table service {cpu_share[0]:.0f}%, nats-server "
        f"{cpu_share[1]:.0f}%, this client (bots) {cpu_share[2]:.0f}%   (machine has "
        f"{os.cpu_count()} cores)"
    )
    print(
        f"  memory per idle table: {per_table_kb:.1f} KB over {args.idle} tables   (target < 50 KB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--echo", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--profile", metavar="FILE", help="cProfile the table service into FILE")
    args = parser.parse_args()
    if args.echo:
        asyncio.run(serve_echo(args.echo))
    else:
        # SIGTERM (e.g. a timeout) must still stop the child processes in `finally`.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
