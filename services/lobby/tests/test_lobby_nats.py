"""Lobby flows through a real nats-server: commands, KV state, races, bots, starting, freeing."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import LobbyCommand, LobbyEvent, lobby_member_events
from opolyx_contracts.progression import BoostsReply, BoostsRequest
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAME_SEAT_OUT,
    LOBBY_CMD,
    LOBBY_EVENTS,
    TABLE_CREATE,
)
from opolyx_contracts.table import SeatOut, TableCreated
from opolyx_lobby.app import LobbyApp
from opolyx_lobby.store import Claim
from opolyx_service import flush_in_order
from opolyx_testing.finished_games import finished_game, seat_result

LobbyFactory = Callable[..., Awaitable[LobbyApp]]


async def lobby_cmd(nc: Client, **body: Any) -> dict[str, Any]:
    """Send a lobby command the way the gateway does; returns the decoded reply."""
    command = LobbyCommand.model_validate(body)
    msg = await nc.request(LOBBY_CMD, encode(command), timeout=5)
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


async def create(nc: Client, player: str, seats: int = 4, **extra: Any) -> dict[str, Any]:
    reply = await lobby_cmd(
        nc,
        type="create",
        player_id=player,
        name=player.title(),
        mode="classic",
        seats=seats,
        **extra,
    )
    assert reply["ok"], reply
    return reply


async def test_create_list_join_leave_through_nats(lobby_factory: LobbyFactory, nc: Client) -> None:
    await lobby_factory()
    room = (await create(nc, "alice"))["room"]
    listed = await lobby_cmd(nc, type="list", player_id="bob")
    assert [r["room_id"] for r in listed["rooms"]] == [room["room_id"]]
    joined = await lobby_cmd(nc, type="join", player_id="bob", room_id=room["room_id"])
    assert [m["player_id"] for m in joined["room"]["members"]] == ["alice", "bob"]
    left = await lobby_cmd(nc, type="leave", player_id="alice", room_id=room["room_id"])
    assert left["room"]["creator"] == "bob"
    closed = await lobby_cmd(nc, type="leave", player_id="bob", room_id=room["room_id"])
    assert closed["ok"] is True and closed["room"] is None
    assert (await lobby_cmd(nc, type="list", player_id="bob"))["rooms"] == []


async def test_bad_input_gets_clear_errors_and_the_lobby_keeps_serving(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]

    async def code(raw: bytes) -> str:
        reply = json.loads((await nc.request(LOBBY_CMD, raw, timeout=5)).data)
        assert reply["ok"] is False and reply["error"]["message"]
        return str(reply["error"]["code"])

    def body(**kw: Any) -> bytes:
        return json.dumps({"v": 1, **kw}).encode()

    assert await code(b"{not json") == "request/malformed_json"
    huge = body(type="list", player_id="x", padding="y" * 4000)
    assert await code(huge) == "request/invalid"
    assert await code(body(type="dance", player_id="x")) == "request/invalid"
    assert await code(json.dumps({"v": 9, "type": "list", "player_id": "x"}).encode()) == (
        "request/unsupported_version"
    )
    assert await code(body(type="join", player_id="bob", room_id="r-nope")) == "lobby/unknown_room"
    assert await code(body(type="get", player_id="bob", room_id="a b.*>")) == "lobby/unknown_room"
    assert (
        await code(body(type="create", player_id="bob", mode="chess", seats=4)) == "lobby/bad_mode"
    )
    assert await code(body(type="create", player_id="bob", mode="team", seats=3)) == (
        "lobby/bad_seat_count"
    )
    assert await code(body(type="start", player_id="alice", room_id=room_id)) == (
        "lobby/not_enough_players"
    )
    assert (await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id))["ok"]
    assert await code(body(type="join", player_id="carl", room_id=room_id)) == "lobby/room_full"
    assert await code(body(type="kick", player_id="bob", room_id=room_id, target="alice")) == (
        "lobby/not_creator"
    )
    # nothing of the above changed the room
    room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert [m["player_id"] for m in room["members"]] == ["alice", "bob"]
    assert room["creator"] == "alice" and room["status"] == "open"


async def test_a_player_is_in_one_room_at_a_time_and_leaving_frees_them(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    first = (await create(nc, "alice"))["room"]["room_id"]
    second = (await create(nc, "bob"))["room"]["room_id"]
    again = await lobby_cmd(nc, type="create", player_id="alice", mode="classic", seats=2)
    assert again["error"]["code"] == "lobby/already_in_game"
    joined = await lobby_cmd(nc, type="join", player_id="alice", room_id=second)
    assert joined["error"]["code"] == "lobby/already_in_game"
    mine = await lobby_cmd(nc, type="mine", player_id="alice")
    assert mine["room"]["room_id"] == first
    await lobby_cmd(nc, type="leave", player_id="alice", room_id=first)
    assert (await lobby_cmd(nc, type="join", player_id="alice", room_id=second))["ok"]


async def test_two_instances_racing_for_the_last_seat_never_overfill(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    one, two = await lobby_factory(), await lobby_factory()
    assert one.lobby is not None and two.lobby is not None
    room_id = (await create(nc, "host", seats=3))["room"]["room_id"]
    await lobby_cmd(nc, type="join", player_id="early", room_id=room_id)

    contenders = [f"p{i}" for i in range(16)]
    results = await asyncio.gather(
        *(
            (one if i % 2 else two).answer(
                LobbyCommand(type="join", player_id=p, room_id=room_id).model_dump_json().encode()
            )
            for i, p in enumerate(contenders)
        )
    )
    replies = [json.loads(r) for r in results]
    winners = [p for p, r in zip(contenders, replies, strict=True) if r["ok"]]
    assert len(winners) == 1
    assert {r["error"]["code"] for r in replies if not r["ok"]} <= {"lobby/room_full", "lobby/busy"}
    room = (await lobby_cmd(nc, type="get", player_id="host", room_id=room_id))["room"]
    assert [m["player_id"] for m in room["members"]] == ["host", "early", winners[0]]
    # every loser's slot was given back: they can open a room of their own
    loser = next(p for p in contenders if p not in winners)
    assert (await create(nc, loser))["ok"]


async def test_one_player_joining_two_rooms_at_once_through_two_instances_gets_one(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    one, two = await lobby_factory(), await lobby_factory()
    rooms = [(await create(nc, f"host{i}"))["room"]["room_id"] for i in range(2)]
    for _ in range(5):
        results = await asyncio.gather(
            one.answer(
                LobbyCommand(type="join", player_id="eve", room_id=rooms[0])
                .model_dump_json()
                .encode()
            ),
            two.answer(
                LobbyCommand(type="join", player_id="eve", room_id=rooms[1])
                .model_dump_json()
                .encode()
            ),
        )
        oks = [json.loads(r)["ok"] for r in results]
        assert oks.count(True) == 1
        joined = rooms[oks.index(True)]
        await lobby_cmd(nc, type="leave", player_id="eve", room_id=joined)


async def test_bots_fill_a_waiting_public_room_and_make_way_for_humans(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory(bot_fill_after_seconds=0.3, fill_check_seconds=0.1)
    events: list[dict[str, Any]] = []

    async def on_event(msg: Msg) -> None:
        events.append(json.loads(msg.data))

    await nc.subscribe(LOBBY_EVENTS, cb=on_event)
    await flush_in_order(nc)
    public = (await create(nc, "alice", seats=4))["room"]["room_id"]
    private = (await create(nc, "bob", seats=4, public=False))["room"]["room_id"]
    room: dict[str, Any] = {}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=public))["room"]
        if len(room["members"]) == 4:
            break
        await asyncio.sleep(0.05)
    assert [m["bot"] for m in room["members"]] == [False, True, True, True]
    assert len({m["name"] for m in room["members"]}) == 4
    assert all(m["style"] for m in room["members"][1:])
    # a private room is never filled by the lobby
    mine = await lobby_cmd(nc, type="get", player_id="bob", room_id=private)
    assert len(mine["room"]["members"]) == 1
    # a human joining the full room takes a bot's seat
    joined = await lobby_cmd(nc, type="join", player_id="carl", room_id=public)
    assert joined["ok"]
    assert [m["bot"] for m in joined["room"]["members"]] == [False, True, True, False]
    await asyncio.sleep(0.1)
    kinds = [(e["type"], e["room_id"]) for e in events]
    assert ("room_created", public) in kinds and ("room_changed", public) in kinds
    assert all("invite_code" not in (e["room"] or {}) for e in events)


async def test_creator_manages_bots_and_kicks(lobby_factory: LobbyFactory, nc: Client) -> None:
    await lobby_factory()
    room_id = (await create(nc, "alice", seats=3))["room"]["room_id"]
    added = await lobby_cmd(
        nc, type="add_bot", player_id="alice", room_id=room_id, bot_id="bot-greta"
    )
    assert added["room"]["members"][1]["name"] == "Greta"
    unknown = await lobby_cmd(
        nc, type="add_bot", player_id="alice", room_id=room_id, bot_id="bot-zed"
    )
    assert unknown["error"]["code"] == "lobby/unknown_bot"
    removed = await lobby_cmd(
        nc, type="remove_bot", player_id="alice", room_id=room_id, bot_id="bot-greta"
    )
    assert len(removed["room"]["members"]) == 1
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id)
    kicked = await lobby_cmd(nc, type="kick", player_id="alice", room_id=room_id, target="bob")
    assert [m["player_id"] for m in kicked["room"]["members"]] == ["alice"]
    # the kicked player is free again
    assert (await create(nc, "bob"))["ok"]


async def fake_table_service(nc: Client, seen: list[dict[str, Any]]) -> None:
    async def on_create(msg: Msg) -> None:
        request = json.loads(msg.data)
        seen.append(request)
        tid = request["table_id"]
        created = TableCreated(
            table_id=tid,
            partition=0,
            command_subject=f"opolyx.table.0.{tid}.cmd",
            view_subject=f"opolyx.table.0.{tid}.view",
            events_subject=f"opolyx.table.{tid}.events",
            seed_commitment="x",
            seq=1,
        )
        await msg.respond(encode(created))

    await nc.subscribe(TABLE_CREATE, cb=on_create)
    await flush_in_order(nc)


def finished_event(table_id: str, room_id: str, players: list[tuple[str, bool]]) -> bytes:
    """The room's game finished (the lobby reads the table and the seats' players only)."""
    seats = [
        seat_result(i, player_id, bot=bot, place=i + 1)
        for i, (player_id, bot) in enumerate(players)
    ]
    return encode(finished_game(table_id, seats, room_id=room_id, last_seq=9))


async def test_start_creates_the_table_without_progression_and_finishing_frees_everyone(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    room_id = (await create(nc, "alice", seats=3))["room"]["room_id"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id)
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=room_id, bot_id="bot-ada")
    not_creator = await lobby_cmd(nc, type="start", player_id="bob", room_id=room_id)
    assert not_creator["error"]["code"] == "lobby/not_creator"

    with structlog.testing.capture_logs() as logs:
        started = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert started["ok"], started
    assert any(
        e["event"] == "progression_unavailable_no_boosts" and e["log_level"] == "warning"
        for e in logs
    )
    table_id = started["table_id"]
    (request,) = seen
    assert request["mode"] == "classic" and request["room_id"] == room_id
    assert [(s["player_id"], s["bot"], s["boosts"]) for s in request["seats"]] == [
        ("alice", False, {}),
        ("bob", False, {}),
        ("bot-ada", True, {}),
    ]
    # the table draws the seed itself: a caller-chosen seed is not trusted
    assert request["seed"] is None
    assert request["table_id"].startswith(f"t-{room_id.removeprefix('r-')}-")
    assert started["room"]["status"] == "started"
    assert (await lobby_cmd(nc, type="mine", player_id="bob"))["table_id"] == table_id
    blocked = await lobby_cmd(nc, type="create", player_id="bob", mode="classic", seats=2)
    assert blocked["error"]["code"] == "lobby/already_in_game"
    assert "game" in blocked["error"]["message"]

    js = nc.jetstream()
    # bob goes bankrupt: he is free at once, alice is not
    seat_out = SeatOut(
        table_id=table_id,
        room_id=room_id,
        seat=1,
        player_id="bob",
        reason="bankrupt",
        round=12,
        at=0.0,
    )
    await js.publish(GAME_SEAT_OUT, encode(seat_out))
    await wait_until_free(nc, "bob")
    assert (await lobby_cmd(nc, type="mine", player_id="alice"))["table_id"] == table_id
    await js.publish(
        GAME_FINISHED,
        finished_event(table_id, room_id, [("alice", False), ("bob", False), ("bot-ada", True)]),
    )
    await wait_until_free(nc, "alice")
    gone = await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id)
    assert gone["error"]["code"] == "lobby/unknown_room"


async def wait_until_free(nc: Client, player: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if (await lobby_cmd(nc, type="mine", player_id=player))["room"] is None and (
            await lobby_cmd(nc, type="mine", player_id=player)
        )["table_id"] is None:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{player} was not freed")


async def test_start_asks_progression_for_boosts(lobby_factory: LobbyFactory, nc: Client) -> None:
    await lobby_factory()
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)

    asked: list[BoostsRequest] = []

    async def on_boosts(msg: Msg) -> None:
        asked.append(request := BoostsRequest.model_validate_json(msg.data))
        boosts = {p: {39: 33} for p in request.players}
        await msg.respond(encode(BoostsReply(boosts=boosts)))

    await nc.subscribe("opolyx.progression.boosts", cb=on_boosts)
    await flush_in_order(nc)
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=room_id)
    assert (await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id))["ok"]
    assert [s["boosts"] for s in seen[0]["seats"]] == [{"39": 33}, {}]
    # progression learns which game the humans are in: the table the start created
    assert [(a.players, a.table_id) for a in asked] == [(["alice"], seen[0]["table_id"])]


async def test_a_command_replying_outside_the_inbox_is_dropped_not_answered(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    published: list[Msg] = []

    async def collect(msg: Msg) -> None:
        published.append(msg)

    await nc.subscribe(GAME_FINISHED, cb=collect)
    await flush_in_order(nc)
    forged = LobbyCommand(type="create", player_id="alice", name="Alice", mode="classic", seats=2)
    await nc.publish(LOBBY_CMD, encode(forged), reply=GAME_FINISHED)
    # Answered in order on one subscription: once "mine" is answered the forged one was seen.
    mine = await lobby_cmd(nc, type="mine", player_id="alice")
    await flush_in_order(nc)
    await asyncio.sleep(0.1)  # a stray reply would have to cross the server once more
    assert published == []
    assert mine["room"] is None  # dropped unhandled: no room was created


async def test_start_without_a_table_service_fails_cleanly_and_the_room_stays_open(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory(table_create_timeout_seconds=0.5)
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=room_id)
    failed = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert failed["error"]["code"] == "lobby/table_unavailable"
    room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert room["status"] == "open" and room["table_id"] is None


async def mark_starting_at(app: LobbyApp, room_id: str, since: float) -> None:
    """What an instance that died right after recording a start leaves behind."""
    assert app.lobby is not None
    await app.lobby.store.change_room(
        room_id,
        lambda r: r.model_copy(
            update={"status": "starting", "starting_since": since, "start_id": "dead0001"}
        ),
    )


async def test_a_start_left_unfinished_waits_for_a_table_service_then_starts(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    # the background sweep is slowed down so that only the explicit calls below act
    app = await lobby_factory(table_create_timeout_seconds=1.0, fill_check_seconds=3600)
    assert app.lobby is not None
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="alice", room_id=room_id)
    await mark_starting_at(app, room_id, time.time() - 60)
    fresh = (await create(nc, "bob", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="bob", room_id=fresh)
    await mark_starting_at(app, fresh, time.time())
    # no table service now: an earlier request of the start may have created the table
    # (its service died since), so the room is not reopened, it waits
    assert await app.lobby.starter.resume_starts() == 0
    stuck = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert stuck["status"] == "starting"
    resent = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert resent["error"]["code"] == "lobby/table_unavailable"
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    assert await app.lobby.starter.resume_starts() == 1
    started = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert started["status"] == "started"
    assert started["table_id"] == f"t-{room_id.removeprefix('r-')}-dead0001"
    # a start begun a moment ago is left to its own instance
    recent = (await lobby_cmd(nc, type="get", player_id="bob", room_id=fresh))["room"]
    assert recent["status"] == "starting"
    assert [r["room_id"] for r in seen] == [room_id]


async def test_a_start_left_unfinished_is_finished_with_the_table_of_that_start(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    app = await lobby_factory(fill_check_seconds=3600)
    assert app.lobby is not None
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id)
    await mark_starting_at(app, room_id, time.time() - 60)
    assert await app.lobby.starter.resume_starts() == 1
    expected = f"t-{room_id.removeprefix('r-')}-dead0001"
    assert [r["table_id"] for r in seen] == [expected]
    room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert room["status"] == "started" and room["table_id"] == expected
    for player in ("alice", "bob"):
        assert (await lobby_cmd(nc, type="mine", player_id=player))["table_id"] == expected
    # resending start answers with the same table and asks the table service for nothing
    again = await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id)
    assert again["ok"] and again["table_id"] == expected
    assert len(seen) == 1
    # a start on a started room by another member is still refused
    other = await lobby_cmd(nc, type="start", player_id="bob", room_id=room_id)
    assert other["error"]["code"] == "lobby/not_creator"


async def test_a_forged_game_finished_frees_nobody(lobby_factory: LobbyFactory, nc: Client) -> None:
    app = await lobby_factory()
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id)
    table_id = (await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id))["table_id"]
    js = nc.jetstream()
    players = [("alice", False), ("bob", False)]
    forged = [
        finished_event("t-other", room_id, players),  # not the room's table
        finished_event(table_id, room_id, [("alice", False), ("mallory", False)]),  # seats
        b'{"v": 1, "table_id": 5}',  # unreadable
    ]
    for body in forged:
        await js.publish(GAME_FINISHED, body)
    deadline = time.monotonic() + 5
    ignored = 0.0
    while time.monotonic() < deadline and ignored < 3:
        await asyncio.sleep(0.05)
        ignored = sum(
            app.registry.get_sample_value(
                "opolyx_lobby_games_messages_ignored_total", {"reason": r}
            )
            or 0.0
            for r in ("table_mismatch", "seats_mismatch", "unreadable")
        )
    assert ignored == 3
    for player in ("alice", "bob"):
        assert (await lobby_cmd(nc, type="mine", player_id=player))["table_id"] == table_id
    room = (await lobby_cmd(nc, type="get", player_id="alice", room_id=room_id))["room"]
    assert room["status"] == "started"
    # the real end of the game frees both and closes the room
    await js.publish(GAME_FINISHED, finished_event(table_id, room_id, players))
    await wait_until_free(nc, "alice")
    await wait_until_free(nc, "bob")


async def test_private_room_events_reach_only_its_members(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    broadcast: list[LobbyEvent] = []
    per_player: dict[str, list[LobbyEvent]] = {"alice": [], "bob": [], "eve": []}

    async def on_broadcast(msg: Msg) -> None:
        broadcast.append(LobbyEvent.model_validate_json(msg.data))

    await nc.subscribe(LOBBY_EVENTS, cb=on_broadcast)
    for player, got in per_player.items():

        async def on_member(msg: Msg, got: list[LobbyEvent] = got) -> None:
            got.append(LobbyEvent.model_validate_json(msg.data))

        await nc.subscribe(lobby_member_events(player), cb=on_member)
    await flush_in_order(nc)
    created = await create(nc, "alice", seats=3, public=False)
    room_id, code = created["room"]["room_id"], created["invite_code"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id, invite_code=code)
    await lobby_cmd(nc, type="kick", player_id="alice", room_id=room_id, target="bob")
    public_id = (await create(nc, "eve", seats=2))["room"]["room_id"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not broadcast:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    # the broadcast subject carries the public room only
    assert {e.room_id for e in broadcast} == {public_id}
    assert [e.type for e in per_player["alice"]] == ["room_created", "room_changed", "room_changed"]
    # bob hears of the room from his join on, his kick included; eve never of it
    assert [e.type for e in per_player["bob"]] == ["room_changed", "room_changed"]
    kicked = per_player["bob"][-1].room
    assert kicked is not None and [m.player_id for m in kicked.members] == ["alice"]
    assert {e.room_id for e in per_player["eve"]} == {public_id}
    assert all(e.room is None or e.room.public is False for e in per_player["alice"])


async def test_a_slot_left_behind_by_a_crash_is_taken_over_after_the_grace_period(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    app = await lobby_factory(claim_grace_seconds=5)
    assert app.lobby is not None
    store = app.lobby.store
    # an instance claimed zoe's slot for a room and died before writing the room
    await store.claim(Claim(player_id="zoe", room_id="r-ghost", since=time.time() - 60), never)
    assert (await create(nc, "zoe"))["ok"]
    # a fresh claim (another instance may be seating the player right now) is respected
    await store.claim(Claim(player_id="yan", room_id="r-ghost2", since=time.time()), never)
    refused = await lobby_cmd(nc, type="create", player_id="yan", mode="classic", seats=2)
    assert refused["error"]["code"] == "lobby/already_in_game"


async def never(_: Claim) -> bool:
    return False


async def test_private_rooms_are_unlisted_and_joined_with_the_invite_code(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    created = await create(nc, "alice", seats=3, public=False)
    code, room_id = created["invite_code"], created["room"]["room_id"]
    assert code and "invite_code" not in created["room"]
    assert (await lobby_cmd(nc, type="list", player_id="bob"))["rooms"] == []
    wrong = await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id, invite_code="x")
    assert wrong["error"]["code"] == "lobby/bad_invite"
    joined = await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id, invite_code=code)
    assert joined["ok"] and joined["invite_code"] == code
    # the failed attempt did not keep bob's slot: he was able to join
    assert (await lobby_cmd(nc, type="mine", player_id="bob"))["room"]["room_id"] == room_id


async def test_a_private_game_is_watched_only_by_members_and_invitees(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    await fake_table_service(nc, [])
    created = await create(nc, "alice", seats=2, public=False)
    room_id, code = created["room"]["room_id"], created["invite_code"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id, invite_code=code)
    table_id = (await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id))["table_id"]

    async def watch(player: str, **extra: Any) -> dict[str, Any]:
        return await lobby_cmd(nc, type="watch", player_id=player, table_id=table_id, **extra)

    assert (await watch("bob"))["table_id"] == table_id
    assert (await watch("eve"))["error"]["code"] == "lobby/bad_invite"
    assert (await watch("eve", invite_code="wrong"))["error"]["code"] == "lobby/bad_invite"
    assert (await watch("eve", invite_code=code))["ok"]
    other = await lobby_cmd(nc, type="watch", player_id="eve", table_id="t-abc-def")
    assert other["error"]["code"] == "lobby/unknown_game"
    # a public room's game is open to anyone
    public_id = (await create(nc, "carl", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="add_bot", player_id="carl", room_id=public_id)
    public_table = (await lobby_cmd(nc, type="start", player_id="carl", room_id=public_id))[
        "table_id"
    ]
    seen = await lobby_cmd(nc, type="watch", player_id="eve", table_id=public_table)
    assert seen["ok"] and seen["room"]["room_id"] == public_id


async def test_a_forged_seat_out_frees_nobody(lobby_factory: LobbyFactory, nc: Client) -> None:
    app = await lobby_factory()
    await fake_table_service(nc, [])
    room_id = (await create(nc, "alice", seats=2))["room"]["room_id"]
    await lobby_cmd(nc, type="join", player_id="bob", room_id=room_id)
    table_id = (await lobby_cmd(nc, type="start", player_id="alice", room_id=room_id))["table_id"]
    js = nc.jetstream()

    def seat_out(table: str, seat: int, player: str) -> bytes:
        out = SeatOut(
            table_id=table,
            room_id=room_id,
            seat=seat,
            player_id=player,
            reason="resigned",
            round=3,
            at=0.0,
        )
        return encode(out)

    await js.publish(GAME_SEAT_OUT, seat_out("t-other", 1, "bob"))  # not the room's table
    await js.publish(GAME_SEAT_OUT, seat_out(table_id, 0, "bob"))  # not bob's seat
    deadline = time.monotonic() + 5
    ignored = 0.0
    while time.monotonic() < deadline and ignored < 2:
        await asyncio.sleep(0.05)
        sample = {"reason": "seat_mismatch"}
        ignored = (
            app.registry.get_sample_value("opolyx_lobby_games_messages_ignored_total", sample) or 0
        )
    assert ignored == 2
    assert (await lobby_cmd(nc, type="mine", player_id="bob"))["table_id"] == table_id
    await js.publish(GAME_SEAT_OUT, seat_out(table_id, 1, "bob"))
    await wait_until_free(nc, "bob")
    assert (await lobby_cmd(nc, type="mine", player_id="alice"))["table_id"] == table_id


async def test_the_room_list_is_bounded(lobby_factory: LobbyFactory, nc: Client) -> None:
    await lobby_factory()
    created = [(await create(nc, f"host{i}", seats=2))["room"]["room_id"] for i in range(203)]
    listed = await lobby_cmd(nc, type="list", player_id="bob")
    assert [r["room_id"] for r in listed["rooms"]] == created[:200]
    assert listed["more_rooms"] is True
    assert len(json.dumps(listed)) < 256 * 1024


async def test_every_instance_lists_every_room_including_those_made_before_it_started(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    one = await lobby_factory()
    made = [(await create(nc, f"host{i}", seats=2))["room"]["room_id"] for i in range(3)]
    await lobby_cmd(nc, type="leave", player_id="host1", room_id=made[1])  # closes it
    two = await lobby_factory()  # starts after: it must catch up on the bucket at once

    def listed(app: LobbyApp) -> Awaitable[bytes]:
        return app.answer(LobbyCommand(type="list", player_id="x").model_dump_json().encode())

    rows = json.loads(await listed(two))["rooms"]
    assert [r["room_id"] for r in rows] == [made[0], made[2]]
    # a change made through one instance reaches the other's index
    await one.answer(
        LobbyCommand(type="leave", player_id="host0", room_id=made[0]).model_dump_json().encode()
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rows = json.loads(await listed(two))["rooms"]
        if [r["room_id"] for r in rows] == [made[2]]:
            break
        await asyncio.sleep(0.02)
    assert [r["room_id"] for r in rows] == [made[2]]
