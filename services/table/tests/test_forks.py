"""Forked tables ("play from here", issue 16): a new game continuing a finished game from
one of its steps, rebuilt by the table from the stored game, on a real nats-server."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import opolyx_rules
from opolyx_contracts.replay import ForkSource
from opolyx_contracts.subjects import TABLE_CREATE
from opolyx_contracts.table import CreateTable, SeatSpec, TableEvents
from opolyx_rules.fairness import check_dice
from opolyx_rules.forking import position_at
from opolyx_table.instance import TableInstance
from opolyx_testing.table_client import TableClient

StartTable = Callable[..., Awaitable[TableInstance]]
SEATS = [SeatSpec(player_id="p0"), SeatSpec(player_id="p1")]


async def _play(client: TableClient, table_id: str, commands: int, tag: str) -> None:
    """The simple player's commands for whichever seat must act, `commands` times."""
    for n in range(commands):
        view = await client.view(table_id)
        state = opolyx_rules.state_from_json(view["state"])
        seat = opolyx_rules.awaiting(state)[0]
        command = opolyx_rules.command_to_json(opolyx_rules.simple_policy(state, seat))
        command.pop("seat", None)
        reply = await client.command(table_id, f"p{seat}", command, f"{tag}-{n}")
        assert reply["ok"], reply


async def _finish(client: TableClient, table_id: str, tag: str) -> None:
    reply = await client.command(table_id, "p1", {"type": "resign"}, f"{tag}-resign")
    assert reply["ok"], reply
    # The seed is revealed (the game's last stored event) after the reply, before the
    # game's end is announced: only then is it a finished game to continue.
    await client.wait_finished(table_id, timeout=30)


def _rules_events(batches: list[TableEvents]) -> list[dict[str, Any]]:
    return [
        r.event.model_dump(mode="json") for b in batches if b.source == "rules" for r in b.events
    ]


async def _fork(
    client: TableClient, source: str, step: int, mode: str = "classic"
) -> dict[str, Any]:
    body = CreateTable(mode=mode, seats=SEATS, fork=ForkSource(table_id=source, step=step))
    return await client.request(TABLE_CREATE, body.model_dump_json().encode())


async def test_a_fork_continues_the_stored_position_with_a_seed_of_its_own(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table()
    source = await client.create("classic", SEATS, seed=4242)
    await _play(client, source.table_id, 12, "s")
    await _finish(client, source.table_id, "s")
    batches = await client.read_events(source.table_id)
    created = batches[0].events[0].event.model_dump(mode="json")
    initial = opolyx_rules.state_from_json(created["state"])
    events = [opolyx_rules.event_from_json(e) for e in _rules_events(batches)]
    expected = opolyx_rules.public_view(position_at(initial, events, 2, finished=True))

    reply = await _fork(client, source.table_id, 2)
    assert reply["ok"], reply
    assert reply["seed_commitment"] != source.seed_commitment
    forked = reply["table_id"]
    view = (await client.view(forked))["state"]
    for key in ("round", "current_seat", "seats", "squares", "pot"):
        assert view[key] == json.loads(json.dumps(expected[key])), key
    first = (await client.read_events(forked))[0].events[0].event
    assert first.type == "table_created"
    assert (first.practice, first.forked_from, first.forked_step) == (True, source.table_id, 2)

    # It plays on, its dice come from its own seed, and its result says practice (no XP).
    await _play(client, forked, 6, "f")
    await _finish(client, forked, "f")
    finished = await client.wait_finished(forked, timeout=30)
    assert finished.practice
    fork_events = _rules_events(await client.read_events(forked))
    assert check_dice(finished.seed, fork_events).ok
    original = await client.wait_finished(source.table_id, timeout=30)
    assert not original.practice


async def test_forks_of_running_unknown_or_other_games_are_refused(
    start_table: StartTable, client: TableClient
) -> None:
    await start_table()
    running = await client.create("classic", SEATS, seed=7)
    refused = await _fork(client, running.table_id, 0)
    assert not refused["ok"] and refused["error"]["code"] == "setup/invalid"
    assert "finished" in refused["error"]["message"]
    unknown = await _fork(client, "t-none", 0)
    assert not unknown["ok"] and unknown["error"]["code"] == "setup/invalid"
    await _finish(client, running.table_id, "r")
    other_mode = await _fork(client, running.table_id, 0, mode="speed")
    assert not other_mode["ok"] and "classic" in other_mode["error"]["message"]
    beyond = await _fork(client, running.table_id, 99)
    assert not beyond["ok"] and beyond["error"]["code"] == "setup/invalid"
    at_end = await _fork(client, running.table_id, 1)
    assert not at_end["ok"] and "over" in at_end["error"]["message"]
