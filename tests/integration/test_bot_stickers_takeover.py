"""A game's end announced twice (a table taken over in the middle of announcing it) gets one
goodbye sticker in the table's chat, not two.

The table announces the end on GAMES and then writes the snapshot that records it; an
instance that dies between the two leaves a snapshot saying "not announced yet", and the
instance that takes the table over announces again. GAMES keeps one copy (the message id
dedupes it), but the bots hear `game.finished` live: a core subscriber gets every publish,
the deduplicated one too, so a worker hears the end twice. The worker that said goodbye
remembers it; any other worker of the queue group (a second replica, or the same one
restarted) does not, so chat must take one goodbye per game, whoever asks.

Here, for real: two table instances as processes sharing the partitions, the lobby, chat
and bot workers as their NATS roles on a real nats-server. A room of a human and a bot; the
human resigns, the game ends, the bot says goodbye. Then the table's owner is stopped, its
snapshot is put back to what the crash window leaves (the end not recorded as announced),
the owner is killed, the other instance takes the table over and announces the end again,
to a bot worker that has not heard it before. Chat's own duplicate rule (the same sticker
from the same sender within a while) is per chat instance, so a repeat that reaches
another of the deployment's instances passes it: the window is 0 here so the test does
not depend on which instance the queue group picks.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.errors import KeyNotFoundError
from opolyx_bots.worker import BotsSettings, BotWorker
from opolyx_chat.app import ChatApp
from opolyx_contracts.chat import (
    CHAT_DUPLICATE,
    ChatMessage,
    sticker_for,
)
from opolyx_contracts.envelope import ErrorReply, decode, parse_json_object
from opolyx_contracts.lobby import bot_persona
from opolyx_contracts.subjects import (
    CHAT_STREAM,
    CHAT_STREAM_SUBJECTS,
    GAME_FINISHED,
    GAMES_STREAM,
    TABLE_LEASES_BUCKET,
    TABLES_BUCKET,
    chat_messages,
    table_partition,
)
from opolyx_contracts.table import GameFinished
from opolyx_lobby.app import LobbyApp
from opolyx_service import flush_in_order
from opolyx_service.settings import HttpSettings
from opolyx_testing import ServiceProcess, read_stored
from opolyx_testing.chaos import owner_of, start_service
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ServiceProcesses

from .lobby_steps import lobby_ok, resign

HUMAN = "hana"
INSTANCES = ("left", "right")


async def wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Worker:
    """A bot worker as the bots role, every moment a sticker; the chat replies it got."""

    def __init__(self, server: NatsServer) -> None:
        self.worker = BotWorker(
            BotsSettings(nats=server.settings_for("bots"), http=HttpSettings(port=-1))
        )
        self.worker.stickers.moments.chance = 1.0
        self.replies: list[dict[str, Any]] = []
        send = self.worker.stickers.request

        async def spy(body: bytes, subject: str, timeout: float) -> object:
            reply = await send(body, subject, timeout)
            self.replies.append(parse_json_object(reply.body))  # type: ignore[attr-defined]
            return reply

        self.worker.stickers.request = spy


async def test_a_game_end_announced_again_after_a_takeover_gets_one_goodbye_sticker(
    nats_server: NatsServer,
    nc: Client,
    service_processes: ServiceProcesses,
    lobby_app: LobbyApp,
    chat_app: ChatApp,
) -> None:
    env = {"OPOLYX_TABLE__LEASE_TTL": "30", "OPOLYX_TABLE__HEARTBEAT": "0.5"}
    started = await asyncio.gather(
        *(
            start_service(
                service_processes, nats_server, "table", name, {**env, "OPOLYX_INSTANCE_ID": name}
            )
            for name in INSTANCES
        )
    )
    tables: dict[str, ServiceProcess] = dict(zip(INSTANCES, started, strict=True))
    leases = await nc.jetstream().key_value(TABLE_LEASES_BUCKET)

    async def shared() -> bool:
        holders = set()
        for partition in range(16):
            try:
                holders.add((await leases.get(f"p.{partition}")).value)
            except KeyNotFoundError:
                continue
        return holders == {name.encode() for name in INSTANCES}

    await wait_for(shared, 60, "both table instances to hold partitions")

    heard: list[GameFinished] = []  # every live `game.finished`, as a bot worker hears it
    said: list[ChatMessage] = []  # every message of the table channels, live

    async def on_finished(msg: Msg) -> None:
        heard.append(GameFinished.model_validate_json(msg.data))

    async def on_chat(msg: Msg) -> None:
        said.append(ChatMessage.model_validate_json(msg.data))

    await nc.subscribe(GAME_FINISHED, cb=on_finished)
    await nc.subscribe(CHAT_STREAM_SUBJECTS, cb=on_chat)
    await flush_in_order(nc)

    first = Worker(nats_server)
    await first.worker.start()
    second: Worker | None = None
    try:
        created = await lobby_ok(
            nc, type="create", player_id=HUMAN, name="Hana", mode="blitz", seats=2
        )
        room_id = created["room"]["room_id"]

        async def filled() -> bool:
            room = (await lobby_ok(nc, type="get", player_id=HUMAN, room_id=room_id))["room"]
            return len(room["members"]) == 2

        await wait_for(filled, 30, "the lobby to seat a bot")
        starting = await lobby_ok(nc, type="start", player_id=HUMAN, room_id=room_id)
        table_id = str(starting["table_id"])
        await resign(nc, table_id, HUMAN)

        def goodbyes() -> list[ChatMessage]:
            return [m for m in said if m.channel == f"t_{table_id}" and m.bot]

        async def first_goodbye() -> bool:
            return len(heard) == 1 and len(goodbyes()) == 1 and len(first.replies) == 1

        await wait_for(first_goodbye, 90, "the game's end and the bot's goodbye")
        game = heard[0]
        bot = next(s.player_id for s in game.seats if s.bot)
        persona = bot_persona(bot)
        assert persona is not None
        assert [(m.sender_id, m.sticker) for m in goodbyes()] == [
            (bot, sticker_for(persona.style, "game_end"))
        ]

        # The worker that said goodbye is replaced (a deploy, a crash): its successor has
        # not heard this game end.
        await first.worker.stop()
        second = successor = Worker(nats_server)
        await successor.worker.start()

        # The owner dies between announcing the end and recording it in the snapshot.
        owner = await owner_of(nc, table_id)
        survivor = next(name for name in INSTANCES if name != owner)
        tables[owner].send_signal(signal.SIGSTOP)
        snapshots = await nc.jetstream().key_value(TABLES_BUCKET)
        key = f"{table_partition(table_id)}.{table_id}"
        snapshot = json.loads((await snapshots.get(key)).value or b"{}")
        assert snapshot["finished"]
        await snapshots.put(key, json.dumps({**snapshot, "finish_announced": False}).encode())
        tables[owner].kill()

        async def announced_again() -> bool:
            return len(heard) == 2 and len(successor.replies) == 1

        await wait_for(announced_again, 60, "the survivor to announce the end again")
        assert await owner_of(nc, table_id) == survivor
        again = heard[1]
        assert (again.table_id, again.placement) == (game.table_id, game.placement)
        # GAMES holds the end once: the stream deduplicated the second announcement
        stored_ends = await read_stored(nc, GAMES_STREAM, GAME_FINISHED, GameFinished)
        assert stored_ends == [game]

        # chat took the first goodbye and refused the second: one in the stored history
        reply = successor.replies[0]
        assert not reply.get("ok"), reply
        assert decode(ErrorReply, reply).error.code == CHAT_DUPLICATE
        stored = await read_stored(nc, CHAT_STREAM, chat_messages(f"t_{table_id}"), ChatMessage)
        assert [(m.sender_id, m.sticker) for m in stored if m.bot] == [
            (bot, sticker_for(persona.style, "game_end"))
        ]
        assert len(goodbyes()) == 1
    finally:
        if second is not None:
            await second.worker.stop()
        else:
            await first.worker.stop()
    assert nats_server.permission_violations() == []
