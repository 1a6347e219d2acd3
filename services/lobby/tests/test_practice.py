"""Practice rooms ("play from here", issue 16) through a real nats-server: the player at
the chosen seat, bots at the others, private, started at once with the fork source."""

from __future__ import annotations

from typing import Any

from nats.aio.client import Client
from test_lobby_nats import LobbyFactory, fake_table_service, lobby_cmd


async def test_a_practice_room_seats_the_player_and_bots_and_starts_the_fork(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    seen: list[dict[str, Any]] = []
    await fake_table_service(nc, seen)
    reply = await lobby_cmd(
        nc,
        type="practice",
        player_id="alice",
        name="Alice",
        table_id="t-old-game",
        step=7,
        mode="classic",
        seats=3,
        seat=1,
    )
    assert reply["ok"], reply
    room = reply["room"]
    assert room["status"] == "started" and not room["public"]
    assert reply["table_id"] == room["table_id"]
    (request,) = seen
    assert request["fork"] == {"table_id": "t-old-game", "step": 7}
    assert [s["bot"] for s in request["seats"]] == [True, False, True]
    assert request["seats"][1]["player_id"] == "alice"
    assert len({s["player_id"] for s in request["seats"]}) == 3
    assert (await lobby_cmd(nc, type="mine", player_id="alice"))["table_id"] == reply["table_id"]
    # Nobody else can join it, and the player is in one game at a time.
    joined = await lobby_cmd(nc, type="join", player_id="bob", room_id=room["room_id"])
    assert not joined["ok"]
    again = await lobby_cmd(
        nc,
        type="practice",
        player_id="alice",
        table_id="t-old-game",
        step=1,
        mode="classic",
        seats=3,
    )
    assert again["error"]["code"] == "lobby/already_in_game"


async def test_a_practice_request_without_its_source_or_seat_is_refused(
    lobby_factory: LobbyFactory, nc: Client
) -> None:
    await lobby_factory()
    missing = await lobby_cmd(nc, type="practice", player_id="bob", mode="classic", seats=2)
    assert missing["error"]["code"] == "lobby/bad_request"
    no_seat = await lobby_cmd(
        nc,
        type="practice",
        player_id="bob",
        table_id="t-x",
        step=0,
        mode="classic",
        seats=2,
        seat=4,
    )
    assert no_seat["error"]["code"] == "lobby/bad_request"
    bad_id = await lobby_cmd(
        nc, type="practice", player_id="bob", table_id="t.x", step=0, mode="classic", seats=2
    )
    assert bad_id["error"]["code"] == "lobby/bad_request"
    # Refusals leave the player free to play.
    free = await lobby_cmd(nc, type="create", player_id="bob", mode="classic", seats=2)
    assert free["ok"], free
