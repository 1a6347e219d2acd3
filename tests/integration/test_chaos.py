"""Chaos: a game goes on while its services are killed (-9) and restarted in turn.

Real nats-server (JetStream store kept across its restart), two table instances and two bot
workers as real processes, each as its own NATS role. The test is the human player of seat 0,
sending commands the way the gateway does (gateway role, a command id per command, resent
with the same id when unanswered). In turn: the owning table instance is killed, nats-server
is restarted, a bot worker is killed and restarted, the killed table instance comes back.
Then every acknowledged command must be in the table's events, in order, exactly once.

The takeover time after the kill and the stall after the NATS restart are printed for the
notes (stored event times: the first batch after the fault minus the fault's time); the
assertions are on behaviour only.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

from nats.aio.client import Client
from opolyx_contracts.game import parse_command
from opolyx_contracts.subjects import TABLE_LEASES_BUCKET, table_partition
from opolyx_contracts.table import SeatSpec
from opolyx_rules import awaiting, command_to_json, simple_policy, state_from_json
from opolyx_testing import ServiceProcess, script_path
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.table_client import TableClient, check_contiguous

HUMAN = "human-0"
QUIET = {"OPOLYX_LOG__LEVEL": "WARNING"}
THINK = 0.15
"""Seconds the player thinks before acting: the game must outlast the faults."""


@dataclass
class Player:
    """Seat 0, played by the test: acts whenever the table offers it something."""

    client: TableClient
    table_id: str
    acknowledged: list[str] = field(default_factory=list)
    sent: set[str] = field(default_factory=set)
    refused: int = 0
    stopped: bool = False

    async def play(self) -> None:
        while not self.stopped:
            try:
                view = await self.client.view(self.table_id, seat=0)
            except Exception:  # NATS restarting, no owner yet: ask again
                await asyncio.sleep(0.05)
                continue
            if not view.get("ok") or not view.get("legal") or view["state"].get("finished"):
                await asyncio.sleep(0.05)
                continue
            state = state_from_json(view["state"])
            if 0 not in awaiting(state):  # free actions only (build, offer): nothing to do
                await asyncio.sleep(0.05)
                continue
            await asyncio.sleep(THINK)
            command = parse_command(command_to_json(simple_policy(state, 0)))
            command_id = uuid.uuid4().hex
            self.sent.add(command_id)
            try:
                reply = await self.client.command(
                    self.table_id, HUMAN, command, command_id, expected_version=view["version"]
                )
            except Exception:  # unanswered after retrying: may or may not have been applied
                continue
            if reply.get("ok"):
                self.acknowledged.append(command_id)
            else:
                self.refused += 1  # e.g. a stale version: the state moved on


async def start_table(processes: ServiceProcesses, server: NatsServer, name: str) -> ServiceProcess:
    env = {**QUIET, **server.env_for("table"), "OPOLYX_INSTANCE_ID": name}
    process = processes.start([script_path("opolyx-table")], env, name=name)
    await process.wait_ready(60)
    return process


async def start_bots(processes: ServiceProcesses, server: NatsServer, name: str) -> ServiceProcess:
    process = processes.start(
        [script_path("opolyx-bots")], {**QUIET, **server.env_for("bots")}, name=name
    )
    await process.wait_ready(60)
    return process


async def owner_of(nc: Client, table_id: str) -> str:
    kv = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)
    entry = await kv.get(f"p.{table_partition(table_id)}")
    assert entry.value is not None
    return entry.value.decode()


async def first_batch_after(
    client: TableClient, table_id: str, moment: float, timeout: float = 30
) -> float:
    """Wall time of the first batch stored after `moment` (waits for one to exist)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            later = [b.at for b in await client.read_events(table_id) if b.at > moment]
        except Exception:
            later = []
        if later:
            return min(later)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no event stored within {timeout} s after the fault")


async def test_a_game_survives_killing_each_service_in_turn(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    tables = {name: await start_table(service_processes, nats_server, name) for name in ("a", "b")}
    workers = [await start_bots(service_processes, nats_server, f"bots{i}") for i in range(2)]
    as_gateway = await nats_server.connect(
        "gateway", reconnect_time_wait=0.1, max_reconnect_attempts=-1
    )
    client = TableClient(as_gateway, timeout=2.0, retry_for=20.0)
    seats = [SeatSpec(player_id=HUMAN)] + [
        SeatSpec(player_id=f"bot-{i}", bot=True) for i in range(1, 4)
    ]
    as_lobby = await nats_server.connect("lobby")
    try:  # the lobby creates tables (no seed: the table draws it)
        created = await TableClient(as_lobby).create("classic", seats)
    finally:
        await as_lobby.close()
    table_id = created.table_id
    player = Player(client, table_id)
    playing = asyncio.create_task(player.play())
    figures: dict[str, float] = {}
    try:
        await asyncio.sleep(2)
        # 1. kill -9 the owning table instance: the other one takes the table over.
        owner = await owner_of(nc, table_id)
        tables[owner].kill()
        killed_at = time.time()
        figures["takeover_s"] = await first_batch_after(client, table_id, killed_at) - killed_at
        assert await owner_of(nc, table_id) != owner
        await asyncio.sleep(1)

        # 2. restart nats-server (its JetStream store kept).
        nats_server.restart()
        back_at = time.time()
        figures["nats_stall_s"] = await first_batch_after(client, table_id, back_at) - back_at
        await asyncio.sleep(1)

        # 3. kill -9 a bot worker, start a new one.
        workers[0].kill()
        worker_killed_at = time.time()
        await first_batch_after(client, table_id, worker_killed_at)
        workers[0] = await start_bots(service_processes, nats_server, "bots-again")

        # 4. the killed table instance comes back; the game goes on.
        tables[owner] = await start_table(service_processes, nats_server, owner)
        await first_batch_after(client, table_id, time.time())
        acknowledged_before_end = len(player.acknowledged)
        await asyncio.sleep(1)
    except BaseException:
        print("FIGURES", figures, "acked", len(player.acknowledged), "refused", player.refused)
        print("VIEW", await TableClient(nc).view(table_id, seat=0))
        for p in (*tables.values(), *workers):
            print("LOG", p.name, p.log_tail(2500))
        raise
    finally:
        player.stopped = True
        await asyncio.wait_for(playing, 30)
        await as_gateway.close()
    print(
        f"\nchaos figures: takeover {figures.get('takeover_s', float('nan')):.2f} s "
        f"(target < 3 s), NATS-restart stall {figures.get('nats_stall_s', float('nan')):.2f} s "
        f"(target < 2 s); {len(player.acknowledged)} commands acknowledged, "
        f"{player.refused} refused"
    )

    batches = await TableClient(nc).read_events(table_id)
    check_contiguous(batches)
    applied = [b.command_id for b in batches if b.command_id in player.sent]
    assert acknowledged_before_end > 0
    assert len(applied) == len(set(applied)), "a command applied twice"
    # In order and each once: the acknowledged commands are a subsequence of what was
    # applied (a command unanswered after its retries may have been applied too).
    position = {command_id: i for i, command_id in enumerate(applied)}
    assert all(c in position for c in player.acknowledged), "an acknowledged command lost"
    order = [position[c] for c in player.acknowledged]
    assert order == sorted(order), "acknowledged commands out of order"
    assert set(applied) - set(player.acknowledged) <= player.sent - set(player.acknowledged)
