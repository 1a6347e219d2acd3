"""Property-based fuzzing of the lobby's command subject against a real nats-server.

Random and hostile bodies (garbage bytes, wrong versions, hostile ids and names, huge
numbers, commands out of order from a handful of players) each get a reply that is a
`LobbyReply` or a coded error the contract names (never `internal/error`), and afterwards
the lobby's state still holds: every room parses, none is over-full, every human in a room
holds a slot for exactly that room, and no slot points at a room that does not seat them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opolyx_contracts.errors import BAD_REQUEST, CONTRACT_VERSION_UNSUPPORTED, MALFORMED_JSON
from opolyx_contracts.lobby import LOBBY_ERROR_CODES, LobbyReply
from opolyx_lobby.app import LobbyApp
from opolyx_lobby.settings import LobbySection, LobbySettings
from opolyx_lobby.store import LobbyStore
from opolyx_service.settings import HttpSettings
from opolyx_testing.nats_server import NatsServer

ALLOWED_CODES = {*LOBBY_ERROR_CODES, BAD_REQUEST, MALFORMED_JSON, CONTRACT_VERSION_UNSUPPORTED}
PLAYERS = ["p1", "p2", "p3", "p4"]
HOSTILE = ["", "a.b", "*", ">", "x" * 200, "bot-ada", "r-", "t-1-2", "\u0410da", "\x00", " "]
TYPES = ["create", "list", "get", "mine", "join", "leave", "add_bot", "remove_bot", "kick"]
TYPES += ["start", "watch", "dance"]


@dataclass(frozen=True)
class RoomRef:
    """One of the rooms created so far (strategies cannot read the test's state)."""

    index: int

    def resolve(self, rooms: list[str]) -> str:
        return rooms[self.index % len(rooms)] if rooms else "r-none"


text = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=80))
player = st.one_of(st.sampled_from(PLAYERS), text)


@st.composite
def plausible(draw: st.DrawFn) -> dict[str, Any]:
    """A command a real client could send, from one of a few players."""
    who = draw(st.sampled_from(PLAYERS))
    kind = draw(st.sampled_from([*TYPES[:-1], "create", "join", "join", "add_bot", "start"]))
    body: dict[str, Any] = {"v": 1, "type": kind, "player_id": who}
    body["name"] = draw(st.sampled_from([who.upper(), f"Player {who}", "Ada", "\uff30" + who]))
    body["room_id"] = RoomRef(draw(st.integers(0, 7)))
    body["mode"] = draw(st.sampled_from(["classic", "blitz", "team"]))
    body["seats"] = draw(st.integers(2, 4))
    body["public"] = draw(st.booleans())
    body["target"] = draw(st.sampled_from(PLAYERS))
    if draw(st.booleans()) or kind == "remove_bot":
        body["bot_id"] = draw(st.sampled_from(["bot-ada", "bot-bruno", "bot-zed"]))
    return body


@st.composite
def hostile(draw: st.DrawFn) -> dict[str, Any]:
    """Anything at all in the fields."""
    body: dict[str, Any] = {"v": draw(st.sampled_from([1, 1, 1, 2, "1", None]))}
    body["type"] = draw(st.sampled_from(TYPES))
    body["player_id"] = draw(player)
    optional: dict[str, st.SearchStrategy[Any]] = {
        "name": st.one_of(st.sampled_from(["Ada", "Alice", "\uff21lice", "P 1"]), text),
        "room_id": st.one_of(st.integers(0, 7).map(RoomRef), text),
        "mode": st.sampled_from(["classic", "blitz", "team", "chess", "", "x" * 40]),
        "seats": st.one_of(st.integers(-3, 8), st.integers(), st.just("4")),
        "public": st.one_of(st.booleans(), st.just("yes")),
        "invite_code": text,
        "bot_id": st.one_of(st.sampled_from(["bot-ada", "bot-zed"]), text),
        "target": player,
        "table_id": text,
        "padding": st.text(max_size=3000),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            body[key] = draw(strategy)
    return body


@st.composite
def command(draw: st.DrawFn) -> bytes | dict[str, Any]:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=3000))
    return draw(hostile()) if kind < 4 else draw(plausible())


def encode_body(body: bytes | dict[str, Any], rooms: list[str]) -> bytes:
    """The wire body, room references resolved to the rooms made so far."""
    if isinstance(body, bytes):
        return body
    resolved = {k: (v.resolve(rooms) if isinstance(v, RoomRef) else v) for k, v in body.items()}
    return json.dumps(resolved).encode()


def check_reply(raw: bytes) -> LobbyReply | None:
    reply = json.loads(raw)
    assert isinstance(reply, dict) and reply.get("v") == 1
    if reply["ok"]:
        return LobbyReply.model_validate(reply)
    assert reply["error"]["code"] in ALLOWED_CODES, reply
    assert reply["error"]["message"]
    return None


async def check_state(store: LobbyStore) -> None:
    rooms = await store.all_rooms()
    for room in rooms:
        assert len(room.members) <= room.seat_count
        for member in room.humans:
            found = await store.get_claim(member.player_id)
            assert found is not None and found[0].room_id == room.room_id, (member, found)
    by_id = {r.room_id: r for r in rooms}
    for candidate in {*PLAYERS, *HOSTILE}:
        found = await store.get_claim(candidate) if candidate else None
        if found is not None:
            claimed = by_id.get(found[0].room_id)
            assert claimed is not None and claimed.member(candidate) is not None, found


def test_any_lobby_command_gets_a_coded_answer_and_the_state_stays_whole(
    nats_server: NatsServer,
) -> None:
    loop = asyncio.new_event_loop()
    app = LobbyApp(
        LobbySettings(
            nats=nats_server.settings_for("lobby"),
            http=HttpSettings(port=-1),
            lobby=LobbySection(bot_fill_after_seconds=3600, claim_grace_seconds=3600),
        )
    )
    loop.run_until_complete(app.start())
    rooms: list[str] = []
    try:

        @settings(
            max_examples=300,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(data=st.data())
        def one_command(data: st.DataObject) -> None:
            body = encode_body(data.draw(command()), rooms)
            reply = check_reply(loop.run_until_complete(app.answer(body)))
            if reply is not None and reply.room is not None and reply.room.room_id not in rooms:
                rooms.append(reply.room.room_id)
            assert app.lobby is not None
            loop.run_until_complete(check_state(app.lobby.store))

        one_command()
        assert rooms, "the fuzzing never made a room"
    finally:
        loop.run_until_complete(app.stop())
        leftover = asyncio.all_tasks(loop)  # nats-py's helpers of closed subscriptions
        for task in leftover:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
        loop.close()
