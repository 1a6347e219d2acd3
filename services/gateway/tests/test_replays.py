"""Replays over HTTP (issue 16): a finished game stored in TABLE_EVENTS on a real
nats-server, read by the gateway as its own NATS role, rebuilt with the rules library."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from gateway_builders import RunningGateway
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from opolyx_contracts import subjects
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import LobbyCommand, LobbyReply, RoomDetail
from opolyx_contracts.replay import PAST_GAMES, PastGame, PastGamesReply, PastGamesRequest
from opolyx_contracts.table import TableEvents, event_message_id
from opolyx_gateway.replays import PAGE_SIZE
from opolyx_rules.fairness import verify_replay
from opolyx_service import flush_in_order
from opolyx_service.connection import ensure_stream
from opolyx_testing.recorded_games import RecordedGame, record_game


@pytest.fixture(scope="module")
def blitz() -> RecordedGame:
    return record_game("blitz", 3, 21, trading=True)


async def _store(nc: NatsClient, table_id: str, messages: list[TableEvents]) -> None:
    js = nc.jetstream()
    await ensure_stream(js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
    for message in messages:
        await js.publish(
            subjects.table_events(table_id),
            message.model_dump_json().encode(),
            headers={"Nats-Msg-Id": event_message_id(table_id, message.first_seq)},
        )


async def _all_steps(gateway: RunningGateway, table_id: str, steps: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for start in range(0, steps, PAGE_SIZE):
        page = await gateway.http.get(f"/api/replays/{table_id}/steps", params={"start": start})
        assert page.status_code == 200, page.text
        out.extend(page.json()["steps"])
    return out


async def test_a_finished_game_replays_step_by_step_with_its_log_and_analytics(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    await _store(gateway.nc, "t-blitz", blitz.stored("t-blitz"))
    summary = (await gateway.http.get("/api/replays/t-blitz")).json()
    turns = sum(1 for e in blitz.events if e["type"] == "turn_started")
    assert summary["steps"] == turns + 2 > PAGE_SIZE
    assert summary["seed"] == blitz.seed
    assert summary["seed_commitment"] == blitz.initial.seed_commitment
    assert summary["rounds"] == blitz.final.round and summary["placement"] == list(
        blitz.final.placement
    )
    timeline = summary["timeline"]
    assert [m["step"] for m in timeline] == list(range(summary["steps"]))
    assert timeline[-1]["end"] and not any(m["end"] for m in timeline[:-1])
    assert summary["analytics"]["trades"], "the trading players' trades are in the ledger"

    steps = await _all_steps(gateway, "t-blitz", summary["steps"])
    assert [s["step"] for s in steps] == list(range(summary["steps"]))
    assert steps[0]["state"] == blitz.file.initial
    final = steps[-1]["state"]
    assert final["finished"] and final["placement"] == list(blitz.final.placement)
    assert [s["seat"] for s in steps[1:-1]] == [
        e["seat"] for e in blitz.events if e["type"] == "turn_started"
    ]
    # The log of every step, in order, is the whole game; each step but the first starts
    # right after a turn began.
    assert [e for s in steps for e in s["events"]] == blitz.events
    for step in steps[1:-1]:
        assert step["state"]["pending"]["kind"] == "roll" and step["state"]["dice"] is None
    # A page asked for by any step inside it is that page.
    inside = await gateway.http.get("/api/replays/t-blitz/steps", params={"start": PAGE_SIZE + 3})
    assert inside.json()["start"] == PAGE_SIZE


async def test_the_replay_file_verifies_offline(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    await _store(gateway.nc, "t-file", blitz.stored("t-file"))
    response = await gateway.http.get("/api/replays/t-file/file")
    assert response.status_code == 200
    assert 'filename="opolyx-t-file.json"' in response.headers["content-disposition"]
    checks = verify_replay(response.json())
    assert [c.name for c in checks if c.ok] == ["commitment", "dice", "start", "replay"]


async def test_unknown_running_and_out_of_range_replays_are_refused(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    missing = await gateway.http.get("/api/replays/t-nothing")
    assert missing.status_code == 404 and missing.json()["code"] == "replay/not_found"
    running = blitz.stored("t-running")[:-1]  # no seed_revealed yet
    await _store(gateway.nc, "t-running", running)
    refused = await gateway.http.get("/api/replays/t-running")
    assert refused.json()["code"] == "replay/not_finished"
    await _store(gateway.nc, "t-range", blitz.stored("t-range"))
    summary = (await gateway.http.get("/api/replays/t-range")).json()
    beyond = await gateway.http.get(
        "/api/replays/t-range/steps", params={"start": summary["steps"]}
    )
    assert beyond.json()["code"] == "replay/bad_step"
    bad_id = await gateway.http.get("/api/replays/t.range")
    assert bad_id.status_code in (400, 404)


async def test_a_tampered_stored_event_is_refused_not_crashed(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    stored = blitz.stored("t-bad")
    broken = json.loads(stored[5].model_dump_json())
    broken["events"][0]["event"] = {"type": "no_such_event"}
    js = gateway.nc.jetstream()
    await ensure_stream(js, subjects.TABLE_EVENTS_STREAM, [subjects.TABLE_EVENTS_SUBJECTS])
    for index, message in enumerate(stored):
        body = json.dumps(broken).encode() if index == 5 else message.model_dump_json().encode()
        await js.publish(subjects.table_events("t-bad"), body)
    response = await gateway.http.get("/api/replays/t-bad")
    assert response.status_code == 400 and response.json()["code"] == "replay/unreadable"
    # The gateway still serves the next replay.
    await _store(gateway.nc, "t-good", blitz.stored("t-good"))
    assert (await gateway.http.get("/api/replays/t-good")).status_code == 200


async def test_many_viewers_opening_at_once_get_one_build(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    await _store(gateway.nc, "t-crowd", blitz.stored("t-crowd"))
    answers = await asyncio.gather(*(gateway.http.get("/api/replays/t-crowd") for _ in range(8)))
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1


async def test_play_from_here_asks_the_lobby_for_a_practice_game_as_the_signed_in_player(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    await _store(gateway.nc, "t-fork", blitz.stored("t-fork"))
    summary = (await gateway.http.get("/api/replays/t-fork")).json()
    asked: list[LobbyCommand] = []

    async def lobby(msg: Msg) -> None:
        command = LobbyCommand.model_validate_json(msg.data)
        asked.append(command)
        room = RoomDetail(
            room_id="r-practice",
            mode=command.mode or "",
            seat_count=command.seats or 0,
            public=False,
            status="started",
            creator=command.player_id,
            members=[],
            filled=0,
            humans=1,
            created_at=0.0,
            waiting_since=0.0,
            table_id="t-practice",
        )
        await msg.respond(encode(LobbyReply(room=room, table_id="t-practice")))

    await gateway.nc.subscribe(subjects.LOBBY_CMD, cb=lobby)
    await flush_in_order(gateway.nc)
    anonymous = await gateway.http.post("/api/replays/t-fork/fork", json={"step": 3})
    assert anonymous.status_code == 401 and not asked
    token, player = await gateway.sign_in("Forker")
    auth = {"authorization": f"Bearer {token}"}
    forked = await gateway.http.post("/api/replays/t-fork/fork", json={"step": 3}, headers=auth)
    assert forked.status_code == 201, forked.text
    assert forked.json() == {
        "room_id": "r-practice",
        "table_id": "t-practice",
        "seat": summary["timeline"][3]["seat"],  # not a player of that game: the seat to play
    }
    (command,) = asked
    assert (command.type, command.player_id, command.name) == ("practice", player, "Forker")
    assert (command.table_id, command.step, command.mode, command.seats) == (
        "t-fork",
        3,
        "blitz",
        3,
    )
    chosen = await gateway.http.post(
        "/api/replays/t-fork/fork", json={"step": 3, "seat": 2}, headers=auth
    )
    assert chosen.json()["seat"] == 2
    end = summary["steps"] - 1
    over = await gateway.http.post("/api/replays/t-fork/fork", json={"step": end}, headers=auth)
    assert over.status_code == 400 and over.json()["code"] == "replay/bad_step"
    extra = await gateway.http.post(
        "/api/replays/t-fork/fork", json={"step": 1, "position": {}}, headers=auth
    )
    assert extra.status_code == 400
    assert len(asked) == 2


async def test_past_games_come_from_progression_with_their_replay_links(
    gateway: RunningGateway,
) -> None:
    asked: list[PastGamesRequest] = []

    async def progression(msg: Msg) -> None:
        request = PastGamesRequest.model_validate_json(msg.data)
        asked.append(request)
        game = PastGame(
            table_id="t-old", mode="classic", finished_at=1.0, rounds=40, place=2, player_id="x"
        )
        reply = PastGamesReply(player_id=request.player_id, games=[game], followed=[])
        await msg.respond(encode(reply))

    await gateway.nc.subscribe(PAST_GAMES, cb=progression)
    await flush_in_order(gateway.nc)
    token, player = await gateway.sign_in("Historian")
    refused = await gateway.http.get(f"/api/players/{player}/games")
    assert refused.status_code == 401
    listed = await gateway.http.get(
        f"/api/players/{player}/games",
        params={"limit": 5},
        headers={"authorization": f"Bearer {token}"},
    )
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["games"][0]["replay"] == "/replay.html?table=t-old"
    assert body["followed"] == []
    assert [(a.player_id, a.limit) for a in asked] == [(player, 5)]


async def test_turns_the_autopilot_played_are_marked_in_the_replay(
    gateway: RunningGateway, blitz: RecordedGame
) -> None:
    """Issue 16: the autopilot's turns are marked in the replay as in the live log (the
    stored records' `autopilot` flag becomes the event's `by_autopilot` on the page)."""
    stored = blitz.stored("t-auto")
    rules_batches = [i for i, m in enumerate(stored) if m.source == "rules"]
    marked = rules_batches[len(rules_batches) // 2]
    message = stored[marked]
    stored[marked] = message.model_copy(
        update={"events": [r.model_copy(update={"autopilot": True}) for r in message.events]}
    )
    await _store(gateway.nc, "t-auto", stored)
    summary = (await gateway.http.get("/api/replays/t-auto")).json()
    steps = await _all_steps(gateway, "t-auto", summary["steps"])
    events = [e for s in steps for e in s["events"]]
    flagged = [e for e in events if e.get("by_autopilot")]
    assert len(flagged) == len(message.events) > 0
    assert [{k: v for k, v in e.items() if k != "by_autopilot"} for e in events] == blitz.events
