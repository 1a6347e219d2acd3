"""Progression through the gateway's REST routes against the real progression service (SQLite)
on a real nats-server, every party as its NATS role: a finished game credited to the
signed-in player shows in the profile, cards, missions, post-game summary and leaderboard;
follows with online state from the gateway's presence reports; coded refusals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateway_builders import RunningGateway
from opolyx_contracts.envelope import encode
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.progression import FOLLOW_SELF, UNKNOWN_PLAYER
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
    TABLE_EVENTS_STREAM,
    TABLE_EVENTS_SUBJECTS,
)
from opolyx_progression.app import ProgressionApp
from opolyx_progression.missions import assigned
from opolyx_progression.settings import ProgressionSection, ProgressionSettings
from opolyx_service.connection import ensure_stream
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.finished_games import two_player_game
from opolyx_testing.nats_server import NatsServer
from prometheus_client import CollectorRegistry


@pytest.fixture
async def progression(nats_server: NatsServer, tmp_path: Path) -> AsyncIterator[ProgressionApp]:
    admin = await nats_server.connect()
    js = admin.jetstream()
    await ensure_stream(js, TABLE_EVENTS_STREAM, [TABLE_EVENTS_SUBJECTS])
    await ensure_stream(js, GAMES_STREAM, [GAMES_STREAM_SUBJECTS])
    await admin.drain()
    settings = ProgressionSettings(
        nats=nats_server.settings_for("progression"),
        http=HttpSettings(port=-1),
        progression=ProgressionSection(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'progression.sqlite3'}",
            data_dir=tmp_path,
            operator=OperatorSettings(port=-1),
        ),
    )
    app = ProgressionApp(settings, metrics=ServiceMetrics(CollectorRegistry(), "progression", "t"))
    nc = await nats_server.connect("progression")
    await app.start(nc)
    yield app
    await app.stop()
    await nc.drain()
    assert nats_server.permission_violations() == []


class Api:
    def __init__(self, http: httpx.AsyncClient, token: str, player_id: str) -> None:
        self.http = http
        self.headers = {"authorization": f"Bearer {token}"}
        self.id = player_id

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        response = await self.http.get(path, headers=self.headers, params=params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def call(self, method: str, path: str) -> httpx.Response:
        return await self.http.request(method, path, headers=self.headers)


async def signed_in(gateway: RunningGateway, name: str) -> Api:
    token, player_id = await gateway.sign_in(name)
    return Api(gateway.http, token, player_id)


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + 15
    while not await check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_a_credited_game_shows_in_profile_cards_missions_summary_and_leaderboard(
    gateway: RunningGateway, progression: ProgressionApp
) -> None:
    alice, bob = await signed_in(gateway, "Alice"), await signed_in(gateway, "Bob")
    before = await alice.get("/api/me/profile")
    assert before["total_xp"] == 0 and before["display_name"] == "Alice"
    pending = await alice.get("/api/me/games/g-social-1")
    assert pending["status"] == "pending" and pending["credit"] is None

    game = two_player_game("g-social-1", alice.id, bob.id, at=time.time())
    await gateway.nc.jetstream().publish(GAME_FINISHED, encode(game))

    async def credited() -> bool:
        status: str = (await alice.get("/api/me/games/g-social-1"))["status"]
        return status == "credited"

    await eventually(credited, "the game was never credited")
    summary = (await alice.get("/api/me/games/g-social-1"))["credit"]
    assert summary["paid"] is True and summary["place"] == 1 and summary["xp"] > 0
    assert [c["source"] for c in summary["cards"]].count("win") == 1  # a win drops a card

    profile = await alice.get("/api/me/profile")
    assert profile["total_xp"] == summary["xp"] + summary["mission_xp"]
    assert profile["level"] == summary["level_after"] and profile["rank"]
    assert profile["recent_games"][0]["table_id"] == "g-social-1"
    cards = await alice.get("/api/me/cards")
    assert sorted(c["card_id"] for c in cards["cards"]) == sorted(
        c["card_id"] for c in summary["cards"]
    )

    # the missions the service assigns today, advanced by exactly what this game did
    missions = {m["mission_id"]: m for m in (await alice.get("/api/me/missions"))["missions"]}
    expected = {a.mission.mission_id: a for a in assigned(alice.id, time.time())}
    assert missions.keys() == expected.keys()
    did = {"games_finished": 1, "games_won": 1}
    for mission_id, a in expected.items():
        assert missions[mission_id]["progress"] == min(a.mission.goal, did.get(a.mission.metric, 0))
    completed = {m for m, v in missions.items() if v["completed"]}
    assert completed == set(summary["missions_completed"])

    board = await alice.get("/api/leaderboard")
    assert board["scope"] == "weekly" and board["own"]["player_id"] == alice.id
    assert board["entries"][0] == board["own"] and board["own"]["xp"] == profile["weekly_xp"]
    loser = await bob.get("/api/leaderboard")
    assert loser["own"]["position"] == 2  # bob earned less (second place)

    # a public profile names the player and their progression
    page = await bob.get(f"/api/players/{alice.id}")
    assert page["name"] == "Alice" and page["progression"]["total_xp"] == profile["total_xp"]


async def test_follow_shows_the_player_online_from_presence_then_offline(
    gateway: RunningGateway, progression: ProgressionApp
) -> None:
    alice = await signed_in(gateway, "Alice")
    token, bob_id = await gateway.sign_in("Bob")
    unknown = await alice.call("PUT", f"/api/me/following/{bob_id}")
    assert unknown.status_code == 400 and unknown.json()["code"] == UNKNOWN_PLAYER

    bob_socket = await gateway.client(token)  # the gateway reports Bob online to progression

    async def followed() -> bool:
        response = await alice.call("PUT", f"/api/me/following/{bob_id}")
        return response.status_code == 200 and response.json()["following"] is True

    await eventually(followed, "Bob never became known to progression")
    listed = await alice.get("/api/me/following")
    assert [(p["player_id"], p["display_name"]) for p in listed["players"]] == [(bob_id, "Bob")]
    assert listed["players"][0]["online"] is True and listed["following"] == 1
    board = await alice.get("/api/leaderboard", scope="following")
    assert board["scope"] == "following"

    await bob_socket.close()

    async def offline() -> bool:
        return (await alice.get("/api/me/following"))["players"][0]["online"] is False

    await eventually(offline, "Bob still shows online after his socket closed")
    gone = await alice.call("DELETE", f"/api/me/following/{bob_id}")
    assert gone.status_code == 200 and gone.json()["following"] is False
    assert (await alice.get("/api/me/following"))["players"] == []

    myself = await alice.call("PUT", f"/api/me/following/{alice.id}")
    assert myself.status_code == 400 and myself.json()["code"] == FOLLOW_SELF


async def test_the_routes_need_a_session_and_say_when_progression_is_not_running(
    gateway: RunningGateway,
) -> None:
    assert (await gateway.http.get("/api/me/profile")).status_code == 401
    alice = await signed_in(gateway, "Alice")
    response = await alice.call("GET", "/api/me/profile")
    assert response.status_code == 503 and response.json()["code"] == UNAVAILABLE
    bad = await alice.call("GET", "/api/leaderboard?scope=everyone")
    assert bad.status_code == 400
    bad_table = await alice.call("GET", "/api/me/games/not.a.table")
    assert bad_table.status_code in (400, 404)
    page = await alice.get(f"/api/players/{alice.id}")
    assert page == {"player_id": alice.id, "name": "Alice", "progression": None}


async def test_the_openapi_document_lists_the_progression_routes(gateway: RunningGateway) -> None:
    schema = (await gateway.http.get("/schema/openapi.json")).json()
    for path in (
        "/api/me/profile",
        "/api/me/cards",
        "/api/me/missions",
        "/api/me/following",
        "/api/me/following/{target_id}",
        "/api/me/games/{table_id}",
        "/api/leaderboard",
    ):
        assert path in schema["paths"], path
    assert "Profile" in schema["components"]["schemas"]
