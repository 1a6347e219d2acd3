"""Bot stickers: the moments read from consecutive decision requests of a table and the
farewell at a game's end (unit); a sticker posted as the bots role reaching the real chat
service's history, and the real worker hearing `game.finished` (published to GAMES as the
table does) and saying goodbye in the finished table's chat unless the room turned bot
stickers off, on a real nats-server (integration)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import StreamConfig
from opolyx_bots.stickers import StickerMoments, StickerPoster
from opolyx_bots.worker import BotsSettings, BotWorker
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_contracts.chat import (
    CHAT_BOT_STICKERS_OFF,
    BotSticker,
    ChatHistory,
    ChatHistoryRequest,
    ChatMessage,
    ChatSettingsReply,
    ChatSettingsRequest,
    sticker_for,
)
from opolyx_contracts.envelope import ErrorReply, decode, encode, parse_json_object
from opolyx_contracts.subjects import (
    CHAT_SETTINGS,
    GAME_FINISHED,
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
    ROOMS_BUCKET,
    chat_history,
    chat_messages,
)
from opolyx_contracts.table import DecisionRequest, GameFinished
from opolyx_lobby.rooms import Member, Room
from opolyx_rules import new_game, public_view
from opolyx_service import flush_in_order
from opolyx_service.connection import ensure_kv
from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import HttpSettings
from opolyx_testing.finished_games import finished_game, seat_result
from opolyx_testing.nats_server import NatsServer

BOT = "bot-kemi"


def request(
    table: str = "t-1",
    seat: int = 1,
    out_count: int = 0,
    auction: int | None = None,
    owners: dict[int, int] | None = None,
) -> DecisionRequest:
    view: dict[str, Any] = public_view(new_game("classic", 3, 5))
    view["out_count"] = out_count
    view["pending"] = (
        {"kind": "auction", "seat": seat, "square": auction, "deadline": 10.0}
        if auction is not None
        else None
    )
    for square in view["squares"]:
        square["owner"] = (owners or {}).get(square["square"], square["owner"])
    return DecisionRequest.model_validate(
        {
            "table_id": table,
            "seat": seat,
            "player_id": BOT,
            "command_subject": f"opolyx.table.0.{table}.bot",
            "command_id": "c",
            "version": 1,
            "attempt": 1,
            "state": view,
            "legal": [],
            "deadline_at": None,
        }
    )


def always() -> StickerMoments:
    return StickerMoments(random.Random(1), chance=1.0)


def said(sticker: BotSticker | None) -> tuple[str, str] | None:
    """A sticker as (occasion, moment): what chat posts once per table."""
    return None if sticker is None else (sticker.occasion, sticker.moment)


def test_a_new_bankruptcy_is_a_moment_once() -> None:
    moments = always()
    assert moments.moment(request(out_count=0)) is None  # the first look sets the scene
    assert said(moments.moment(request(out_count=1))) == ("bankruptcy", "1")
    assert moments.moment(request(out_count=1)) is None  # the same state again (a re-ask)
    assert moments.moment(request(table="t-2", out_count=3)) is None  # another table
    assert said(moments.moment(request(out_count=3))) == ("bankruptcy", "3")


def test_two_workers_seeing_one_bankruptcy_name_the_same_moment() -> None:
    # the table's requests are shared between workers: each saw a different one before
    one, two = always(), always()
    one.moment(request(out_count=0, seat=1))
    two.moment(request(out_count=0, seat=2))
    first = one.moment(request(out_count=1, seat=1))
    second = two.moment(request(out_count=1, seat=2))
    assert first is not None and second is not None
    assert (first.table_id, first.occasion, first.moment) == (
        second.table_id,
        second.occasion,
        second.moment,
    )


def test_an_older_request_redelivered_after_a_newer_one_names_the_same_bankruptcy_again() -> None:
    # a request nacked while the table was being taken over comes back after newer ones:
    # this worker then reads the same bankruptcy twice, under the same name, which chat
    # takes once
    moments = always()
    moments.moment(request(out_count=0))
    assert said(moments.moment(request(out_count=1))) == ("bankruptcy", "1")
    assert moments.moment(request(out_count=0)) is None  # the redelivered older request
    assert said(moments.moment(request(out_count=1))) == ("bankruptcy", "1")


def test_an_auction_won_by_this_bot_is_a_good_auction_and_one_lost_is_not() -> None:
    moments = always()
    auction = request(auction=6).state
    assert moments.moment(request(auction=6)) is None
    # named by square, round and the seat whose turn it is: the same in every request of it
    moment = f"6-{auction.round}-{auction.current_seat}"
    assert said(moments.moment(request(owners={6: 1}))) == ("good_auction", moment)
    assert moments.moment(request(auction=8)) is None
    assert moments.moment(request(owners={8: 0})) is None  # seat 0 got it


def test_moments_are_only_sometimes_stickers() -> None:
    moments = StickerMoments(random.Random(3), chance=0.4)
    hits = 0
    for n in range(200):
        moments.moment(request(table=f"t{n}", out_count=0))
        hits += said(moments.moment(request(table=f"t{n}", out_count=1))) == ("bankruptcy", "1")
    assert 40 < hits < 120


def finished(
    table: str = "t-1", seats: tuple[tuple[str, bool], ...] = (), placement: list[int] | None = None
) -> GameFinished:
    """A finished game of `seats` (player id, bot), placed in seat order unless `placement`."""
    results = [
        seat_result(n, player, bot=bot, place=n + 1, survived=n == 0)
        for n, (player, bot) in enumerate(seats)
    ]
    return finished_game(table, results, room_id="r-1", placement=placement)


def test_at_the_end_of_a_game_the_best_placed_roster_bot_may_say_goodbye_once() -> None:
    moments = always()
    seats = (("alice", False), ("bot-kemi", True), ("bot-ada", True), ("bot-x", True))
    # alice won, then Ada, then Kemi; "bot-x" is a bot of no persona (not on the roster)
    game = finished(seats=seats, placement=[0, 2, 1, 3])
    goodbye = moments.farewell(game)
    assert goodbye is not None
    # one per game, whichever bot: chat's moment is the table and the occasion alone
    assert (goodbye.table_id, goodbye.bot_id, goodbye.occasion, goodbye.moment) == (
        "t-1",
        "bot-ada",
        "game_end",
        "",
    )
    assert moments.farewell(game) is None  # the same announcement heard again
    assert moments.farewell(finished("t-2", seats=(("alice", False), ("bob", False)))) is None
    assert moments.farewell(finished("t-3", seats=(("bot-x", True),))) is None


def test_the_end_of_a_game_gets_a_sticker_only_sometimes_and_one_at_most() -> None:
    moments = StickerMoments(random.Random(5), chance=0.4)
    seats = (("bot-kemi", True), ("bot-ada", True), ("bot-luca", True))
    goodbyes = [moments.farewell(finished(f"t{n}", seats=seats)) for n in range(300)]
    # each bot in turn with the chance: someone speaks in 1 - 0.6^3 = 78% of the games
    assert 180 < sum(s is not None for s in goodbyes) < 280
    assert {s.bot_id for s in goodbyes if s is not None} == {"bot-kemi", "bot-ada", "bot-luca"}


async def _games_stream(admin: Client) -> None:
    """GAMES as the table service declares it."""
    await admin.jetstream().add_stream(
        StreamConfig(name=GAMES_STREAM, subjects=[GAMES_STREAM_SUBJECTS])
    )


async def test_the_worker_hears_a_game_end_and_a_bot_says_goodbye_unless_the_room_said_no(
    nats_server: NatsServer,
) -> None:
    admin = await nats_server.connect()
    await _games_stream(admin)
    kv = await ensure_kv(admin.jetstream(), ROOMS_BUCKET)
    members = (
        Member(player_id="alice", name="Alice"),
        Member(player_id=BOT, name="Kemi", bot=True, style="shark"),
    )

    def room(room_id: str, table_id: str) -> Room:
        return Room(
            room_id=room_id,
            mode="classic",
            seat_count=3,
            public=True,
            invite_code=None,
            creator="alice",
            members=members,
            status="started",
            created_at=1.0,
            waiting_since=1.0,
            table_id=table_id,
        )

    chat = ChatApp(
        ChatSettings(
            nats=nats_server.settings_for("chat"),
            http=HttpSettings(port=-1),
            chat=ChatSection(operator=OperatorSettings(port=-1)),
        )
    )
    chat_nc = await nats_server.connect("chat")
    await chat.start(chat_nc)
    gateway = await nats_server.connect("gateway")
    worker = BotWorker(
        BotsSettings(nats=nats_server.settings_for("bots"), http=HttpSettings(port=-1))
    )
    worker.stickers.moments.chance = 1.0
    replies: list[dict[str, Any]] = []
    request = worker.stickers.request

    async def spy(body: bytes, subject: str, timeout: float) -> object:
        reply = await request(body, subject, timeout)
        replies.append(parse_json_object(reply.body))  # type: ignore[attr-defined]
        return reply

    worker.stickers.request = spy
    delivered: list[ChatMessage] = []

    async def on_message(msg: Msg) -> None:
        delivered.append(ChatMessage.model_validate_json(msg.data))

    await worker.start()
    try:
        # the players still at the table keep hearing its channel (the gateway's subscription)
        for table in ("t-1", "t-2"):
            await gateway.subscribe(chat_messages(f"t_{table}"), cb=on_message)
        await flush_in_order(gateway)
        for room_id, table in (("r-1", "t-1"), ("r-2", "t-2")):
            await kv.put(room_id, room(room_id, table).model_dump_json().encode())
        off = ChatSettingsRequest(player_id="alice", room_id="r-2", bot_stickers=False)
        for _ in range(200):  # r-2's record may reach chat a moment after the put
            answer = parse_json_object((await gateway.request(CHAT_SETTINGS, encode(off))).data)
            if answer.get("ok"):
                break
            await asyncio.sleep(0.02)
        assert not decode(ChatSettingsReply, answer).settings.bot_stickers
        # the game ends: the lobby closes the room as it reads GAMES, maybe before chat
        # hears from the bot, so here the room is gone first
        for room_id in ("r-1", "r-2"):
            await kv.delete(room_id)
        assert chat.directory is not None
        for _ in range(500):
            if chat.directory.known("r-1") is None and chat.directory.known("r-2") is None:
                break
            await asyncio.sleep(0.01)
        js = admin.jetstream()
        for table in ("t-2", "t-1"):
            game = finished(table, seats=(("alice", False), (BOT, True)), placement=[1, 0])
            await js.publish(GAME_FINISHED, encode(game), stream=GAMES_STREAM)
        for _ in range(500):
            if len(replies) == 2 and delivered:
                break
            await asyncio.sleep(0.01)
    finally:
        await worker.stop()
        await chat.stop()
        for nc in (gateway, chat_nc, admin):
            await nc.drain()
    assert [(m.channel, m.sender_id, m.bot, m.sticker) for m in delivered] == [
        ("t_t-1", BOT, True, sticker_for("shark", "game_end"))
    ]
    refusals = [decode(ErrorReply, r).error.code for r in replies if not r.get("ok")]
    assert refusals == [CHAT_BOT_STICKERS_OFF]
    assert nats_server.permission_violations() == []


async def test_a_sticker_posted_as_the_bots_role_lands_in_the_tables_chat(
    nats_server: NatsServer,
) -> None:
    admin = await nats_server.connect()
    kv = await ensure_kv(admin.jetstream(), ROOMS_BUCKET)
    room = Room(
        room_id="r-1",
        mode="classic",
        seat_count=3,
        public=True,
        invite_code=None,
        creator="alice",
        members=(
            Member(player_id="alice", name="Alice"),
            Member(player_id=BOT, name="Kemi", bot=True, style="shark"),
        ),
        status="started",
        created_at=1.0,
        waiting_since=1.0,
        table_id="t-1",
    )
    await kv.put("r-1", room.model_dump_json().encode())
    chat = ChatApp(
        ChatSettings(
            nats=nats_server.settings_for("chat"),
            http=HttpSettings(port=-1),
            chat=ChatSection(operator=OperatorSettings(port=-1)),
        )
    )
    chat_nc = await nats_server.connect("chat")
    await chat.start(chat_nc)
    bots = await nats_server.connect("bots")
    gateway = await nats_server.connect("gateway")
    try:

        async def send(body: bytes, subject: str, timeout: float) -> object:
            return await bots.request(subject, body, timeout=timeout)

        poster = StickerPoster(send, random.Random(1))
        poster.moments.chance = 1.0
        poster.seen(request(out_count=0))
        poster.seen(request(out_count=1))
        messages: list[Any] = []
        for _ in range(200):
            reply = await gateway.request(
                chat_history("t_t-1"), encode(ChatHistoryRequest(player_id="alice")), timeout=5
            )
            messages = decode(ChatHistory, reply.data).messages
            if messages:
                break
            await asyncio.sleep(0.02)
        assert [(m.sender_id, m.bot, m.sticker) for m in messages] == [
            (BOT, True, sticker_for("shark", "bankruptcy"))
        ]
    finally:
        await chat.stop()
        for nc in (bots, gateway, chat_nc, admin):
            await nc.drain()
    assert nats_server.permission_violations() == []
