"""The service on a real nats-server (with its NATS role) and a real database (both kinds):
GAMES credited exactly once with statistics read from TABLE_EVENTS, every query answered."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts import progression as contract
from opolyx_contracts.envelope import ErrorReply, Message, decode, encode
from opolyx_contracts.errors import BAD_REQUEST, MALFORMED_JSON, REPLY_NOT_INBOX
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAME_SEAT_OUT,
    table_events,
)
from opolyx_contracts.table import GameFinished, SeatOut
from opolyx_progression.app import ProgressionApp
from opolyx_progression.settings import ProgressionSection, ProgressionSettings
from opolyx_service import flush_in_order
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.settings import HttpSettings
from opolyx_testing.finished_games import WEDNESDAY, finished_game, seat_result, two_player_game
from opolyx_testing.nats_server import NatsServer
from progression_builders import EventLog
from prometheus_client import CollectorRegistry
from pydantic import BaseModel

TOKEN = "operator-secret"
R = TypeVar("R", bound=BaseModel)


@pytest.fixture
def app_settings(database_url: str, tmp_path: Path) -> dict[str, Any]:
    """The `progression` section of the app's settings (a test may change it first)."""
    return {
        "database_url": database_url,
        "data_dir": tmp_path,
        "operator": {"token": TOKEN, "port": 0},
    }


@pytest.fixture
async def app(
    nats_server: NatsServer, app_settings: dict[str, Any], admin: Client
) -> AsyncIterator[ProgressionApp]:
    settings = ProgressionSettings(
        nats=nats_server.settings_for("progression"),
        http=HttpSettings(port=-1),
        progression=ProgressionSection.model_validate(app_settings),
    )
    app = ProgressionApp(settings, metrics=ServiceMetrics(CollectorRegistry(), "progression", "t"))
    nc = await nats_server.connect("progression")
    await app.start(nc)
    yield app
    await app.stop()
    await nc.drain()
    assert nats_server.permission_violations() == []


async def ask(nc: Client, subject: str, request: Message, reply: type[R]) -> R:
    msg = await nc.request(subject, encode(request), timeout=5)
    return decode(reply, msg.data)


async def publish_game(admin: Client, game: GameFinished, log: EventLog | None = None) -> None:
    js = admin.jetstream()
    for batch in log.batches if log else []:
        await js.publish(table_events(game.table_id), encode(batch))
    await js.publish(GAME_FINISHED, encode(game))


async def wait_credited(nc: Client, player_id: str, table_id: str) -> contract.GameCredit:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        reply = await ask(
            nc,
            contract.CREDIT,
            contract.GameCreditRequest(player_id=player_id, table_id=table_id),
            contract.GameCreditReply,
        )
        if reply.credit is not None:
            return reply.credit
        await asyncio.sleep(0.05)
    raise AssertionError(f"{table_id} was not credited to {player_id}")


async def test_a_finished_game_is_credited_once_with_stats_from_its_events(
    app: ProgressionApp, admin: Client, gateway: Client
) -> None:
    log = EventLog("g1").buy(0, 1).buy(0, 3).rent(1, 0, 4000).auction_won(0, 6, 500)
    log.finish(0, [0, 1], "last_standing", 30)
    game = finished_game(
        "g1", [seat_result(0, "ann", place=1), seat_result(1, "ben", place=2, survived=False)]
    ).model_copy(update={"last_seq": log.last_seq})
    await publish_game(admin, game, log)
    credit = await wait_credited(gateway, "ann", "g1")
    # The same game again (a redelivery, a duplicate publish): nothing more is credited.
    await admin.jetstream().publish(GAME_FINISHED, encode(game))
    await publish_game(admin, two_player_game("g2", "ben", "cid"))
    await wait_credited(gateway, "ben", "g2")
    profile = await ask(
        gateway,
        contract.PROFILE,
        contract.ProfileRequest(player_id="ann", display_name="Ann"),
        contract.Profile,
    )
    assert profile.games_credited == 1 and profile.display_name == "Ann"
    assert profile.total_xp == credit.xp + credit.mission_xp
    # The game counts towards the missions of the week it finished in (the builders'
    # Wednesday): read them as of that week, not of the day the test runs.
    assert app.queries is not None
    app.queries.clock = lambda: WEDNESDAY + 3600
    missions = await ask(
        gateway,
        contract.MISSIONS,
        contract.MissionsRequest(player_id="ann"),
        contract.MissionsReply,
    )
    assert any(m.progress > 0 for m in missions.missions)
    assert app.games is not None and app.games.credited == 2


async def test_every_query_answers_over_nats(
    app: ProgressionApp, admin: Client, gateway: Client, nats_server: NatsServer
) -> None:
    await publish_game(admin, two_player_game("g1", "ann", "ben"))
    await wait_credited(gateway, "ann", "g1")
    cards = await ask(
        gateway, contract.CARDS, contract.CardsRequest(player_id="ann"), contract.CardsReply
    )
    assert cards.cards and cards.best_by_square
    follow = await ask(
        gateway,
        contract.FOLLOW,
        contract.FollowRequest(player_id="ben", target_id="ann"),
        contract.FollowReply,
    )
    assert follow.following and follow.followers == 1
    await ask(
        gateway,
        contract.PRESENCE,
        contract.PresenceReport(online=["ann"], names={"ann": "Ann"}),
        contract.PresenceAck,
    )
    lobby = await nats_server.connect("lobby")
    try:
        boosts = await ask(
            lobby,
            contract.BOOSTS,
            contract.BoostsRequest(players=["ann", "ben"], table_id="g7"),
            contract.BoostsReply,
        )
    finally:
        await lobby.drain()
    assert boosts.boosts["ann"] == cards.best_by_square
    listed = await ask(
        gateway,
        contract.FOLLOWING,
        contract.FollowingRequest(player_id="ben"),
        contract.FollowingReply,
    )
    assert [(p.player_id, p.online, p.table_id) for p in listed.players] == [("ann", True, "g7")]
    # The seat going out ends "in game g7" for the followers.
    out = SeatOut(
        table_id="g7", room_id=None, seat=0, player_id="ann", reason="resigned", round=3, at=0
    )
    await admin.jetstream().publish(GAME_SEAT_OUT, encode(out))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        listed = await ask(
            gateway,
            contract.FOLLOWING,
            contract.FollowingRequest(player_id="ben"),
            contract.FollowingReply,
        )
        if listed.players[0].table_id is None:
            break
        await asyncio.sleep(0.05)
    assert listed.players[0].table_id is None
    weekly = await ask(
        gateway,
        contract.LEADERBOARD,
        contract.LeaderboardRequest(player_id="ben", week="2026-W49"),
        contract.LeaderboardReply,
    )
    assert [e.player_id for e in weekly.entries] == ["ann", "ben"]
    mine = await ask(
        gateway,
        contract.LEADERBOARD,
        contract.LeaderboardRequest(player_id="ben", scope="following", week="2026-W49"),
        contract.LeaderboardReply,
    )
    assert {e.player_id for e in mine.entries} == {"ann", "ben"}
    public = await ask(
        gateway,
        contract.PUBLIC_PROFILE,
        contract.PublicProfileRequest(player_id="ben", target_id="ann"),
        contract.PublicProfile,
    )
    assert public.followed_by_you and public.display_name == "Ann"
    unfollow = await ask(
        gateway,
        contract.UNFOLLOW,
        contract.FollowRequest(player_id="ben", target_id="ann"),
        contract.FollowReply,
    )
    assert not unfollow.following
    flags = await ask(gateway, contract.FLAGS, contract.FlagsRequest(), contract.FlagsReply)
    assert flags.flags == []


@pytest.fixture
def long_shared_top(app_settings: dict[str, Any]) -> None:
    """The board's shared top kept for an hour: only an invalidation can refresh it."""
    app_settings["leaderboard_cache_seconds"] = 3600.0


@pytest.mark.usefixtures("long_shared_top")
async def test_a_credited_game_is_on_the_next_board_read_whatever_the_shared_top_ttl(
    app: ProgressionApp, admin: Client, gateway: Client
) -> None:
    def board(player_id: str) -> contract.LeaderboardRequest:
        return contract.LeaderboardRequest(player_id=player_id, week="2026-W49")

    await publish_game(admin, two_player_game("b1", "ann", "ben"))
    await wait_credited(gateway, "ann", "b1")
    first = await ask(gateway, contract.LEADERBOARD, board("ann"), contract.LeaderboardReply)
    assert [e.player_id for e in first.entries] == ["ann", "ben"]
    # Another game: both of its players are on the very next read (the top read above is
    # shared for an hour; the credit's commit dropped it), the winner's own row included.
    await publish_game(admin, two_player_game("b2", "cid", "dan"))
    await wait_credited(gateway, "cid", "b2")
    after = await ask(gateway, contract.LEADERBOARD, board("dan"), contract.LeaderboardReply)
    assert {"cid", "dan"} <= {e.player_id for e in after.entries}
    assert after.own is not None and after.own.player_id == "dan" and after.players == 4


async def test_bad_requests_get_coded_errors_and_change_nothing(
    app: ProgressionApp, gateway: Client
) -> None:
    cases: list[tuple[str, bytes, str]] = [
        (contract.PROFILE, b"not json", MALFORMED_JSON),
        (contract.PROFILE, b"[1, 2]", MALFORMED_JSON),
        (contract.PROFILE, b'{"v": 1}', BAD_REQUEST),
        (contract.FOLLOW, b'{"v": 1, "player_id": "a", "target_id": "a"}', contract.FOLLOW_SELF),
        (
            contract.FOLLOW,
            b'{"v": 1, "player_id": "a", "target_id": "zz"}',
            contract.UNKNOWN_PLAYER,
        ),
        (
            contract.PUBLIC_PROFILE,
            b'{"v": 1, "player_id": "a", "target_id": "zz"}',
            contract.UNKNOWN_PLAYER,
        ),
        (contract.LEADERBOARD, b'{"v": 1, "player_id": "a", "limit": 5000}', BAD_REQUEST),
        (contract.CREDIT, b'{"v": 1, "player_id": "a", "table_id": "x.>"}', BAD_REQUEST),
        (contract.PRESENCE, b'{"v": 1, "online": ["' + b"x" * 70000 + b'"]}', BAD_REQUEST),
    ]
    for subject, body, code in cases:
        msg = await gateway.request(subject, body, timeout=5)
        assert decode(ErrorReply, msg.data).error.code == code, (subject, body[:60])
    following = await ask(
        gateway,
        contract.FOLLOWING,
        contract.FollowingRequest(player_id="a"),
        contract.FollowingReply,
    )
    assert following.players == []
    assert app.metrics is not None
    refused = app.metrics.handled_total.labels(contract.FOLLOW, contract.FOLLOW_SELF)
    assert refused._value.get() == 1


async def test_an_unreadable_games_message_is_dropped_and_the_next_one_credited(
    app: ProgressionApp, admin: Client, gateway: Client
) -> None:
    await admin.jetstream().publish(GAME_FINISHED, b'{"v": 1, "table_id": 5}')
    await publish_game(admin, two_player_game("g1", "ann", "ben"))
    assert (await wait_credited(gateway, "ann", "g1")).paid


async def test_the_operator_endpoint_needs_the_token_and_shows_the_flags(
    app: ProgressionApp, admin: Client, gateway: Client
) -> None:
    for i in (1, 2, 3):
        log = EventLog(f"f{i}").trade(1, 0, give_cash=1500, take_cash=700)
        game = two_player_game(f"f{i}", "main", "alt").model_copy(update={"last_seq": log.last_seq})
        await publish_game(admin, game, log)
        await wait_credited(gateway, "main", f"f{i}")
    assert app.operator is not None
    url = f"http://127.0.0.1:{app.operator.port}/operator/flags"
    async with httpx.AsyncClient() as client:
        refused = await client.get(url)
        wrong = await client.get(url, headers={"Authorization": "Bearer nope"})
        shown = await client.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401 and wrong.status_code == 401
    assert shown.status_code == 200
    flags = contract.FlagsReply.model_validate(shown.json())
    assert [(f.giver_id, f.receiver_id, f.games) for f in flags.flags] == [
        ("alt", "main", ["f1", "f2", "f3"])
    ]
    third = await wait_credited(gateway, "main", "f3")
    assert third.reason == "flagged" and third.xp == 0


async def test_a_query_replying_outside_the_inbox_is_dropped_not_answered(
    app: ProgressionApp, nats_server: NatsServer, admin: Client
) -> None:
    published: list[bytes] = []

    async def collect(msg: Msg) -> None:
        published.append(msg.data)

    await admin.subscribe(GAME_FINISHED, cb=collect)
    await flush_in_order(admin)
    lobby = await nats_server.connect("lobby")
    try:
        forged = contract.BoostsRequest(players=["ann"], table_id="g9")
        await lobby.publish(contract.BOOSTS, encode(forged), reply=GAME_FINISHED)
        # One subscription answers in order: once this is answered the forged one was seen.
        normal = contract.BoostsRequest(players=["ben"])
        await ask(lobby, contract.BOOSTS, normal, contract.BoostsReply)
    finally:
        await lobby.drain()
    await flush_in_order(admin)
    await asyncio.sleep(0.1)  # a stray reply would have to cross the server once more
    assert published == []
    assert app.metrics is not None
    outcomes = {
        sample.labels["outcome"]: sample.value
        for metric in app.metrics.handled_total.collect()
        for sample in metric.samples
        if sample.name == "opolyx_handled_total" and sample.labels["subject"] == contract.BOOSTS
    }
    assert outcomes == {REPLY_NOT_INBOX: 1.0, "ok": 1.0}
