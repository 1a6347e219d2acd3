"""A bot says goodbye at the end of a real game: a room of one human and three bots started
through the lobby, the human resigns, the bots play on to the end through the table service
and a bot worker process, the table announces the end on GAMES, the lobby closes the room,
and the best placed bot's end-of-game sticker (its persona's) reaches the table's chat.
Real nats-server, the table and the bots as processes, every party as its NATS role."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_chat.app import ChatApp
from opolyx_contracts.chat import ChatMessage, sticker_for
from opolyx_contracts.lobby import bot_persona
from opolyx_contracts.subjects import CHAT_STREAM_SUBJECTS, GAME_FINISHED
from opolyx_contracts.table import GameFinished
from opolyx_lobby.app import LobbyApp
from opolyx_service import flush_in_order
from opolyx_testing import script_path
from opolyx_testing.nats_server import NatsServer

from .lobby_steps import lobby_ok, resign

HUMAN = "hana"


async def test_at_the_end_of_a_real_game_the_best_placed_bot_posts_its_goodbye_sticker(
    nats_server: NatsServer,
    nc: Client,
    lobby_app: LobbyApp,
    chat_app: ChatApp,
    service_processes: Any,
) -> None:
    env = {"OPOLYX_LOG__LEVEL": "WARNING"}
    table = service_processes.start(
        [script_path("opolyx-table")],
        {**env, **nats_server.env_for("table"), "OPOLYX_TABLE__BOT_REASK": "0.5"},
        name="table",
    )
    bots = service_processes.start(
        [script_path("opolyx-bots")],
        {**env, **nats_server.env_for("bots"), "OPOLYX_BOTS__STICKER_CHANCE": "1"},
        name="bots",
    )
    for process in (table, bots):
        await process.wait_ready(120)  # imports alone took over 30 s on 2 loaded cores

    said: list[ChatMessage] = []  # every table channel's messages, in arrival order
    ended: list[tuple[int, GameFinished]] = []  # the end, and how much had been said by then

    async def on_chat(msg: Msg) -> None:
        said.append(ChatMessage.model_validate_json(msg.data))

    async def on_finished(msg: Msg) -> None:
        ended.append((len(said), GameFinished.model_validate_json(msg.data)))

    await nc.subscribe(CHAT_STREAM_SUBJECTS, cb=on_chat)
    await nc.subscribe(GAME_FINISHED, cb=on_finished)
    await flush_in_order(nc)

    created = await lobby_ok(nc, type="create", player_id=HUMAN, name="Hana", mode="blitz", seats=4)
    room_id = created["room"]["room_id"]
    room: dict[str, Any] = created["room"]
    deadline = time.monotonic() + 10
    while len(room["members"]) < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        room = (await lobby_ok(nc, type="get", player_id=HUMAN, room_id=room_id))["room"]
    table_id = str((await lobby_ok(nc, type="start", player_id=HUMAN, room_id=room_id))["table_id"])
    # the human leaves at once (resigning carries no version): the bots play the game out
    await resign(nc, table_id, HUMAN)

    def goodbye() -> list[ChatMessage]:
        if not ended:
            return []
        at, _ = ended[0]
        return [m for m in said[at:] if m.channel == f"t_{table_id}" and m.bot]

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not goodbye():
        await asyncio.sleep(0.2)
    assert ended, "the bots did not finish the game in time"
    _, game = ended[0]
    assert game.table_id == table_id
    # with every chance taken, the best placed roster bot is the one who speaks
    by_seat = {s.seat: s for s in game.seats}
    best = next(by_seat[s].player_id for s in game.placement if by_seat[s].bot)
    persona = bot_persona(best)
    assert persona is not None
    assert (best, sticker_for(persona.style, "game_end")) in [
        (m.sender_id, m.sticker) for m in goodbye()
    ]
    # the lobby closes the room on the same announcement (whether before or after the
    # sticker reached chat: chat takes a goodbye either way, tested in services/bots)
    assert chat_app.directory is not None
    for _ in range(100):
        if chat_app.directory.known(room_id) is None:
            break
        await asyncio.sleep(0.1)
    assert chat_app.directory.known(room_id) is None
    if nats_server.is_local_process:
        assert nats_server.permission_violations() == []
