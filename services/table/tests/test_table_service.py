"""The table service in-process against a real nats-server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts import game
from opolyx_contracts.subjects import (
    TABLE_COMMANDS_ANY,
    TABLE_CREATE,
    table_bot_command,
    table_command,
    table_partition,
    table_update,
)
from opolyx_contracts.table import SeatSpec, TableCommand, TableEvents, TableUpdate
from opolyx_service import configure_tracing, flush_in_order
from opolyx_table.instance import TableInstance
from opolyx_table.jobs import CommandJob
from opolyx_table.results import replay_lines
from opolyx_table.settings import TableConfig
from opolyx_table.store import Storage
from opolyx_testing import NatsServer, script_path
from opolyx_testing.table_client import BotSeats, TableClient, check_contiguous
from prometheus_client import generate_latest

StartTable = Callable[..., Awaitable[TableInstance]]


def _humans(n: int) -> list[SeatSpec]:
    return [SeatSpec(player_id=f"p{i}") for i in range(n)]


async def test_a_created_table_publishes_its_creation_with_a_seed_commitment(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table()
    created = await client.create("classic", _humans(2), seed=987654321987)
    batches = await client.read_events(created.table_id)
    assert check_contiguous(batches) == 1
    event = batches[0].events[0].event
    assert event.type == "table_created"
    assert event.seed_commitment == created.seed_commitment
    assert "987654321987" not in batches[0].model_dump_json()


def _bots(n: int) -> list[SeatSpec]:
    return [SeatSpec(player_id=f"bot{i}", bot=True) for i in range(n)]


async def test_four_bots_play_a_blitz_game_to_the_end(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    started = time.monotonic()
    async with BotSeats(client_nc, client) as bots:
        created = await client.create("blitz", _bots(4), seed=11)
        finished = await client.wait_finished(created.table_id, timeout=60)
    batches = await client.read_events(created.table_id)
    last = check_contiguous(batches)
    print("blitz game", time.monotonic() - started, "s", bots.answered, "answers", last, "events")
    assert finished.last_seq == last
    assert batches[-1].events[-1].event.type == "seed_revealed"
    assert finished.seed == 11
    assert not bots.refused
    by_place = sorted(finished.seats, key=lambda result: result.place)
    assert [r.seat for r in by_place] == finished.placement
    assert by_place[0].seat == finished.winner
    assert finished.rounds >= 20, "blitz plays to its round limit of 25 unless all but one fall"
    assert by_place[0].xp is not None and by_place[0].xp >= 200
    assert all(r.net_worth >= r.cash for r in finished.seats if r.survived)


async def _current(client: TableClient, table_id: str) -> dict[str, Any]:
    view = await client.view(table_id)
    assert view["ok"], view
    return view


async def test_a_resent_command_id_returns_the_first_answer_and_applies_once(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table()
    created = await client.create("classic", _humans(2), seed=5)
    view = await _current(client, created.table_id)
    seat = view["state"]["pending"]["seat"]
    player = f"p{seat}"
    first = await client.command(created.table_id, player, {"type": "roll"}, "cmd-1")
    again = await client.command(created.table_id, player, {"type": "roll"}, "cmd-1")
    assert first["ok"], first
    assert again == first
    batches = await client.read_events(created.table_id)
    assert [b.command_id for b in batches].count("cmd-1") == 1
    assert check_contiguous(batches) == first["seq"]


async def test_concurrent_clients_on_one_table_are_applied_one_at_a_time(
    start_table: StartTable, client: TableClient, nats_url: str
) -> None:
    await start_table()
    created = await client.create("classic", _humans(2), seed=6)
    view = await _current(client, created.table_id)
    seat = view["state"]["pending"]["seat"]
    clients = [TableClient(await nats.connect(nats_url)) for _ in range(4)]
    try:
        replies = await asyncio.gather(
            *(
                c.command(created.table_id, f"p{seat}", {"type": "roll"}, f"race-{i}-{j}")
                for i, c in enumerate(clients)
                for j in range(5)
            )
        )
    finally:
        for c in clients:
            await c.nc.drain()
    accepted = [r for r in replies if r["ok"]]
    refused = [r for r in replies if not r["ok"]]
    batches = await client.read_events(created.table_id)
    applied = [b.command_id for b in batches if b.command_id]
    assert len(accepted) == len(applied) >= 1
    assert all(r["error"]["code"] and r["error"]["message"] for r in refused)
    assert len(set(r["seq"] for r in accepted)) == len(accepted)
    assert check_contiguous(batches) == max(r["seq"] for r in accepted)


async def test_bad_input_gets_a_clear_error_and_changes_nothing(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    created = await client.create("classic", _humans(2), seed=8)
    before = await _current(client, created.table_id)
    seat = before["state"]["pending"]["seat"]
    other = 1 - seat
    subject = table_command(created.table_id)

    async def raw(body: bytes, to: str = subject) -> dict[str, Any]:
        reply = await client_nc.request(to, body, timeout=3)
        return dict(json.loads(reply.data))

    async def hostile(player: str, command: dict[str, Any]) -> dict[str, Any]:
        """A command no honest client can build (the contract refuses it)."""
        body = {"v": 1, "command_id": uuid.uuid4().hex, "player_id": player, "command": command}
        return await raw(json.dumps(body).encode())

    cases: list[tuple[dict[str, Any], str]] = [
        (await raw(b"{not json"), "request/malformed_json"),
        (await raw(b"[]"), "request/malformed_json"),
        (await raw(b'{"v": 1, "player_id": "p0"}'), "request/invalid"),
        (await raw(b'{"v": 9, "command_id": "x", "player_id": "p0", "command": {}}'),
         "request/unsupported_version"),
        (await hostile(f"p{seat}", {"type": "fly"}), "request/invalid"),
        (await hostile(f"p{seat}", {}), "request/invalid"),
        (await hostile(f"p{seat}", {"type": "roll", "padding": "x" * 5000}), "request/invalid"),
        (await hostile(f"p{seat}", {"type": "roll", "extra": 1}), "request/invalid"),
        (await hostile(f"p{seat}", {"type": "roll", "seat": "0"}), "request/invalid"),
        (await client.command(created.table_id, f"p{seat}", {"type": "roll", "seat": other}, "c3"),
         "seat/not_yours"),
        (await client.command(created.table_id, "stranger", {"type": "roll"}, "c4"),
         "seat/not_yours"),
        (await client.command(created.table_id, f"p{other}", {"type": "roll"}, "c5"), "*"),
        (await client.command(created.table_id, f"p{seat}", {"type": "timeout"}, "c6"),
         "command/not_allowed"),
        (await client.command(created.table_id, f"p{seat}", {"type": "roll"}, "c7",
                              expected_version=before["version"] - 1), "command/stale_version"),
        (await client.command("no-such-table", "p0", {"type": "roll"}, "c8"), "table/not_found"),
        (await hostile(f"p{seat}", {"type": "build", "square": "x"}), "request/invalid"),
    ]  # fmt: skip
    for reply, code in cases:
        assert reply["ok"] is False, reply
        assert set(reply["error"]) == {"code", "message"}
        assert reply["error"]["message"]
        if code != "*":
            assert reply["error"]["code"] == code, reply
    after = await _current(client, created.table_id)
    assert after["version"] == before["version"]
    assert after["state"] == before["state"]
    ok = await client.command(created.table_id, f"p{seat}", {"type": "roll"}, "good")
    assert ok["ok"], ok


async def test_create_with_bad_input_is_refused(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    for body in (
        b"nope",
        b'{"v": 1, "mode": "classic", "seats": [{"player_id": "a"}]}',
        b'{"v": 1, "mode": "chess", "seats": [{"player_id": "a"}, {"player_id": "b"}]}',
    ):
        reply = json.loads((await client_nc.request(TABLE_CREATE, body, timeout=3)).data)
        assert reply["ok"] is False
        assert reply["error"]["code"] and reply["error"]["message"]


async def test_creating_twice_with_one_table_id_gives_the_same_table(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table()
    table_id = uuid.uuid4().hex
    first = await client.create("classic", _humans(2), seed=1, table_id=table_id)
    second = await client.create("classic", _humans(2), seed=2, table_id=table_id)
    assert first == second
    assert check_contiguous(await client.read_events(table_id)) == 1


async def test_nothing_players_receive_contains_the_seed_or_rng(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    seed = 7_777_777_777_777_777
    requests: list[bytes] = []

    async def listen(msg: Any) -> None:
        requests.append(msg.data)

    sub = await client_nc.subscribe("opolyx.bots.decide", cb=listen)
    await flush_in_order(client_nc)
    created = await client.create("classic", [*_humans(1), *_bots(1)], seed=seed)
    bots_subject = table_bot_command(created.table_id)
    view = await _current(client, created.table_id)
    for _ in range(12):
        seat = view["state"]["pending"]["seat"]
        legal = (await client.view(created.table_id, seat))["legal"]
        choice = next(c for c in legal if c["type"] not in ("resign", "bankrupt"))
        player, subject = ("p0", None) if seat == 0 else ("bot0", bots_subject)
        await client.command(created.table_id, player, choice, uuid.uuid4().hex, subject=subject)
        view = await _current(client, created.table_id)
    await sub.unsubscribe()
    published = [b.model_dump_json() for b in await client.read_events(created.table_id)]
    for text in [*published, json.dumps(view), *(r.decode() for r in requests)]:
        assert str(seed) not in text
        assert '"rng"' not in text
    assert requests, "the bot seat was asked to decide"


async def test_timers_fire_from_the_state_and_idle_seats_are_resigned(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table(clock_rate=500.0)
    created = await client.create("blitz", _humans(2), seed=3)
    finished = await client.wait_finished(created.table_id, timeout=20)
    batches = await client.read_events(created.table_id)
    check_contiguous(batches)
    timeouts = [b for b in batches if b.command and b.command.type == "timeout"]
    assert timeouts, "deadlines fired"
    assert all(b.command_id is None for b in timeouts)
    assert finished.winner is not None
    losers = [result.seat for result in finished.seats if not result.survived]
    outs = await client.seats_out(created.table_id)
    assert sorted(out.seat for out in outs) == sorted(losers) and losers
    assert {out.reason for out in outs} == {"timeout"}


async def test_a_silent_bot_seat_is_asked_again(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table(bot_reask=0.2)
    asked: list[dict[str, Any]] = []

    async def ignore(msg: Any) -> None:
        asked.append(json.loads(msg.data))

    sub = await client_nc.subscribe("opolyx.bots.decide", queue="bots", cb=ignore)
    created = await client.create("classic", _bots(2), seed=4)
    await asyncio.sleep(0.7)
    await sub.unsubscribe()
    mine = [a for a in asked if a["table_id"] == created.table_id]
    assert len(mine) >= 3
    assert {a["version"] for a in mine} == {mine[0]["version"]}
    assert [a["attempt"] for a in mine[:3]] == [1, 2, 3]
    assert len({a["command_id"] for a in mine}) == len(mine)


async def test_the_revealed_seed_and_commands_replay_to_the_same_events(
    start_table: StartTable, client: TableClient, client_nc: Client, tmp_path: Path
) -> None:
    await start_table(clock_rate=50.0)
    async with BotSeats(client_nc, client):
        created = await client.create("blitz", [*_bots(3), *_humans(1)], seed=2024)
        finished = await client.wait_finished(created.table_id, timeout=60)
    assert hashlib.sha256(str(finished.seed).encode()).hexdigest() == created.seed_commitment
    scenario = tmp_path / "game.jsonl"
    # game.finished names the stored events; they and the seed replay the game.
    assert finished.events is not None
    batches = await client.read_events(created.table_id)
    js = client_nc.jetstream()
    first = await js.get_msg(finished.events.stream, finished.events.first_stream_seq)
    last = await js.get_msg(finished.events.stream, finished.events.last_stream_seq)
    assert TableEvents.model_validate_json(first.data or b"") == batches[0]
    assert TableEvents.model_validate_json(last.data or b"") == batches[-1]
    assert finished.replay == [], "the replay itself is not in the message"
    assert len(finished.model_dump_json()) < 4096, "its size does not grow with the game"
    lines = replay_lines("blitz", [*_bots(3), *_humans(1)], finished.seed, batches)
    scenario.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    replayed = subprocess.run(
        [script_path("opolyx-rules"), "replay", str(scenario)],
        capture_output=True,
        check=True,
        text=True,
    )
    result = json.loads(replayed.stdout)
    stored = [
        record.event.model_dump(mode="json")
        for batch in await client.read_events(created.table_id)
        if batch.source == "rules"
        for record in batch.events
    ]
    assert result["errors"] == []
    assert result["events"] == stored
    assert result["state"]["finished"] is True


async def _play(client: TableClient, table_id: str, commands: int, prefix: str) -> dict[str, Any]:
    """Play `commands` commands for whoever must act; returns the last reply."""
    reply: dict[str, Any] = {}
    for n in range(commands):
        view = await _current(client, table_id)
        seat = view["state"]["pending"]["seat"]
        legal = (await client.view(table_id, seat))["legal"]
        choice = next(c for c in legal if c["type"] not in ("resign", "bankrupt"))
        reply = await client.command(table_id, f"p{seat}", choice, f"{prefix}-{n}")
        assert reply["ok"], reply
    return reply


async def _snapshot(client_nc: Client, table_id: str) -> tuple[str, Any]:
    kv = await client_nc.jetstream().key_value("tables")
    key = f"{table_partition(table_id)}.{table_id}"
    return key, await kv.get(key)


async def test_a_snapshot_behind_its_events_is_caught_up_on_takeover(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    first = await start_table("first")
    created = await client.create("classic", _humans(2), seed=12)
    await _play(client, created.table_id, 3, "early")
    key, old = await _snapshot(client_nc, created.table_id)
    last = await _play(client, created.table_id, 4, "late")
    before = await _current(client, created.table_id)
    await first.stop()
    # As if the instance died between storing the events and the snapshot.
    kv = await client_nc.jetstream().key_value("tables")
    await kv.put(key, old.value)
    await start_table("second")
    after = await _current(client, created.table_id)
    assert (after["version"], after["state"]) == (before["version"], before["state"])
    again = await client.command(created.table_id, "p0", {"type": "roll"}, "late-3")
    assert again == last, "a command stored only in the events is still known by its id"


async def test_a_snapshot_whose_events_were_never_stored_is_rebuilt_from_the_seed(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    first = await start_table("first")
    created = await client.create("classic", _humans(2), seed=13)
    await _play(client, created.table_id, 5, "cmd")
    before = await _current(client, created.table_id)
    await first.stop()
    key, entry = await _snapshot(client_nc, created.table_id)
    snapshot = json.loads(entry.value)
    # As if a write of events failed after the snapshot was stored: a state the stream
    # never saw, ahead of it.
    snapshot["write_id"] = "never-stored"
    snapshot["seq"] += 3
    kv = await client_nc.jetstream().key_value("tables")
    await kv.put(key, json.dumps(snapshot).encode())
    await start_table("second")
    after = await _current(client, created.table_id)
    assert (after["version"], after["state"]) == (before["version"], before["state"])
    batches = await client.read_events(created.table_id)
    assert check_contiguous(batches) == before["version"]


async def test_two_instances_share_the_partitions_and_one_takes_all_when_the_other_stops(
    start_table: StartTable,
) -> None:
    left = await start_table("left", lease_ttl=1.0)
    right = await start_table("right", lease_ttl=1.0)
    deadline = time.monotonic() + 30  # rebalancing: one partition per heartbeat
    while time.monotonic() < deadline:
        owned = (left.owned, right.owned)
        if len(owned[0]) == len(owned[1]) == 8:
            break
        await asyncio.sleep(0.1)
    assert not owned[0] & owned[1]
    assert owned[0] | owned[1] == set(range(16))
    await left.stop()
    while time.monotonic() < deadline and len(right.owned) < 16:
        await asyncio.sleep(0.1)
    assert right.owned == set(range(16))


async def test_odd_subjects_and_bodies_for_views_and_creation_get_errors(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    created = await client.create("classic", _humans(2), seed=21)
    partition = table_partition(created.table_id)
    probes = [
        (f"opolyx.table.{partition}.bad$id.cmd", b"{}", "table/not_found"),
        (
            f"opolyx.table.{partition}.{created.table_id}.view",
            b"not json",
            "request/malformed_json",
        ),
        (
            f"opolyx.table.{partition}.{created.table_id}.view",
            b'{"v":1,"seat":9}',
            "request/invalid",
        ),
        (f"opolyx.table.{partition}.create", b'{"v":1}', "request/invalid"),
    ]
    for subject, body, code in probes:
        reply = json.loads((await client_nc.request(subject, body, timeout=3)).data)
        assert reply["ok"] is False and reply["error"]["code"] == code, (subject, reply)
    view = await client.view(created.table_id, seat=0)
    assert view["ok"] and view["legal"] is not None


async def test_a_stale_second_writer_is_fenced_off_and_the_history_stays_linear(
    start_table: StartTable, client: TableClient, client_nc: Client, nats_server: NatsServer
) -> None:
    await start_table("owner")
    created = await client.create("classic", _humans(2), seed=31)
    key, entry = await _snapshot(client_nc, created.table_id)
    # A second instance that loaded the table (say, before a lease moved) ...
    zombie_nc = await nats_server.connect()
    try:
        storage = await Storage.open(zombie_nc, lease_ttl=2.0)
        zombie = TableInstance(zombie_nc, nats_server.connect, storage, TableConfig(), "zombie")
        stale = await zombie.partitions.load(key, json.loads(entry.value), entry.revision)
        # ... while the owner goes on.
        await _play(client, created.table_id, 2, "owner")
        # The stale state says this seat may roll; the stored history has moved on.
        seat = stale.state.current_seat
        request = TableCommand(command_id="zombie-1", player_id=f"p{seat}", command=game.Roll())
        replies: asyncio.Queue[bytes] = asyncio.Queue()
        inbox = client_nc.new_inbox()

        async def on_reply(msg: Msg) -> None:
            replies.put_nowait(msg.data)

        await client_nc.subscribe(inbox, cb=on_reply)
        await flush_in_order(client_nc)
        msg = Msg(zombie_nc, subject="x", reply=inbox, data=request.model_dump_json().encode())
        zombie.jobs.in_flight += 1
        zombie.jobs.enqueue(stale, CommandJob(msg, request, time.perf_counter()))
        reply = json.loads(await asyncio.wait_for(replies.get(), 5))
    finally:
        await zombie_nc.close()
    assert reply["ok"] is False and reply["error"]["code"] == "table/not_owner"
    assert stale.dropped
    batches = await client.read_events(created.table_id)
    check_contiguous(batches)
    assert "zombie-1" not in [b.command_id for b in batches]


async def test_a_game_rides_out_a_nats_server_restart(
    start_table: StartTable, nats_server: NatsServer, client_nc: Client
) -> None:
    if not nats_server.is_local_process:
        pytest.skip("restarts the local nats-server binary")
    await start_table(lease_ttl=4.0, clock_rate=20.0)
    client = TableClient(client_nc, timeout=2.0, retry_for=30.0)
    rng = random.Random(3)
    async with BotSeats(client_nc, client, delay=lambda: rng.uniform(0.002, 0.01)) as bots:
        created = await client.create("blitz", _bots(3), seed=41)
        await asyncio.sleep(0.5)
        nats_server.restart()
        finished = await client.wait_finished(created.table_id, timeout=60)
    batches = await client.read_events(created.table_id)
    assert check_contiguous(batches) == finished.last_seq
    ids = [b.command_id for b in batches if b.command_id]
    assert len(ids) == len(set(ids))
    assert set(bots.accepted_ids) <= set(ids)


async def test_a_traced_command_carries_its_trace_into_the_stored_events(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    configure_tracing("table-test")
    await start_table()
    created = await client.create("classic", _humans(2), seed=51)
    view = await _current(client, created.table_id)
    seat = view["state"]["pending"]["seat"]
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    body = json.dumps(
        {"v": 1, "command_id": "traced", "player_id": f"p{seat}", "command": {"type": "roll"}}
    ).encode()
    reply = await client_nc.request(
        table_command(created.table_id),
        body,
        timeout=3,
        headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"},
    )
    assert json.loads(reply.data)["ok"]
    stored = await client_nc.jetstream().get_last_msg(
        "TABLE_EVENTS", f"opolyx.table.{created.table_id}.events"
    )
    assert stored.headers is not None
    assert stored.headers["traceparent"].split("-")[1] == trace_id


async def test_every_stored_batch_is_published_as_an_update_with_view_and_decisions(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table()
    updates: list[TableUpdate] = []

    async def collect(msg: Msg) -> None:
        updates.append(TableUpdate.model_validate_json(msg.data))

    table_id = "watched-table"
    sub = await client_nc.subscribe(table_update(table_id), cb=collect)
    await flush_in_order(client_nc)
    created = await client.create("classic", _humans(2), seed=61, table_id=table_id)
    await _play(client, created.table_id, 6, "w")
    await asyncio.sleep(0.3)
    await sub.unsubscribe()
    batches = await client.read_events(created.table_id)
    # Every stored event reached the watchers, in order, once.
    published = [record for update in updates for record in update.events]
    assert [r.seq for r in published] == list(range(1, check_contiguous(batches) + 1))
    assert published == [record for batch in batches for record in batch.events]
    last = updates[-1]
    view = await _current(client, created.table_id)
    assert last.version == view["version"]
    assert last.view.model_dump(mode="json") == view["state"]
    # The pending decisions carry exactly what the table would list as legal.
    for decision in last.pending:
        legal = (await client.view(created.table_id, decision.seat))["legal"]
        assert [c.model_dump(mode="json") for c in decision.legal] == legal
    assert {d.seat for d in last.pending} == {view["state"]["pending"]["seat"]}


async def test_beyond_its_bound_on_commands_in_flight_an_instance_answers_busy(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    instance = await start_table(max_in_flight=2)
    tables = [await client.create("classic", _humans(2), seed=70 + i) for i in range(8)]
    views = [await _current(client, t.table_id) for t in tables]
    bodies = [
        TableCommand(
            command_id=f"flood-{i}",
            player_id=f"p{view['state']['pending']['seat']}",
            command=game.Roll(),
        )
        for i, view in enumerate(views)
    ]
    replies = await asyncio.gather(
        *(
            client_nc.request(table_command(t.table_id), body.model_dump_json().encode(), timeout=5)
            for t, body in zip(tables, bodies, strict=True)
        )
    )
    answers = [json.loads(r.data) for r in replies]
    busy = [i for i, a in enumerate(answers) if not a["ok"]]
    assert busy, "some commands found the instance at its bound"
    assert {answers[i]["error"]["code"] for i in busy} == {"service/busy"}
    # Every command counted once, under its outcome.
    handled = {
        outcome: instance.registry.get_sample_value(
            "opolyx_handled_total", {"subject": TABLE_COMMANDS_ANY, "outcome": outcome}
        )
        for outcome in ("busy", "ok")
    }
    assert handled == {"busy": len(busy), "ok": len(answers) - len(busy)}
    timed = instance.registry.get_sample_value(
        "opolyx_handle_seconds_count", {"subject": TABLE_COMMANDS_ANY}
    )
    assert timed == len(answers) - len(busy), "a busy answer has no handling time"
    for i in busy:
        stored = await client.read_events(tables[i].table_id)
        assert f"flood-{i}" not in [b.command_id for b in stored], "a busy command applies nothing"
        # Retried later with the same id, it is applied.
        again = await client.command(
            tables[i].table_id, bodies[i].player_id, bodies[i].command, f"flood-{i}"
        )
        assert again["ok"], again


async def test_an_idle_table_brings_its_snapshot_up_to_date(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    await start_table(snapshot_every=1000, snapshot_idle=0.3)
    created = await client.create("classic", _humans(2), seed=81)
    last = await _play(client, created.table_id, 4, "idle")
    _, entry = await _snapshot(client_nc, created.table_id)
    assert json.loads(entry.value)["seq"] < last["seq"], "no snapshot per command"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _, entry = await _snapshot(client_nc, created.table_id)
        if json.loads(entry.value)["seq"] == last["seq"]:
            break
        await asyncio.sleep(0.1)
    assert json.loads(entry.value)["seq"] == last["seq"]


async def test_a_table_whose_stored_events_do_not_parse_is_quarantined_alone(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    first = await start_table("first")
    forged = await client.create("classic", _humans(2), seed=91)
    healthy = await client.create("classic", _humans(2), seed=92)
    await first.stop()
    # A message nobody but the table service should write (in production NATS refuses it).
    body = {
        "v": 1, "table_id": forged.table_id, "source": "rules", "first_seq": 2, "last_seq": 2,
        "version": 2, "at": 0.0, "write_id": "forged",
        "events": [{"seq": 2, "version": 2, "event": {"type": "money_printed", "amount": 10**6}}],
    }  # fmt: skip
    await client_nc.jetstream().publish(
        f"opolyx.table.{forged.table_id}.events", json.dumps(body).encode()
    )
    second = await start_table("second")
    refused = await client.command(forged.table_id, "p0", {"type": "roll"}, "after-forgery")
    assert refused["ok"] is False
    assert "cannot be loaded" in refused["error"]["message"]
    assert forged.table_id in second.tables and second.tables[forged.table_id].quarantined
    view = await _current(client, healthy.table_id)
    ok = await client.command(
        healthy.table_id, f"p{view['state']['pending']['seat']}", {"type": "roll"}, "healthy"
    )
    assert ok["ok"], ok
    metrics = generate_latest(second.registry).decode()
    assert "opolyx_table_quarantined_total 1.0" in metrics


async def test_a_command_naming_a_non_inbox_reply_subject_gets_no_reply_published_there(
    start_table: StartTable, client: TableClient, client_nc: Client
) -> None:
    # A request may name any subject as its reply; the table must not publish its answer
    # there with its own rights (e.g. onto opolyx.game.finished, which the lobby trusts).
    await start_table()
    created = await client.create("classic", _humans(2), seed=33)
    view = await _current(client, created.table_id)
    seat = view["state"]["pending"]["seat"]
    forged_target = "opolyx.game.finished"
    published: list[Msg] = []

    async def collect(msg: Msg) -> None:
        published.append(msg)

    await client_nc.subscribe(forged_target, cb=collect)
    await flush_in_order(client_nc)
    body = TableCommand(
        command_id="forged-reply",
        player_id=f"p{seat}",
        command=game.parse_command({"type": "roll"}),
    )
    await client_nc.publish(
        table_command(created.table_id), body.model_dump_json().encode(), reply=forged_target
    )
    # The same command id asked normally afterwards is answered: the forged one was handled
    # first (one connection, one subscription, in order) and its reply went nowhere.
    answer = await client.command(created.table_id, f"p{seat}", {"type": "roll"}, "forged-reply")
    await flush_in_order(client_nc)
    assert answer["ok"], answer
    assert published == []
    create_reply = await client_nc.request(
        TABLE_CREATE, b"not json", timeout=3
    )  # the creation subject still answers inboxes
    assert json.loads(create_reply.data)["ok"] is False
