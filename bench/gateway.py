"""Gateway benchmark (issue 6): N websocket clients playing through the whole system on
loopback (gateway -> NATS -> table service -> JetStream -> gateway -> clients), next to a
bare websocket -> NATS request -> responder -> websocket round trip measured in the same run
with the same number of clients.

Every client is one seat of a two-seat Classic table created through `opolyx.table.create`;
it signs in over REST, opens a websocket, watches its table and answers each decision of its
seat (roll, buy, pay, ...) as soon as the pushed state says it is its turn. Latency is from
sending a `table.cmd` to its reply. Servers run in their own processes; the clients share
one process. Target: p99 under 50 ms with 500 connected clients on 2 cores.

    python bench/gateway.py [--clients 500] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

SCRIPTS = Path(sysconfig.get_path("scripts"))
TARGET_P99_MS = 50.0
ECHO_SUBJECT = "bench.echo"
DECISIONS = ("roll", "buy", "pay", "pass", "jackpot_decline", "bus", "teleport", "pay_bail")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ----------------------------------------------------------------- baseline server roles
async def run_echo_responder(nats_url: str) -> None:
    import nats

    nc = await nats.connect(nats_url)

    async def answer(msg: Any) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO_SUBJECT, cb=answer)
    await asyncio.Event().wait()


def run_bare_server(nats_url: str, port: int) -> None:
    """A websocket server that only forwards each message as a NATS request and relays
    the answer: the floor under any gateway."""
    import nats
    import uvicorn

    state: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    state["nc"] = await nats.connect(nats_url)
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await state["nc"].close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            reply = await state["nc"].request(ECHO_SUBJECT, message["text"].encode(), timeout=5)
            await send({"type": "websocket.send", "text": reply.data.decode()})

    uvicorn.run(app, host="127.0.0.1", port=port, ws="websockets-sansio", log_level="warning")


# ----------------------------------------------------------------- clients
class Figures:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0

    def summary(self, seconds: float) -> dict[str, float]:
        lat = sorted(self.latencies)
        if not lat:
            return {"per_second": 0.0, "p50_ms": float("nan"), "p99_ms": float("nan")}
        return {
            "per_second": len(lat) / seconds,
            "p50_ms": statistics.median(lat) * 1000,
            "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
        }


class Player:
    """One bench client: a seat at a table, answering its decisions."""

    def __init__(self, base: str, token: str, table: str) -> None:
        self.base = base
        self.token = token
        self.table = table
        self.state: dict[str, Any] | None = None
        self.changed = asyncio.Event()
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0

    async def request(self, ws: Any, kind: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = future
        await ws.send(json.dumps({"id": self.next_id, "type": kind, **fields}))
        return await future

    async def reader(self, ws: Any) -> None:
        async for text in ws:
            message = json.loads(text)
            if message["type"] == "reply":
                future = self.replies.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message)
            elif message["type"] == "table.state":
                self.state = message
                self.changed.set()

    def choose(self) -> dict[str, Any] | None:
        state = self.state
        if state is None or state["state"]["finished"]:
            return None
        pending = state["state"]["pending"]
        legal = state["legal"] or []
        if pending is None or pending["seat"] != state["seat"]:
            return None
        for kind in DECISIONS:
            for command in legal:
                if command["type"] == kind:
                    return dict(command)
        for kind in ("sell", "mortgage", "bankrupt"):  # a payment pause without the cash
            for command in legal:
                if command["type"] == kind:
                    return dict(command)
        return None

    async def loop(self, ws: Any, stop: float, figures: Figures, think: float) -> None:
        """Answer this seat's decisions until ``stop``, after ``think`` seconds (jittered)
        of thinking each; one command in flight at a time."""
        while time.perf_counter() < stop:
            command = self.choose()
            if command is not None and think:
                await asyncio.sleep(random.uniform(0.5, 1.5) * think)
                command = self.choose()
            if command is None:
                self.changed.clear()
                try:
                    await asyncio.wait_for(
                        self.changed.wait(), max(0.01, stop - time.perf_counter())
                    )
                except TimeoutError:
                    return
                continue
            seq = self.state["seq"] if self.state else 0
            t0 = time.perf_counter()
            reply = await self.request(ws, "table.cmd", table=self.table, command=command)
            if reply["ok"]:
                figures.latencies.append(time.perf_counter() - t0)
            else:
                figures.errors += 1
            # decide again only on the state after this command
            while self.state is not None and self.state["seq"] <= seq:
                self.changed.clear()
                try:
                    await asyncio.wait_for(self.changed.wait(), 5)
                except TimeoutError:
                    break


async def setup_players(base: str, nats_url: str, clients: int) -> list[Player]:
    import httpx
    import nats
    from opolyx_contracts import subjects
    from opolyx_contracts.table import CreateTable, SeatSpec

    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        sessions = []
        for i in range(clients):
            response = await http.post("/api/session", json={"name": f"Bench {i}"})
            sessions.append(response.json())
    nc = await nats.connect(nats_url)
    players = []
    for i in range(0, clients - clients % 2, 2):
        pair = sessions[i : i + 2]
        body = CreateTable(
            mode="classic",
            seats=[SeatSpec(player_id=s["player_id"], name=s["name"]) for s in pair],
            seed=i,
        )
        reply = json.loads(
            (
                await nc.request(subjects.TABLE_CREATE, body.model_dump_json().encode(), timeout=10)
            ).data
        )
        if not reply.get("ok"):
            raise RuntimeError(f"table creation failed: {reply}")
        players += [Player(base, s["token"], reply["table_id"]) for s in pair]
    await nc.close()
    return players


async def wait_http(port: int, path: str, proc: subprocess.Popen[bytes], name: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited early")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            await writer.drain()
            line = await reader.readline()
            writer.close()
            if b" 200 " in line:
                return
        except OSError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{name} not ready")


async def measure(clients: int, seconds: float, work: Any) -> tuple[dict[str, float], int]:
    figures = Figures()
    started = asyncio.Event()
    stop_holder: list[float] = []
    tasks = [asyncio.create_task(work(i, stop_holder, figures, started)) for i in range(clients)]
    await asyncio.sleep(min(5.0, 0.5 + clients * 0.01))  # every socket open and watching
    stop_holder.append(time.perf_counter() + seconds)
    started.set()
    await asyncio.gather(*tasks, return_exceptions=False)
    return figures.summary(seconds), figures.errors


async def main_async(clients: int, seconds: float, think: float) -> None:
    from opolyx_testing import start_nats_server

    procs: list[subprocess.Popen[bytes]] = []
    logs = Path(tempfile.mkdtemp(prefix="opolyx-gateway-bench-"))

    def spawn(argv: list[str], env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
        with (logs / f"{name}.log").open("ab") as out:
            proc = subprocess.Popen(
                argv, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
            )
        procs.append(proc)
        return proc

    with start_nats_server(logs / "nats") as server:
        url = server.url
        try:
            # baseline: bare websocket -> NATS -> responder -> websocket
            spawn([sys.executable, __file__, "--role", "echo", "--nats", url], {}, "echo")
            bare_port = free_port()
            bare = spawn(
                [
                    sys.executable,
                    __file__,
                    "--role",
                    "bare",
                    "--nats",
                    url,
                    "--port",
                    str(bare_port),
                ],
                {},
                "bare",
            )
            await asyncio.sleep(1.0)
            if bare.poll() is not None:
                raise RuntimeError("bare server exited")

            pace = [0.0]

            async def bare_work(
                _i: int, stop: list[float], figures: Figures, started: asyncio.Event
            ) -> None:
                import websockets

                async with websockets.connect(f"ws://127.0.0.1:{bare_port}/", max_size=None) as ws:
                    await started.wait()
                    end = stop[0]
                    if pace[0]:  # paced players do not all start at the same instant
                        await asyncio.sleep(random.uniform(0, 2 * pace[0]))
                    n = 0
                    while time.perf_counter() < end:
                        n += 1
                        t0 = time.perf_counter()
                        await ws.send(
                            json.dumps({"id": n, "type": "table.cmd", "command": {"type": "roll"}})
                        )
                        await ws.recv()
                        figures.latencies.append(time.perf_counter() - t0)
                        if pace[0]:  # half the players of two-seat tables act at once
                            await asyncio.sleep(random.uniform(0.5, 1.5) * 2 * pace[0])

            pace[0] = think
            baseline_paced, _ = await measure(clients, seconds, bare_work)
            pace[0] = 0.0
            baseline, _ = await measure(clients, seconds, bare_work)

            # the whole system
            common = {"OPOLYX_NATS__URL": url, "OPOLYX_LOG__LEVEL": "WARNING"}
            table_health = free_port()
            table = spawn(
                [str(SCRIPTS / "opolyx-table")],
                {**common, "OPOLYX_HTTP__PORT": str(table_health)},
                "table",
            )
            await wait_http(table_health, "/readyz", table, "table")
            gw_port = free_port()
            gateway = spawn(
                [str(SCRIPTS / "opolyx-gateway")],
                {
                    **common,
                    "OPOLYX_HTTP__PORT": str(gw_port),
                    "OPOLYX_GATEWAY__RATE_PER_SECOND": "1000",
                    "OPOLYX_GATEWAY__RATE_BURST": "1000",
                    "OPOLYX_GATEWAY__SIGN_INS_PER_MINUTE": "100000",
                },
                "gateway",
            )
            await wait_http(gw_port, "/readyz", gateway, "gateway")
            base = f"http://127.0.0.1:{gw_port}/"
            players = await setup_players(base, url, clients)

            async def play_work(
                i: int, stop: list[float], figures: Figures, started: asyncio.Event
            ) -> None:
                player = players[i]
                import websockets

                async with websockets.connect(
                    base.replace("http", "ws") + "ws", max_size=None
                ) as ws:
                    reader = asyncio.create_task(player.reader(ws))
                    try:
                        await player.request(ws, "hello", token=player.token)
                        await player.request(ws, "table.watch", table=player.table)
                        await started.wait()
                        await player.loop(ws, stop[0], figures, pace[0])
                    finally:
                        reader.cancel()

            pace[0] = think
            system_paced, errors_paced = await measure(len(players), seconds, play_work)
            pace[0] = 0.0
            cpu_before = {
                name: cpu_seconds(proc.pid)
                for name, proc in (("gateway", gateway), ("table", table))
            }
            system, errors = await measure(len(players), seconds, play_work)
            cpu = {
                name: cpu_seconds(proc.pid) - cpu_before[name]
                for name, proc in (("gateway", gateway), ("table", table))
            }
        finally:
            for proc in reversed(procs):
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def row(path: str, figures: dict[str, float]) -> str:
        return (
            f"{path:<60} {figures['per_second']:>8.0f} "
            f"{figures['p50_ms']:>8.2f} {figures['p99_ms']:>8.2f}"
        )

    print(f"gateway benchmark: {len(players)} websocket clients, {seconds:.0f} s per phase")
    header = f"{'path':<60} {'cmd/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    for title, bare_fig, sys_fig, refused in (
        (
            f"players thinking ~{think:g} s per decision (a live room's pace)",
            baseline_paced,
            system_paced,
            errors_paced,
        ),
        ("saturation: every client sends as soon as it can", baseline, system, errors),
    ):
        print(f"\n{title}\n{header}")
        print(row("baseline: bare websocket -> NATS -> responder -> websocket", bare_fig))
        print(row("opolyx: websocket -> gateway -> table (JetStream) -> reply", sys_fig))
        print(
            "ratio opolyx / baseline: "
            f"cmd/s {sys_fig['per_second'] / bare_fig['per_second']:.2f}x, "
            f"p50 {sys_fig['p50_ms'] / bare_fig['p50_ms']:.1f}x, "
            f"p99 {sys_fig['p99_ms'] / bare_fig['p99_ms']:.1f}x; refused commands: {refused}"
        )
    commands = system["per_second"] * seconds
    if commands:
        print(
            "CPU per command at saturation: "
            + ", ".join(f"{name} {1000 * used / commands:.2f} ms" for name, used in cpu.items())
        )
    verdict = "met" if system_paced["p99_ms"] < TARGET_P99_MS else "NOT met"
    print(
        f"\ntarget: p99 < {TARGET_P99_MS:.0f} ms with 500 connected clients (paced): {verdict} "
        f"(measured with {len(players)}; logs in {logs})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="opolyx gateway benchmark")
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0, help="per phase")
    parser.add_argument(
        "--think", type=float, default=1.0, help="seconds a paced player thinks per decision"
    )
    parser.add_argument("--role", choices=["bench", "echo", "bare"], default="bench")
    parser.add_argument("--nats", default="")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.role == "echo":
        asyncio.run(run_echo_responder(args.nats))
    elif args.role == "bare":
        run_bare_server(args.nats, args.port)
    else:
        asyncio.run(main_async(args.clients, args.seconds, args.think))


if __name__ == "__main__":
    main()
