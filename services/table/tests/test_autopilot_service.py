"""The bots' own command subject, the bots' pace and the autopilot, in-process against a
real nats-server with the services' roles (the bots and gateway users of the server)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import opolyx_rules
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts import game
from opolyx_contracts.subjects import (
    BOTS_DECIDE,
    TABLE_CREATE,
    table_bot_command,
    table_command,
    table_seat,
)
from opolyx_contracts.table import (
    SEAT_NOT_AUTOMATED,
    AutopilotChanged,
    CreateTable,
    DecisionRequest,
    SeatPresence,
    SeatSpec,
    TableCommand,
    TableCreated,
    TableEvents,
)
from opolyx_service import flush_in_order
from opolyx_table import core, pace
from opolyx_table.instance import TableInstance
from opolyx_testing import NatsServer
from opolyx_testing.pytest_plugin import ConnectAs
from opolyx_testing.table_client import TableClient, simple_policy

StartTable = Callable[..., Awaitable[TableInstance]]


def first_to_act(seat: int, players: int = 2) -> int:
    """A seed whose classic game starts with `seat` on the move."""
    for seed in range(1, 500):
        state = opolyx_rules.new_game("classic", players, seed)
        if state.pending is not None and state.pending.seat == seat:
            return seed
    raise AssertionError("no such seed")


HUMAN = "ines"
SEATS = [SeatSpec(player_id=HUMAN), SeatSpec(player_id="bot-ada", bot=True)]


async def create(
    client: TableClient, seats: list[SeatSpec], seed: int, autopilot: bool = True
) -> str:
    body = CreateTable(mode="classic", seats=seats, seed=seed, autopilot=autopilot)
    reply = await client.request(TABLE_CREATE, body.model_dump_json().encode())
    return TableCreated.model_validate(reply).table_id


@pytest.fixture
async def bots_nc(connect_as: ConnectAs) -> Client:
    return await connect_as("bots")


@pytest.fixture
async def gateway_nc(connect_as: ConnectAs) -> Client:
    return await connect_as("gateway")


class Asks:
    """The decision requests the table publishes (as the bots' work queue would get them)."""

    def __init__(self) -> None:
        self.requests: list[DecisionRequest] = []
        self._new = asyncio.Event()

    async def on_msg(self, msg: Msg) -> None:
        self.requests.append(DecisionRequest.model_validate_json(msg.data))
        self._new.set()

    async def next_for(self, table_id: str, seat: int, timeout: float = 10) -> DecisionRequest:
        deadline = time.monotonic() + timeout
        while True:
            for request in self.requests:
                if request.table_id == table_id and request.seat == seat:
                    self.requests.remove(request)
                    return request
            self._new.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no decision request for seat {seat}")
            await asyncio.wait_for(self._new.wait(), left)


@pytest.fixture
async def asks(client_nc: Client) -> AsyncIterator[Asks]:
    found = Asks()
    sub = await client_nc.subscribe(BOTS_DECIDE, cb=found.on_msg)
    await flush_in_order(client_nc)
    yield found
    await sub.unsubscribe()


async def seat_message(nc: Client, table_id: str, **fields: object) -> dict[str, object]:
    body = SeatPresence(player_id=HUMAN, gateway="gw-a", **fields)  # type: ignore[arg-type]
    reply = await nc.request(table_seat(table_id), body.model_dump_json().encode(), timeout=5)
    decoded: dict[str, object] = json.loads(reply.data)
    return decoded


async def autopilot_events(client: TableClient, table_id: str) -> list[AutopilotChanged]:
    batches = await client.read_events(table_id)
    return [r.event for b in batches for r in b.events if isinstance(r.event, AutopilotChanged)]


def roll(player: str, command_id: str) -> bytes:
    return (
        TableCommand(command_id=command_id, player_id=player, command=game.Roll())
        .model_dump_json()
        .encode()
    )


async def test_bots_cannot_use_the_players_subject_nor_act_for_a_human_seat(
    start_table: StartTable, client: TableClient, nats_server: NatsServer, bots_nc: Client
) -> None:
    await start_table(bot_pace=0)
    table_id = await create(client, SEATS, first_to_act(0))
    before = await client.view(table_id)
    with pytest.raises(nats.errors.TimeoutError):
        await bots_nc.request(table_command(table_id), roll(HUMAN, "b1"), timeout=1)
    deadline = time.monotonic() + 5
    while ("bots", "Publish", table_command(table_id)) not in nats_server.permission_violations():
        assert time.monotonic() < deadline, nats_server.permission_violations()
        await asyncio.sleep(0.05)
    reply = json.loads(
        (await bots_nc.request(table_bot_command(table_id), roll(HUMAN, "b2"), timeout=5)).data
    )
    assert reply["ok"] is False and reply["error"]["code"] == SEAT_NOT_AUTOMATED
    after = await client.view(table_id)
    assert (after["seq"], after["state"]) == (before["seq"], before["state"])


async def test_a_player_never_acts_for_a_bot_seat(
    start_table: StartTable, client: TableClient, gateway_nc: Client
) -> None:
    await start_table(bot_pace=0)
    table_id = await create(client, SEATS, first_to_act(1))
    before = await client.view(table_id)
    reply = json.loads(
        (await gateway_nc.request(table_command(table_id), roll("bot-ada", "g1"), timeout=5)).data
    )
    assert reply["ok"] is False and reply["error"]["code"] == "seat/not_yours"
    assert (await client.view(table_id))["seq"] == before["seq"]


async def test_with_a_human_seated_the_bot_is_asked_after_its_think_time(
    start_table: StartTable, client: TableClient, asks: Asks
) -> None:
    instance = await start_table(bot_pace=1.0)
    table_id = await create(client, SEATS, first_to_act(1))
    request = await asks.next_for(table_id, 1)
    assert request.attempt == 1
    chosen = [d for t, s, d in instance.jobs.think_delays if (t, s) == (table_id, 1)]
    table = instance.partitions.tables[table_id]
    (decision,) = [d for d in core.decisions(table.state) if d.seat == 1]
    assert chosen == [pace.think_seconds(table, decision, 1.0)]
    assert chosen[0] > 0


async def test_with_only_bots_or_pace_zero_bots_are_asked_at_once(
    start_table: StartTable, client: TableClient, asks: Asks
) -> None:
    paced = await start_table(bot_pace=1.0)
    only_bots = [SeatSpec(player_id="bot-ada", bot=True), SeatSpec(player_id="bot-kemi", bot=True)]
    table_id = await create(client, only_bots, 7)
    await asks.next_for(table_id, opolyx_rules.new_game("classic", 2, 7).pending.seat)  # type: ignore[union-attr]
    assert not [t for t, _, _ in paced.jobs.think_delays if t == table_id]
    await paced.stop()
    unpaced = await start_table("t2", bot_pace=0)
    with_human = await create(client, SEATS, first_to_act(1))
    await asks.next_for(with_human, 1)
    assert not unpaced.jobs.think_delays


async def test_a_dropped_player_gets_the_autopilot_after_the_grace_and_the_seat_back_at_once(
    start_table: StartTable,
    client: TableClient,
    gateway_nc: Client,
    bots_nc: Client,
    asks: Asks,
) -> None:
    await start_table(bot_pace=0, autopilot_grace=0.3)
    table_id = await create(client, SEATS, first_to_act(0))
    here = await seat_message(gateway_nc, table_id, connected=True)
    assert here["ok"] and here["away"] is False and here["autopilot"] is False
    gone = await seat_message(gateway_nc, table_id, connected=False)
    assert gone["ok"] and gone["away"] is True and gone["autopilot"] is False
    # After the grace period the table asks the bots for the human seat...
    request = await asks.next_for(table_id, 0)
    assert request.command_subject == table_bot_command(table_id)
    assert (await client.view(table_id))["autopilot"] == [0]
    command = simple_policy(request)
    assert command is not None
    bots = TableClient(bots_nc)
    played = await bots.command(
        table_id, HUMAN, command, request.command_id, request.version, request.command_subject
    )
    assert played["ok"], played
    batches: list[TableEvents] = await client.read_events(table_id)
    by_autopilot = [b for b in batches if b.command_id == request.command_id]
    assert by_autopilot and all(r.autopilot for r in by_autopilot[0].events)
    assert [(e.on, e.reason) for e in await autopilot_events(client, table_id)] == [(True, "away")]
    # ...until the player is back: the seat is theirs at once.
    back = await seat_message(gateway_nc, table_id, connected=True)
    assert back["ok"] and back["autopilot"] is False and back["away"] is False
    refused = json.loads(
        (await bots_nc.request(table_bot_command(table_id), roll(HUMAN, "late"), timeout=5)).data
    )
    assert refused["error"]["code"] == SEAT_NOT_AUTOMATED
    assert [(e.on, e.reason) for e in await autopilot_events(client, table_id)] == [
        (True, "away"),
        (False, "back"),
    ]
    assert (await client.view(table_id))["autopilot"] == []


async def test_in_a_plain_room_a_drop_changes_nothing_but_a_player_may_choose_autopilot(
    start_table: StartTable, client: TableClient, gateway_nc: Client, asks: Asks
) -> None:
    await start_table(bot_pace=0, autopilot_grace=0.1)
    table_id = await create(client, SEATS, first_to_act(0), autopilot=False)
    gone = await seat_message(gateway_nc, table_id, connected=False)
    assert gone["away"] is True
    await asyncio.sleep(0.5)  # well past the grace period: still nobody plays the seat
    assert await autopilot_events(client, table_id) == []
    chosen = await seat_message(gateway_nc, table_id, autopilot=True)
    assert chosen["autopilot"] is True and chosen["chosen"] is True
    await asks.next_for(table_id, 0)
    stranger = SeatPresence(player_id="nobody", gateway="gw-a", autopilot=True)
    reply = json.loads(
        (
            await gateway_nc.request(
                table_seat(table_id), stranger.model_dump_json().encode(), timeout=5
            )
        ).data
    )
    assert reply["ok"] is False and reply["error"]["code"] == "seat/not_yours"
    released = await seat_message(gateway_nc, table_id, autopilot=False)
    assert released["autopilot"] is False
    assert [(e.on, e.reason) for e in await autopilot_events(client, table_id)] == [
        (True, "chosen"),
        (False, "released"),
    ]
