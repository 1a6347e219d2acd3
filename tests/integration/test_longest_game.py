"""The longest game: six seats to Classic's round limit (500 rounds, RULES.md R2) with a
trade in every turn, and every message it causes stays far below NATS's payload limit.

Real nats-server with authorization, the table service and the lobby as real processes.
Four humans and two bots sit down through the lobby; a driver plays every seat from the
table's live updates (a human seat's commands as the gateway sends them, a bot seat's as
a bot worker does) with a policy that buys what it can, never builds and trades cash
every turn (`opolyx_testing.trading_policy`), so nobody goes bankrupt and the game runs
to its limit. Every message on the server is measured (`PayloadMonitor`); at the end the
humans are free and can sit down in a new room.
"""

from __future__ import annotations

import asyncio
import os
import time

from nats.aio.client import Client
from opolyx_contracts.game import OfferClosed
from opolyx_contracts.table import SeatSpec
from opolyx_rules import get_mode
from opolyx_testing.chaos import start_service
from opolyx_testing.lobby_client import LobbyClient
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.payload_monitor import PayloadMonitor
from opolyx_testing.pytest_plugin import ServiceProcesses
from opolyx_testing.seat_driver import SeatDriver
from opolyx_testing.table_client import TableClient, check_contiguous
from opolyx_testing.trading_policy import TradingPolicy

MODE = "classic"
HUMANS = {"p-wanda": "Wanda", "p-xavi": "Xavi", "p-yusuf": "Yusuf", "p-zelda": "Zelda"}
BOTS = 2
MEASURED = (
    "table events",
    "table update",
    "decision request",
    "game finished",
    "lobby events",
    "lobby member events",
)
"""The kinds the game must have produced at least once (and measured)."""
HEADROOM = 8
"""Every message must stay below 1/HEADROOM of the server's max payload."""


async def seat_everyone(lobby: LobbyClient) -> str:
    """The humans fill a public room, its creator adds the bots and starts: the table id."""
    (creator, creator_name), *others = HUMANS.items()
    created = await lobby.ok(
        type="create", player_id=creator, name=creator_name, mode=MODE, seats=len(HUMANS) + BOTS
    )
    room_id = created["room"]["room_id"]
    for player, name in others:
        await lobby.ok(type="join", player_id=player, name=name, room_id=room_id)
    for _ in range(BOTS):
        await lobby.ok(type="add_bot", player_id=creator, room_id=room_id)
    started = await lobby.ok(type="start", player_id=creator, room_id=room_id)
    return str(started["table_id"])


async def test_the_longest_game_keeps_every_message_small_and_frees_the_players(
    service_processes: ServiceProcesses, nats_server: NatsServer, nc: Client
) -> None:
    monitor = await PayloadMonitor.start(nc)
    begun = time.monotonic()
    await asyncio.gather(
        start_service(service_processes, nats_server, "table"),
        start_service(service_processes, nats_server, "lobby"),
    )
    as_gateway = await nats_server.connect("gateway")
    as_bots = await nats_server.connect("bots")
    lobby = LobbyClient(as_gateway)
    try:
        table_id = await seat_everyone(lobby)
        humans = TableClient(as_gateway, retry_for=10)
        seats = [SeatSpec.model_validate(s) for s in (await humans.view(table_id))["seats"]]
        assert sorted(s.player_id for s in seats if not s.bot) == sorted(HUMANS)
        policy = TradingPolicy()
        driver = SeatDriver(
            table_id,
            seats,
            humans=humans,
            bots=TableClient(as_bots, retry_for=10),
            policy=policy.choose,
        )
        began = time.monotonic()
        final = await driver.play(watch=as_gateway, decisions=nc, timeout=270)
        ended = time.monotonic()
        finished = await TableClient(nc).wait_finished(table_id, timeout=30)
        freed = await lobby.wait_free(list(HUMANS), timeout=15)
        # Free means free: all four sit down together in a new room.
        (creator, creator_name), *others = HUMANS.items()
        again = await lobby.ok(
            type="create", player_id=creator, name=creator_name, mode=MODE, seats=len(HUMANS)
        )
        for player, name in others:
            await lobby.ok(
                type="join", player_id=player, name=name, room_id=again["room"]["room_id"]
            )
    finally:
        await monitor.stop()
        await as_gateway.close()
        await as_bots.close()
    batches = await TableClient(nc).read_events(table_id)
    checked = time.monotonic()

    trades = sum(
        1
        for batch in batches
        for record in batch.events
        if isinstance(record.event, OfferClosed) and record.event.how == "accepted"
    )
    events = check_contiguous(batches)
    print(
        f"\nlongest game: {finished.rounds} rounds, {events:,} events in {len(batches):,} "
        f"batches, {driver.commands:,} commands ({policy.trades:,} trades offered, {trades:,} "
        f"accepted), refused {dict(driver.refused)}, {driver.views_read} view reads; "
        f"set-up {began - begun:.1f} s, played {ended - began:.1f} s, end and checks "
        f"{checked - ended:.1f} s (load {os.getloadavg()[0]:.1f})\nlargest message of each kind "
        f"(max payload {monitor.max_payload:,} B):\n{monitor.report()}"
    )
    limit = get_mode(MODE).round_limit
    assert final["finished"] and finished.rounds == limit, "the game ended before its limit"
    assert not any(seat["out"] for seat in final["seats"]), "a seat went out"
    assert trades >= limit, "fewer trades than rounds"
    for player, mine in freed.items():
        assert mine["room"] is None and mine["table_id"] is None, (player, mine)
    for kind in MEASURED:
        largest = monitor.largest(kind)
        assert 0 < largest.size < monitor.max_payload // HEADROOM, (kind, largest)
    for kind, largest in monitor.largest_by_kind.items():
        assert largest.size < monitor.max_payload // HEADROOM, (kind, largest)
    if nats_server.is_local_process:
        assert nats_server.permission_violations() == []
