"""Can one client slow the gateway for everybody else? Ping p99 of well-behaved clients with
and without one attacking client, the two conditions interleaved (quiet, attack, attack,
quiet, ...) on one gateway process on loopback, nats-server with authorization.

The attacks (issue 10's finding 5), all from one signed-in player at once:
- re-watch: ``table.watch`` of a long table (8,669 stored events, as measured there) again
  and again, as soon as each reply is in, alternating ``since = seq - 999`` (far behind) and
  ``since = seq - 200`` (a replay within the limit);
- flood: pings at ``FLOOD_RATE`` a second (the issue's 1,000), reconnecting whenever it is
  cut off.

Other clients (``--watchers``) each send a ping every 100 ms and time its reply. The attacked
table is a stored history in TABLE_EVENTS with a stand-in answering its view (the gateway
reads both as it reads the table service's). ``--gateway-src`` runs another checkout's
gateway package (e.g. the code before a change) for comparison.

    python bench/gateway_attack.py [--watchers 50] [--seconds 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opolyx_service import flush_in_order

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gateway_clients import open_socket
from opolyx_testing.measuring import cpu_seconds
from opolyx_testing.ports import free_port

SCRIPTS = Path(sysconfig.get_path("scripts"))
TABLE = "attacked"
PING_EVERY = 0.1
FLOOD_RATE = 1000


@dataclass
class Phase:
    name: str
    rtts: list[float] = field(default_factory=list)
    cpu: float = 0.0
    seconds: float = 0.0
    attack: dict[str, int] = field(default_factory=dict)


class Attack:
    """The attacking player: a re-watching socket and a flooding one (a process of its own,
    so its busy loop delays no other client's clock)."""

    def __init__(self, url: str, token: str, last_seq: int) -> None:
        self.url, self.token, self.last_seq = url, token, last_seq
        self.on = True
        self.counts: dict[str, int] = {}

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    async def _signed_in(self) -> Any:
        ws = await open_socket(self.url)
        await ws.send(json.dumps({"id": 0, "type": "hello", "token": self.token}))
        while json.loads(await ws.recv()).get("type") != "reply":
            pass
        return ws

    async def rewatch(self) -> None:
        n = 0
        while True:
            if not self.on:
                await asyncio.sleep(0.05)
                continue
            try:
                ws = await self._signed_in()
                while self.on:
                    n += 1
                    since = self.last_seq - (999 if n % 2 else 200)
                    await ws.send(
                        json.dumps({"id": n, "type": "table.watch", "table": TABLE, "since": since})
                    )
                    while True:
                        message = json.loads(await ws.recv())
                        if message["type"] == "reply" and message["id"] == n:
                            break
                        if message["type"] == "table.events":
                            self.count("events_pushes")
                    if message["ok"]:
                        replayed = message["data"]["replayed"]
                        self.count("replays" if replayed else "snapshots")
                    else:
                        self.count(message["error"]["code"])
                await ws.close()
            except Exception:  # cut off: come back
                self.count("rewatch_closed")

    async def flood(self) -> None:
        while True:
            if not self.on:
                await asyncio.sleep(0.05)
                continue
            try:
                ws = await self._signed_in()

                async def drain(socket: Any) -> None:
                    with contextlib.suppress(Exception):
                        async for _ in socket:
                            self.count("flood_replies")

                reader = asyncio.create_task(drain(ws))
                n = 0
                while self.on and not reader.done():
                    n += 1
                    await ws.send(f'{{"id": {n}, "type": "ping"}}')
                    if n % 50 == 0:  # in bursts of 50, paced to FLOOD_RATE
                        await asyncio.sleep(50 / FLOOD_RATE)
                reader.cancel()
                await ws.close()
            except Exception:
                pass
            self.count("flood_closed")
            await asyncio.sleep(0.05)


async def run_attacker(url: str, token: str, last_seq: int, seconds: float) -> None:
    attack = Attack(url, token, last_seq)
    tasks = [asyncio.create_task(attack.rewatch()), asyncio.create_task(attack.flood())]
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    attack.counts["cpu_ms"] = int(cpu_seconds(os.getpid()) * 1000)
    print(json.dumps(attack.counts), flush=True)


async def pinger(url: str, token: str, phase: list[Phase | None]) -> None:
    ws = await open_socket(url)
    await ws.send(json.dumps({"id": 0, "type": "hello", "token": token}))
    await ws.recv()
    await asyncio.sleep(random.uniform(0, PING_EVERY))
    n = 0
    while True:
        n += 1
        started = time.perf_counter()
        await ws.send(json.dumps({"id": n, "type": "ping"}))
        while json.loads(await ws.recv()).get("id") != n:
            pass
        current = phase[0]
        if current is not None:
            current.rtts.append(time.perf_counter() - started)
        await asyncio.sleep(PING_EVERY)


async def store_history(nc: Any, events: int) -> int:
    """The attacked table's stored batches (three events each) and a stand-in for its view."""
    from opolyx_contracts import subjects
    from opolyx_contracts.game import TurnStarted
    from opolyx_contracts.table import (
        EventRecord,
        PublicView,
        SeatSpec,
        TableEvents,
        TableView,
        event_message_id,
    )
    from opolyx_rules import new_game, public_view
    from opolyx_service.connection import ensure_stream

    js = nc.jetstream()
    await ensure_stream(js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
    seq = 0
    while seq < events:
        first = seq + 1
        records = [
            EventRecord(
                seq=first + i, version=first + i, event=TurnStarted(seat=0, round=1, deadline=75.0)
            )
            for i in range(min(3, events - seq))
        ]
        seq += len(records)
        batch = TableEvents(
            table_id=TABLE,
            source="rules",
            first_seq=first,
            last_seq=seq,
            version=seq,
            events=records,
            at=time.time(),
        )
        await js.publish(
            subjects.table_events(TABLE),
            batch.model_dump_json().encode(),
            headers={"Nats-Msg-Id": event_message_id(TABLE, first)},
        )
    state = PublicView.model_validate(public_view(new_game("classic", 2, 7)))
    view = TableView(
        table_id=TABLE,
        seq=seq,
        version=seq,
        state=state,
        seats=[SeatSpec(player_id="g-a", name="A"), SeatSpec(player_id="g-b", name="B")],
        legal=None,
        seed_commitment="0" * 64,
        deadline_at=None,
    ).model_dump_json()

    async def answer(msg: Any) -> None:
        await msg.respond(view.encode())

    await nc.subscribe(subjects.table_view(TABLE), cb=answer)
    await flush_in_order(nc)
    return seq


async def wait_ready(port: int, proc: subprocess.Popen[bytes]) -> None:
    import httpx

    async with httpx.AsyncClient() as http:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError("the gateway exited early")
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(f"http://127.0.0.1:{port}/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise RuntimeError("the gateway did not become ready")


async def bench(args: argparse.Namespace) -> None:
    import httpx
    from opolyx_testing.nats_server import start_nats_server

    logs = Path(tempfile.mkdtemp(prefix="opolyx-attack-bench-"))
    with start_nats_server(logs / "nats", prefer_docker=False) as server:
        port = free_port()
        env = {
            **os.environ,
            **server.env_for("gateway"),
            "OPOLYX_HTTP__PORT": str(port),
            "OPOLYX_LOG__LEVEL": "WARNING",
            "OPOLYX_GATEWAY__SIGN_INS_PER_MINUTE": "10000",  # the bench signs in from one address
            # and opens every socket from it (sides without the cap ignore the setting)
            "OPOLYX_GATEWAY__MAX_SOCKETS_PER_ADDRESS": "100000",
        }
        if args.gateway_src:
            env["PYTHONPATH"] = os.pathsep.join(
                [args.gateway_src, *filter(None, [os.environ.get("PYTHONPATH")])]
            )
        with (logs / "gateway.log").open("ab") as out:
            gateway = subprocess.Popen(
                [str(SCRIPTS / "opolyx-gateway")], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        try:
            await wait_ready(port, gateway)
            admin = await server.connect()
            last_seq = await store_history(admin, args.events)
            url = f"ws://127.0.0.1:{port}/ws"
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                tokens = []
                for i in range(args.watchers + 1):
                    response = await http.post("/api/session", json={"name": f"Bench {i}"})
                    tokens.append(response.json()["token"])
            current: list[Phase | None] = [None]
            tasks = [asyncio.create_task(pinger(url, t, current)) for t in tokens[1:]]
            await asyncio.sleep(2)  # warm up
            phases: list[Phase] = []
            for r in range(args.rounds):
                order = ("quiet", "attack") if r % 2 == 0 else ("attack", "quiet")
                for name in order:
                    phase = Phase(name)
                    attacker = None
                    if name == "attack":
                        attacker = await asyncio.create_subprocess_exec(
                            sys.executable,
                            __file__,
                            "--attacker",
                            json.dumps([url, tokens[0], last_seq, args.seconds + 1.0]),
                            stdout=asyncio.subprocess.PIPE,
                        )
                    await asyncio.sleep(0.5)  # the attack under way first
                    cpu, started = cpu_seconds(gateway.pid), time.perf_counter()
                    current[0] = phase
                    await asyncio.sleep(args.seconds)
                    current[0] = None
                    phase.cpu = cpu_seconds(gateway.pid) - cpu
                    phase.seconds = time.perf_counter() - started
                    if attacker is not None:
                        attack_output, _ = await attacker.communicate()
                        phase.attack = json.loads(attack_output.decode().strip().splitlines()[-1])
                        await asyncio.sleep(0.5)  # its sockets gone
                    phases.append(phase)
                    print(f"  round {r + 1} {name:6s} {summary(phase)}", flush=True)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await admin.close()
            report(args, phases, last_seq)
        finally:
            gateway.terminate()
            gateway.wait(10)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


def summary(phase: Phase) -> str:
    ms = [v * 1000 for v in phase.rtts]
    return (
        f"pings {len(ms):5d}  p50 {statistics.median(ms):6.1f} ms  p99 {p99(ms):7.1f} ms  "
        f"gateway CPU {phase.cpu / phase.seconds:4.0%}  attack {phase.attack}"
    )


def report(args: argparse.Namespace, phases: list[Phase], last_seq: int) -> None:
    print(
        f"\ngateway under attack: {args.watchers} clients pinging every {PING_EVERY * 1000:.0f} ms;"
        f" one player re-watching a {last_seq}-event table (since seq-999 / seq-200) and"
        f" flooding; {args.rounds} rounds of {args.seconds:.0f} s per side, interleaved"
    )
    for name in ("quiet", "attack"):
        rtts = [v * 1000 for p in phases if p.name == name for v in p.rtts]
        per_round = [p99([v * 1000 for v in p.rtts]) for p in phases if p.name == name]
        cpu = sum(p.cpu for p in phases if p.name == name)
        seconds = sum(p.seconds for p in phases if p.name == name)
        print(
            f"  {name:6s}  p50 {statistics.median(rtts):6.1f} ms  p99 {p99(rtts):7.1f} ms"
            f"  (rounds: {', '.join(f'{v:.1f}' for v in per_round)})"
            f"  gateway CPU {cpu / seconds:.0%}"
        )
    quiet = p99([v for p in phases if p.name == "quiet" for v in p.rtts])
    attacked = p99([v for p in phases if p.name == "attack" for v in p.rtts])
    load = os.getloadavg()
    print(f"  ping p99 attack / quiet: {attacked / quiet:.2f}x")
    print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    if args.gateway_src:
        print(f"  gateway package from {args.gateway_src}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=8669)
    parser.add_argument("--gateway-src", default=None, help="a gateway src/ dir to run instead")
    parser.add_argument("--attacker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        asyncio.run(run_attacker(*json.loads(args.attacker)))
    else:
        asyncio.run(bench(args))


if __name__ == "__main__":
    main()
