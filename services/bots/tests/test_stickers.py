"""Bot stickers: the moments read from consecutive decision requests of a table (unit), and a
sticker posted as the bots role reaching the real chat service's history on a real
nats-server (integration)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from opolyx_bots.stickers import StickerMoments, StickerPoster
from opolyx_chat.app import ChatApp
from opolyx_chat.settings import ChatSection, ChatSettings
from opolyx_contracts.chat import ChatHistory, ChatHistoryRequest, sticker_for
from opolyx_contracts.envelope import decode, encode
from opolyx_contracts.subjects import ROOMS_BUCKET, chat_history
from opolyx_contracts.table import DecisionRequest
from opolyx_lobby.rooms import Member, Room
from opolyx_rules import new_game, public_view
from opolyx_service.connection import ensure_kv
from opolyx_service.settings import HttpSettings
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


def test_a_new_bankruptcy_is_a_moment_once() -> None:
    moments = always()
    assert moments.moment(request(out_count=0)) is None  # the first look sets the scene
    assert moments.moment(request(out_count=1)) == "bankruptcy"
    assert moments.moment(request(out_count=1)) is None  # the same state again (a re-ask)
    assert moments.moment(request(table="t-2", out_count=3)) is None  # another table


def test_an_auction_won_by_this_bot_is_a_good_auction_and_one_lost_is_not() -> None:
    moments = always()
    assert moments.moment(request(auction=6)) is None
    assert moments.moment(request(owners={6: 1})) == "good_auction"
    assert moments.moment(request(auction=8)) is None
    assert moments.moment(request(owners={8: 0})) is None  # seat 0 got it


def test_moments_are_only_sometimes_stickers() -> None:
    moments = StickerMoments(random.Random(3), chance=0.4)
    hits = 0
    for n in range(200):
        moments.moment(request(table=f"t{n}", out_count=0))
        hits += moments.moment(request(table=f"t{n}", out_count=1)) == "bankruptcy"
    assert 40 < hits < 120


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
            chat=ChatSection(operator={"port": -1}),
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
