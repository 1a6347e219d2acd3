"""Table-service benchmark: today's code beside the baseline's and beside raw NATS, one run.

    python -m opolyx_table.bench [--rounds 2] [--tables 200] [--active 1000] [--seconds 8]
    python -m opolyx_table.bench --baseline HEAD~1 --active 0   # a change against the commit before

`--baseline` picks the commit run beside today's code (default `bench/baseline.py`'s, the
one the targets are set against; with another, the ratios print and the targets judged
against the baseline's figures say "not judged").

Sides, each on a nats-server of its own (JetStream on disk), phases interleaved
(A B A B, never all of A then all of B):
- floor: a plain nats-py responder in its own process (raw request-reply round trip), on
  uvloop as every opolyx service runs (`ServiceSettings.event_loop`); beside it, as a
  reference, the same responder storing each request in a JetStream stream (file storage,
  the three headers a table's events write carries) before it replies: what a command's
  durability costs before any table work. The same responder on asyncio's own loop (nats-
  py's default) is timed too and printed: runs before this one used it as the floor, and
  its p50 was 1.06-1.18x the uvloop one's in the three runs that measured both;
- baseline: the table service of `bench/baseline.py`'s commit (a worktree, the same venv);
- current: today's table service.

Phases per side and round: one command at a time on one table (p50/p99; ratio to the floor
measured just before on the same server); `--tables` tables played by bots as fast as their
decisions come (commands/s; ratio to the baseline; the CPU of the service, nats-server and
the bots per command, and the rate each bounds). Once per side: memory per idle table
(service RSS growth over `--idle` new tables), and `--active` tables at full speed (lease
losses from the service's log, NoRespondersError and `service/busy` replies seen by the
bots). Every command is durable when answered. The bots are this process, answering with
plain JSON (not the pydantic models) so they are not the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import orjson
import uvloop
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from opolyx_contracts.subjects import BOTS_DECIDE, BOTS_QUEUE, TABLE_CREATE
from opolyx_contracts.table import CreateTable, SeatSpec
from opolyx_service import flush_in_order
from opolyx_service.direct import subscribe_direct
from opolyx_service.requests import Requests
from opolyx_testing.measuring import cpu_seconds, percentile, rss_bytes
from opolyx_testing.nats_server import nats_server_argv, wait_for_ports_file

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "bench"))

# bench/baseline.py: found through the path above (not a package of the workspace).
from baseline import (  # type: ignore[import-not-found,unused-ignore]  # noqa: E402
    BASELINE_COMMIT,
    baseline_env,
    current_env,
)

ECHO_SUBJECT = "bench.echo"
ECHO_ASYNCIO_SUBJECT = "bench.echo.asyncio"
DURABLE_SUBJECT = "bench.durable"
DURABLE_STREAM = "BENCH_DURABLE"
BUSY_ATTEMPTS = 50
COMMAND_TIMEOUT = 10.0
"""Seconds a bot waits for its command's reply before counting a timeout."""
PREFERENCE = ("buy", "roll", "pay", "pass", "decline", "jackpot_decline", "bus", "teleport")
TARGET_P50_TO_FLOOR = 2.0
TARGET_THROUGHPUT_TO_BASELINE = 2.0


@contextlib.contextmanager
def nats_server(store: Path) -> Iterator[tuple[str, int]]:
    """A nats-server of a side's own, on a free port: its URL (from its ports file) and pid."""
    store.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        nats_server_argv(store, store), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        url = wait_for_ports_file(process, store, 30)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def child(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=out)
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


async def serve_echo(url: str, loop: str) -> None:
    """The floor's responder on `loop`: on uvloop the floor and the durability reference,
    on asyncio's loop the echo alone (`ECHO_ASYNCIO_SUBJECT`)."""
    nc = await nats.connect(url)

    async def echo(msg: Msg) -> None:
        await msg.respond(msg.data)

    if loop == "asyncio":
        await nc.subscribe(ECHO_ASYNCIO_SUBJECT, cb=echo)
        await flush_in_order(nc)
        await _until_terminated(nc)
        return

    # The durability reference: one stored message per request, written as the table
    # writes its events (dedupe id, expected last sequence, expected stream), then a reply.
    js = nc.jetstream()
    await js.add_stream(name=DURABLE_STREAM, subjects=[f"{DURABLE_SUBJECT}.>"])
    written = {"count": 0, "last_seq": 0}

    async def durable(msg: Msg) -> None:
        written["count"] += 1
        ack = await js.publish(
            f"{DURABLE_SUBJECT}.t",
            msg.data,
            headers={
                "Nats-Msg-Id": f"t:{written['count']}",
                "Nats-Expected-Last-Subject-Sequence": str(written["last_seq"]),
                "Nats-Expected-Stream": DURABLE_STREAM,
            },
        )
        written["last_seq"] = ack.seq
        await msg.respond(b'{"v":1,"ok":true,"seq":1,"version":1,"events":1}')

    await nc.subscribe(ECHO_SUBJECT, cb=echo)
    await nc.subscribe(DURABLE_SUBJECT, cb=durable)
    await flush_in_order(nc)
    await _until_terminated(nc)


async def _until_terminated(nc: Client) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await nc.drain()


async def raw_round_trips(
    nc: Client, count: int, subjects: tuple[str, ...] = (ECHO_SUBJECT,)
) -> list[list[float]]:
    """Request-reply round trips to each of `subjects`, taking turns (one list each)."""
    body = b'{"v":1,"command_id":"x","player_id":"p","command":{"type":"roll"}}'
    for _ in range(100):
        for subject in subjects:
            await nc.request(subject, body, timeout=5)
    samples: list[list[float]] = [[] for _ in subjects]
    for _ in range(count):
        for subject, times in zip(subjects, samples, strict=True):
            started = time.perf_counter()
            await nc.request(subject, body, timeout=5)
            times.append(time.perf_counter() - started)
    return samples


async def wait_for_service(nc: Client) -> None:
    # Starting takes seconds on a quiet machine and over 30 s at a load of 19 (imports).
    deadline = time.monotonic() + 120
    bad = CreateTable(mode="no-such-mode", seats=[SeatSpec(player_id="a"), SeatSpec(player_id="b")])
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            await nc.request(TABLE_CREATE, bad.model_dump_json().encode(), timeout=1)
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("table service did not answer")


async def create(nc: Client, seats: list[SeatSpec], seed: int) -> None:
    body = CreateTable(mode="classic", seats=seats, seed=seed).model_dump_json().encode()
    for _ in range(100):
        reply: dict[str, Any] = orjson.loads(
            (await nc.request(TABLE_CREATE, body, timeout=20)).data
        )
        if reply.get("ok"):
            return
        await asyncio.sleep(0.05)  # a partition not owned yet
    raise RuntimeError(f"create failed: {reply}")


def decide(data: bytes) -> tuple[str, bytes] | None:
    """A bot's answer to a `DecisionRequest`: the subject and the body of its command, the
    bots' wire form exactly as they send it (plain JSON, no model: the client must not be
    the bottleneck); None when nothing is legal."""
    request: dict[str, Any] = orjson.loads(data)
    legal = request["legal"]
    by_type = {str(c.get("type")): c for c in reversed(legal)}
    command = next((by_type[k] for k in PREFERENCE if k in by_type), None)
    if command is None:
        command = legal[0] if legal else None
    if command is None:
        return None
    body = orjson.dumps(
        {
            "v": 1,
            "command_id": request["command_id"],
            "player_id": request["player_id"],
            "command": command,
            "expected_version": request["version"],
        }
    )
    return str(request["command_subject"]), body


def busy_backoff(attempt: int) -> float:
    """Seconds before a command answered `service/busy` is sent again (same command id)."""
    return random.uniform(0.005, 0.02) * (1 + attempt)


class BotDriver:
    """Answers every decision request at once and times each command's round trip; a
    `service/busy` answer is retried (same command id) after a short random backoff.

    One task per decision, each command sent with the gateway's requester (`Requests`):
    the one-command phase times a table's round trip with it, as a client awaits it."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.requests = Requests(nc)
        self.latencies: list[float] = []
        self.codes: Counter[str] = Counter()
        self.no_responders = 0
        self.timeouts = 0
        self.recording = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await subscribe_direct(self.nc, BOTS_DECIDE, self._on_request, queue=BOTS_QUEUE)
        await flush_in_order(self.nc)

    def _on_request(self, msg: Msg) -> None:
        task = asyncio.create_task(self._answer(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: Msg) -> None:
        decided = decide(msg.data)
        if decided is None:
            return
        subject, body = decided
        for attempt in range(BUSY_ATTEMPTS):
            started = time.perf_counter()
            try:
                reply = await self.requests.request(subject, body, timeout=COMMAND_TIMEOUT)
            except NoRespondersError:
                self.no_responders += 1
                return
            except Exception:
                self.timeouts += 1
                return
            if not self._busy(reply.data, time.perf_counter() - started):
                return
            await asyncio.sleep(busy_backoff(attempt))

    def _busy(self, reply: bytes, elapsed: float) -> bool:
        """Count a command's reply (its round trip, or its error code); True when it was
        `service/busy`: the command is to be sent again."""
        answer = orjson.loads(reply)
        if answer.get("ok"):
            if self.recording:
                self.latencies.append(elapsed)
            return False
        code = str(answer["error"]["code"])
        if self.recording:
            self.codes[code] += 1
        return code == "service/busy"


class FastBotDriver(BotDriver):
    """The bots of the full-speed phases: the same decisions, answers and retries as
    `BotDriver`, driven by callbacks instead (no task, coroutine or future per command:
    `Requests.send` hands each reply to the command's `_Waiting`).

    The bots share the machine's two cores with the service under test: on 200 tables the
    current side's bots took half a core (0.107 ms of CPU a command with `BotDriver`), and
    its table service ran at 85-88% of a core, not saturated, where the baseline's ran at
    94-95%. Cheaper bots leave that CPU to the service, which is what the phase measures;
    both sides get the same bots. Timing here stops in the reply's callback, one task wake-up
    sooner than `BotDriver`'s, so the loaded latencies are not comparable with runs before
    this one (their commands/s are)."""

    def __init__(self, nc: Client) -> None:
        super().__init__(nc)
        # Timeouts are only counted: looked for once a second, not every 50 ms.
        self.requests = Requests(nc, granularity=1.0)
        self._stopped = False

    async def start(self) -> None:
        await self.requests.open()
        await super().start()

    def stop(self) -> None:
        """No more commands, retries included, and no more timeouts counted (before the
        connection is drained)."""
        self._stopped = True

    def _on_request(self, msg: Msg) -> None:
        decided = decide(msg.data)
        if decided is not None:
            self._send(*decided, 0)

    def _send(self, subject: str, body: bytes, attempt: int) -> None:
        if not self._stopped:
            waiting = _Waiting(self, subject, body, attempt)
            self.requests.send(subject, body, waiting, timeout=COMMAND_TIMEOUT)

    def _on_reply(self, waiting: _Waiting, msg: Msg) -> None:
        elapsed = time.perf_counter() - waiting.started
        if msg.headers and msg.headers.get("Status") == "503":
            self.no_responders += 1
            return
        if self._busy(msg.data, elapsed) and waiting.attempt + 1 < BUSY_ATTEMPTS:
            asyncio.get_running_loop().call_later(
                busy_backoff(waiting.attempt),
                self._send,
                waiting.subject,
                waiting.body,
                waiting.attempt + 1,
            )

    def _on_timeout(self) -> None:
        if not self._stopped:
            self.timeouts += 1


class _Waiting:
    """One command of a `FastBotDriver` waiting for its reply (a `ReplyWaiter`: the
    requester calls one of its two methods, once)."""

    __slots__ = ("attempt", "body", "driver", "started", "subject")

    def __init__(self, driver: FastBotDriver, subject: str, body: bytes, attempt: int) -> None:
        self.driver = driver
        self.subject = subject
        self.body = body
        self.attempt = attempt
        self.started = time.perf_counter()

    def done(self) -> bool:
        return False

    def set_result(self, result: Msg, /) -> None:
        self.driver._on_reply(self, result)

    def set_exception(self, exception: BaseException, /) -> None:
        self.driver._on_timeout()


@dataclass
class Side:
    name: str
    env: dict[str, str]
    floor_p50: list[float] = field(default_factory=list)
    durable_p50: list[float] = field(default_factory=list)
    """The floor's responder storing each request in JetStream before it replies."""
    floor_asyncio_p50: list[float] = field(default_factory=list)
    """The floor's responder on asyncio's own loop (the floor of earlier runs)."""
    single: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)
    loaded_p50: list[float] = field(default_factory=list)
    loaded_p99: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    nats_cpu: list[float] = field(default_factory=list)
    driver_cpu: list[float] = field(default_factory=list)
    """This process's CPU (the bots) in the timed window, in cores."""
    cpu_per_command: list[float] = field(default_factory=list)
    """Table-service CPU seconds per command in the timed window: what a noisy machine
    (the service given less than a core) changes least."""
    busy: list[int] = field(default_factory=list)
    idle_kb: float | None = None
    active: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def side_processes(side: Side, workdir: Path, tag: str) -> Iterator[tuple[str, int, int]]:
    env = {**side.env, "OPOLYX_LOG__LEVEL": "WARNING", "OPOLYX_HTTP__PORT": "-1"}
    with nats_server(workdir / f"js-{tag}") as (url, nats_pid):
        env["OPOLYX_NATS__URL"] = url
        echo_argv = [sys.executable, "-m", "opolyx_table.bench", "--echo", url, "--loop"]
        table_argv = [sys.executable, "-m", "opolyx_table"]
        with (
            child([*echo_argv, "uvloop"], current_env(), workdir / f"echo-{tag}.log"),
            child([*echo_argv, "asyncio"], current_env(), workdir / f"echo-asyncio-{tag}.log"),
            child(table_argv, env, workdir / f"table-{tag}.log") as table,
        ):
            yield url, table.pid, nats_pid


async def measure_round(side: Side, args: argparse.Namespace, workdir: Path, index: int) -> None:
    tag = f"{side.name.split('@')[0]}-{index}"
    with side_processes(side, workdir, tag) as (url, table_pid, nats_pid):
        nc = await nats.connect(url)
        await wait_for_service(nc)
        for subject in (ECHO_SUBJECT, ECHO_ASYNCIO_SUBJECT):
            for _ in range(100):
                with contextlib.suppress(Exception):
                    await nc.request(subject, b"", timeout=0.5)
                    break
                await asyncio.sleep(0.05)
        plain, durable, on_asyncio = await raw_round_trips(
            nc, args.samples, (ECHO_SUBJECT, DURABLE_SUBJECT, ECHO_ASYNCIO_SUBJECT)
        )
        side.floor_p50.append(statistics.median(plain))
        side.durable_p50.append(statistics.median(durable))
        side.floor_asyncio_p50.append(statistics.median(on_asyncio))

        if index == 0 and args.idle > 0:
            # Memory per idle table (human seats: nothing happens for 75 s).
            await asyncio.sleep(0.5)
            before = rss_bytes(table_pid)
            for start in range(0, args.idle, 100):
                await asyncio.gather(
                    *(
                        create(nc, [SeatSpec(player_id=f"i{n}a"), SeatSpec(player_id=f"i{n}b")], n)
                        for n in range(start, min(args.idle, start + 100))
                    )
                )
            await asyncio.sleep(args.snapshot_settle)
            side.idle_kb = (rss_bytes(table_pid) - before) / 1000 / args.idle

        driver = BotDriver(nc)
        await driver.start()
        driver.recording = True
        games = 0
        while len(driver.latencies) < args.samples:
            seen = len(driver.latencies)
            await asyncio.sleep(0.3)
            if len(driver.latencies) == seen:  # a game ended (or none yet): start one
                games += 1
                seats = [SeatSpec(player_id=f"g{index}-{games}b{i}", bot=True) for i in range(2)]
                await create(nc, seats, 1000 * index + games)
        driver.recording = False
        side.single.append(statistics.median(driver.latencies))
        await nc.drain()

        nc = await nats.connect(url)
        driver = FastBotDriver(nc)
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
        cpu_before = cpu_seconds(table_pid), cpu_seconds(nats_pid), time.process_time()
        await asyncio.sleep(args.seconds)
        window = time.perf_counter() - started
        side.driver_cpu.append((time.process_time() - cpu_before[2]) / window)
        side.cpu.append((cpu_seconds(table_pid) - cpu_before[0]) / window)
        side.nats_cpu.append((cpu_seconds(nats_pid) - cpu_before[1]) / window)
        side.busy.append(driver.codes.get("service/busy", 0))
        driver.recording = False
        elapsed = time.perf_counter() - started
        side.throughput.append(len(driver.latencies) / elapsed)
        side.cpu_per_command.append(side.cpu[-1] / max(side.throughput[-1], 1e-9))
        side.loaded_p50.append(statistics.median(driver.latencies))
        side.loaded_p99.append(percentile(driver.latencies, 0.99))
        driver.stop()
        await nc.drain()


async def measure_active(side: Side, args: argparse.Namespace, workdir: Path) -> None:
    """`--active` tables at full speed: the service must stay in charge of its partitions."""
    tag = f"{side.name.split('@')[0]}-active"
    with side_processes(side, workdir, tag) as (url, _, _):
        nc = await nats.connect(url)
        await wait_for_service(nc)
        driver = FastBotDriver(nc)
        await driver.start()
        for start in range(0, args.active, 200):
            await asyncio.gather(
                *(
                    create(nc, [SeatSpec(player_id=f"a{t}b{i}", bot=True) for i in range(4)], t)
                    for t in range(start, min(args.active, start + 200))
                )
            )
        await asyncio.sleep(1.0)
        driver.recording = True
        started = time.perf_counter()
        await asyncio.sleep(args.seconds)
        elapsed = time.perf_counter() - started
        driver.recording = False
        log = (workdir / f"table-{tag}.log").read_text(errors="replace")
        side.active = {
            "commands_per_s": len(driver.latencies) / elapsed,
            "p99_ms": percentile(driver.latencies, 0.99) * 1000,
            "lease_losses": log.count("lease_lost"),
            "no_responders": driver.no_responders,
            "timeouts": driver.timeouts,
            "busy": driver.codes.get("service/busy", 0),
            "other_errors": sum(n for c, n in driver.codes.items() if c != "service/busy"),
            "codes": ", ".join(
                f"{code} {n}" for code, n in driver.codes.most_common(4) if code != "service/busy"
            ),
        }
        driver.stop()
        await nc.drain()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def report(
    sides: list[Side], args: argparse.Namespace, load: tuple[list[float], list[float]]
) -> None:
    base, current = sides

    def verdict(met: bool) -> str:
        if not args.judged:  # the target is set against BASELINE_COMMIT's figures
            return f"not judged against {base.name}"
        return "met" if met else "MISSED"

    print("opolyx table-service benchmark (real nats-server, JetStream file storage)")
    print(f"  sides interleaved over {args.rounds} rounds: {base.name} | {current.name}")
    print(f"  machine: {os.cpu_count()} cores; load average (1, 5, 15 min) at start "
          f"{load[0][0]:.2f} {load[0][1]:.2f} {load[0][2]:.2f}, at end "
          f"{load[1][0]:.2f} {load[1][1]:.2f} {load[1][2]:.2f}")  # fmt: skip
    floor = statistics.median([*base.floor_p50, *current.floor_p50])
    on_asyncio = statistics.median([*base.floor_asyncio_p50, *current.floor_asyncio_p50])
    print(
        f"  floor: raw nats-py request-reply p50 {_ms(floor)} on uvloop, the services' loop "
        f"(median of every round); on asyncio's own loop {_ms(on_asyncio)} = "
        f"{on_asyncio / floor:.2f}x, the floor of runs before this one"
    )
    durable = statistics.median([*base.durable_p50, *current.durable_p50])
    print(
        f"  durability reference: the floor's responder storing each request in JetStream "
        f"before it replies, p50 {_ms(durable)} = {durable / floor:.2f}x the floor; within "
        f"{TARGET_P50_TO_FLOOR:.0f}x the floor that leaves "
        f"{_ms(max(0.0, TARGET_P50_TO_FLOOR * floor - durable))} for a table's own work"
    )
    print("  one command at a time on one table, p50:")
    for side in sides:
        p50 = statistics.median(side.single)
        ratio = p50 / statistics.median(side.floor_p50)
        old_floor = p50 / statistics.median(side.floor_asyncio_p50)
        own = p50 - statistics.median(side.durable_p50)
        print(
            f"    {side.name:<20} {_ms(p50)}   {ratio:.2f}x the floor (same server, same "
            f"round; {old_floor:.2f}x the asyncio floor); beyond the durability reference "
            f"{_ms(own)}"
        )
    cur_ratio = statistics.median(current.single) / statistics.median(current.floor_p50)
    print(
        f"    current / baseline p50 = "
        f"{statistics.median(current.single) / statistics.median(base.single):.2f}x   "
        f"target current <= {TARGET_P50_TO_FLOOR:.0f}x the floor: "
        f"{'met' if cur_ratio <= TARGET_P50_TO_FLOOR else 'MISSED'}"
    )
    print(f"  {args.tables} tables played by bots at full speed for {args.seconds:.0f} s:")
    for side in sides:
        print(
            f"    {side.name:<20} {statistics.median(side.throughput):,.0f} commands/s   "
            f"p50 {_ms(statistics.median(side.loaded_p50))}   "
            f"p99 {_ms(statistics.median(side.loaded_p99))}   "
            f"CPU: table service {statistics.median(side.cpu) * 100:.0f}%, nats-server "
            f"{statistics.median(side.nats_cpu) * 100:.0f}%, bots "
            f"{statistics.median(side.driver_cpu) * 100:.0f}%   service/busy {sum(side.busy)}"
        )
    for side in sides:
        print(
            f"    {side.name:<20} table-service CPU per command "
            f"{_ms(statistics.median(side.cpu_per_command))}"
        )
    cpu_ratio = statistics.median(current.cpu_per_command) / statistics.median(base.cpu_per_command)
    print(f"    current / baseline CPU per command = {cpu_ratio:.2f}x")
    speedup = statistics.median(current.throughput) / statistics.median(base.throughput)
    print(
        f"    current / baseline = {speedup:.2f}x   target >= "
        f"{TARGET_THROUGHPUT_TO_BASELINE:.0f}x the baseline@{BASELINE_COMMIT}'s: "
        f"{verdict(speedup >= TARGET_THROUGHPUT_TO_BASELINE)}   "
        f"(rounds: {', '.join(f'{t:,.0f}' for t in current.throughput)} vs "
        f"{', '.join(f'{t:,.0f}' for t in base.throughput)})"
    )
    # The two sides of a round ran minutes apart at most: their ratio feels less of this
    # shared machine's drift (the same code's CPU per command varied up to 1.33x between
    # rounds of one run) than the ratio of the medians, on which the verdict stays.
    paired = [c / b for c, b in zip(current.throughput, base.throughput, strict=True)]
    print(
        f"    round by round (each side's round beside the other's): "
        f"{', '.join(f'{r:.2f}x' for r in paired)}; median {statistics.median(paired):.2f}x"
    )
    # The table service is one process: however idle the other core, it serves at most one
    # core's worth of commands; every process shares the machine's cores.
    base_rate = statistics.median(base.throughput)
    table_ms = statistics.median(current.cpu_per_command) * 1000
    whole_ms = sum(
        statistics.median(share) / statistics.median(current.throughput) * 1000
        for share in (current.cpu, current.nats_cpu, current.driver_cpu)
    )
    cores = os.cpu_count() or 1
    one_core, machine = 1000 / table_ms, 1000 * cores / whole_ms
    need = TARGET_THROUGHPUT_TO_BASELINE * base_rate
    print(
        f"    what bounds it: at {table_ms:.3f} ms one core serves current at most "
        f"{one_core:,.0f} commands/s ({one_core / base_rate:.2f}x the baseline's); with the "
        f"bots and nats-server, {whole_ms:.3f} ms per command over all processes, {cores} "
        f"cores at most {machine:,.0f} ({machine / base_rate:.2f}x). "
        f"{TARGET_THROUGHPUT_TO_BASELINE:.0f}x ({need:,.0f}/s) would need at most "
        f"{1000 / need:.3f} ms of the table's CPU per command and "
        f"{1000 * cores / need:.3f} ms over all processes"
    )
    print(f"  {args.active} active tables at full speed for {args.seconds:.0f} s:")
    for side in sides:
        a = side.active
        if not a:
            continue
        print(
            f"    {side.name:<20} {a['commands_per_s']:,.0f} commands/s  p99 {a['p99_ms']:.0f} ms"
            f"  lease losses {a['lease_losses']}  NoRespondersError {a['no_responders']}"
            f"  timeouts {a['timeouts']}  service/busy {a['busy']}  other errors "
            f"{a['other_errors']} ({a['codes'] or 'none'})"
        )
    a = current.active
    ok = a and a["lease_losses"] == 0 and a["no_responders"] == 0 and a["timeouts"] == 0
    active_verdict = "not run (--active 0)" if not a else "met" if ok else "MISSED"
    print(f"    target zero lease losses and zero NoRespondersError: {active_verdict}")
    print(f"  memory per idle table ({args.idle} tables):")
    for side in sides:
        idle = "not run (--idle 0)" if side.idle_kb is None else f"{side.idle_kb:.1f} KB"
        print(f"    {side.name:<20} {idle}")


async def run(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="opolyx-table-bench-"))
    sides = [
        Side(f"baseline@{args.baseline}", baseline_env(args.baseline)),
        Side("current", current_env()),
    ]
    load_start = list(os.getloadavg())
    for index in range(args.rounds):
        # A B, then B A: neither side always runs first.
        for side in sides if index % 2 == 0 else list(reversed(sides)):
            await measure_round(side, args, workdir, index)
    if args.active:
        for side in reversed(sides):
            await measure_active(side, args, workdir)
    report(sides, args, (load_start, list(os.getloadavg())))
    print(f"  logs: {workdir}")


def _short_commit(ref: str) -> str:
    """`ref` (a branch, `HEAD~1`, a hash) as the short hash its worktree is named by."""
    return subprocess.run(
        ["git", "rev-parse", "--short", ref], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--active", type=int, default=1000, help="0 skips the phase")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument(
        "--baseline",
        default=BASELINE_COMMIT,
        help="the commit run beside today's code (default: the one the targets are set "
        "against; give the commit before a change to measure that change)",
    )
    parser.add_argument("--snapshot-settle", type=float, default=3.0, help=argparse.SUPPRESS)
    parser.add_argument("--echo", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo and args.loop == "uvloop":
        uvloop.run(serve_echo(args.echo, args.loop))
    elif args.echo:
        asyncio.run(serve_echo(args.echo, "asyncio"))
    else:
        # SIGTERM (e.g. a timeout) must still stop the child processes in `finally`.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        args.baseline = _short_commit(args.baseline)
        args.judged = args.baseline == _short_commit(BASELINE_COMMIT)
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
