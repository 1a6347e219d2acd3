"""The chat service on a real nats-server, every party as its own NATS role: delivery,
history on join, moderation, mutes, channels one is not in, markup kept as text, bot
stickers, reports for operators."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
from chat_builders import BOT, HUMANS, OPERATOR_TOKEN, ChatFactory, put_room, room_record
from nats.aio.client import Client
from nats.aio.msg import Msg
from opolyx_chat.app import ChatApp
from opolyx_contracts import chat as contract
from opolyx_contracts.envelope import ErrorReply, Message, decode, encode
from opolyx_contracts.errors import BAD_REQUEST, INTERNAL, MALFORMED_JSON
from opolyx_contracts.gateway import RESEND_WINDOW_SECONDS
from opolyx_contracts.subjects import (
    CHAT_BOT_STICKER,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_POST_IDS_BUCKET,
    CHAT_REPORT,
    CHAT_SETTINGS,
    CHAT_STREAM,
    ROOMS_BUCKET,
    chat_history,
    chat_messages,
    chat_post,
)
from opolyx_lobby.rooms import Member
from opolyx_service import flush_in_order
from opolyx_service.settings import NatsSettings
from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)
TABLE = "t_t-1-a"
SPECTATORS = "s_t-1-a"
ROOM = "r_r-1"


async def ask(nc: Client, subject: str, request: Message | bytes, reply: type[R]) -> R:
    body = request if isinstance(request, bytes) else encode(request)
    msg = await nc.request(subject, body, timeout=5)
    return decode(reply, msg.data)


async def refused(nc: Client, subject: str, request: Message | bytes) -> str:
    body = request if isinstance(request, bytes) else encode(request)
    msg = await nc.request(subject, body, timeout=5)
    data = json.loads(msg.data)
    assert data["ok"] is False, data
    return ErrorReply.model_validate(data).error.code


def post(
    player: str,
    text: str | None = None,
    sticker: str | None = None,
    request_id: str | None = None,
) -> contract.ChatPost:
    return contract.ChatPost(
        player_id=player, name=player.title(), text=text, sticker=sticker, request_id=request_id
    )


async def say(nc: Client, channel: str, player: str, text: str) -> contract.ChatMessage:
    return (await ask(nc, chat_post(channel), post(player, text), contract.ChatPosted)).message


async def history(nc: Client, channel: str, player: str) -> contract.ChatHistory:
    request = contract.ChatHistoryRequest(player_id=player)
    return await ask(nc, chat_history(channel), request, contract.ChatHistory)


async def texts(nc: Client, channel: str, player: str) -> list[str | None]:
    return [m.text for m in (await history(nc, channel, player)).messages]


@pytest.fixture
async def at_table(admin: Client, chat: ChatApp) -> ChatApp:
    await put_room(admin, chat, room_record())
    return chat


async def test_a_post_is_delivered_once_to_the_channel_and_kept(
    at_table: ChatApp, gateway: Client
) -> None:
    delivered: asyncio.Queue[Msg] = asyncio.Queue()
    await gateway.subscribe(chat_messages(TABLE), cb=delivered.put)
    await flush_in_order(gateway)
    sent = await say(gateway, TABLE, "alice", "good luck all")
    got = contract.ChatMessage.model_validate_json(
        (await asyncio.wait_for(delivered.get(), 5)).data
    )
    assert got == sent
    assert (got.sender_id, got.sender_name, got.text, got.channel) == (
        "alice",
        "Alice",
        "good luck all",
        TABLE,
    )
    assert delivered.empty()
    assert await texts(gateway, TABLE, "bob") == ["good luck all"]


async def test_joining_gets_the_recent_history_in_order_bounded_per_channel(
    chat_factory: ChatFactory, admin: Client, gateway: Client
) -> None:
    app = await chat_factory(history_limit=5, rate_count=100)
    await put_room(admin, app, room_record())
    for i in range(7):
        await say(gateway, TABLE, "alice" if i % 2 else "bob", f"message {i}")
    await say(gateway, "lobby", "alice", "in the lobby")
    joined = await history(gateway, TABLE, "bob")
    assert [m.text for m in joined.messages] == [f"message {i}" for i in range(2, 7)]
    assert joined.may_post
    limited = await ask(
        gateway,
        chat_history(TABLE),
        contract.ChatHistoryRequest(player_id="bob", limit=2),
        contract.ChatHistory,
    )
    assert [m.text for m in limited.messages] == ["message 5", "message 6"]
    assert await texts(gateway, "lobby", "someone") == ["in the lobby"]
    assert await texts(gateway, ROOM, "alice") == []  # the waiting room is its own channel


async def test_the_rate_limit_refuses_with_a_code_and_keeps_nothing(
    at_table: ChatApp, gateway: Client
) -> None:
    for i in range(5):
        await say(gateway, TABLE, "alice", f"quick {i}")
    assert await refused(gateway, chat_post(TABLE), post("alice", "one too many")) == (
        contract.CHAT_RATE_LIMITED
    )
    await say(gateway, TABLE, "bob", "bob is not limited by alice")
    assert "one too many" not in await texts(gateway, TABLE, "bob")


async def test_with_two_instances_the_rate_limit_holds_per_instance(
    admin: Client, chat_factory: ChatFactory, gateway: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented bound (README, "Moderation"): each instance counts what it took, so
    a player gets at most `rate_count` per instance and window, instances x `rate_count` in
    all; a refusal is the coded error whichever instance answers."""
    instances = [await chat_factory(rate_count=3, rate_window_seconds=3600) for _ in range(2)]
    taken: list[list[str | None]] = [[], []]

    def counting(
        publish: Callable[[contract.ChatMessage], Awaitable[None]], into: list[str | None]
    ) -> Callable[[contract.ChatMessage], Awaitable[None]]:
        async def counted(message: contract.ChatMessage) -> None:
            into.append(message.text)
            await publish(message)

        return counted

    for app, into in zip(instances, taken, strict=True):
        await put_room(admin, app, room_record())
        assert app.chat is not None
        monkeypatch.setattr(app.chat.store, "publish", counting(app.chat.store.publish, into))
    codes: list[str] = []
    for i in range(40):
        msg = await gateway.request(chat_post(TABLE), encode(post("alice", f"m{i}")), timeout=5)
        reply = json.loads(msg.data)
        codes.append("ok" if reply["ok"] else ErrorReply.model_validate(reply).error.code)
    accepted = codes.count("ok")
    assert set(codes) == {"ok", contract.CHAT_RATE_LIMITED}
    assert [len(t) for t in taken] == [3, 3], "each instance stops at its own bound"
    assert accepted == 6 == len(set(await texts(gateway, TABLE, "bob")))


async def test_duplicates_too_long_and_empty_are_refused(
    at_table: ChatApp, gateway: Client
) -> None:
    await say(gateway, TABLE, "alice", "hello")
    assert await refused(gateway, chat_post(TABLE), post("alice", "HELLO")) == (
        contract.CHAT_DUPLICATE
    )
    too_long = json.dumps({"player_id": "alice", "name": "A", "text": "x" * 301}).encode()
    assert await refused(gateway, chat_post(TABLE), too_long) == BAD_REQUEST  # the contract's
    assert await refused(gateway, chat_post(TABLE), post("alice", "  ")) == (
        contract.CHAT_BAD_REQUEST
    )
    assert await refused(gateway, chat_post(TABLE), post("alice", sticker="nope")) == (
        contract.CHAT_BAD_REQUEST
    )
    assert await texts(gateway, TABLE, "bob") == ["hello"]


async def test_the_configured_length_limit_is_a_coded_error(
    chat_factory: ChatFactory, admin: Client, gateway: Client
) -> None:
    app = await chat_factory(max_text_chars=20)
    await put_room(admin, app, room_record())
    assert await refused(gateway, chat_post(TABLE), post("alice", "x" * 21)) == (
        contract.CHAT_TOO_LONG
    )
    await say(gateway, TABLE, "alice", "x" * 20)


async def test_blocked_words_are_refused_look_alikes_too(
    at_table: ChatApp, gateway: Client
) -> None:
    for text in ("badword", "you BadWord", "\uff42\uff41\uff44word", "bad\u200bword"):
        assert await refused(gateway, chat_post(TABLE), post("alice", text)) == (
            contract.CHAT_BLOCKED_WORD
        ), text
    await say(gateway, TABLE, "alice", "badwords are fine as a longer word")
    assert await texts(gateway, TABLE, "bob") == ["badwords are fine as a longer word"]


async def test_a_mute_hides_the_muted_player_from_that_player_only_and_is_remembered(
    chat_factory: ChatFactory, admin: Client, gateway: Client
) -> None:
    app = await chat_factory()
    await put_room(admin, app, room_record())
    mute = contract.ChatMute(player_id="alice", target="bob")
    assert (await ask(gateway, CHAT_MUTE, mute, contract.ChatMutes)).muted == ["bob"]
    await say(gateway, TABLE, "bob", "from bob")
    await say(gateway, TABLE, "alice", "from alice")
    assert await texts(gateway, TABLE, "alice") == ["from alice"]
    assert await texts(gateway, TABLE, "bob") == ["from bob", "from alice"]
    # the live filter the gateway applies, from the contract
    muted = set(
        (
            await ask(
                gateway, CHAT_MUTES, contract.ChatMutesQuery(player_id="alice"), contract.ChatMutes
            )
        ).muted
    )
    shown = [
        m.text
        for m in (await history(gateway, TABLE, "bob")).messages
        if contract.visible_to(m, muted)
    ]
    assert shown == ["from alice"]

    # remembered by another instance (the first one gone)
    await app.stop()
    again = await chat_factory()
    assert again.chat is not None
    query = contract.ChatMutesQuery(player_id="alice")
    assert (await ask(gateway, CHAT_MUTES, query, contract.ChatMutes)).muted == ["bob"]
    unmute = contract.ChatMute(player_id="alice", target="bob", muted=False)
    assert (await ask(gateway, CHAT_MUTE, unmute, contract.ChatMutes)).muted == []
    self_mute = contract.ChatMute(player_id="alice", target="alice")
    assert await refused(gateway, CHAT_MUTE, self_mute) == contract.CHAT_BAD_REQUEST


async def test_nobody_posts_outside_their_channels(
    at_table: ChatApp, admin: Client, gateway: Client
) -> None:
    await put_room(admin, at_table, room_record("r-2", table_id=None, members=HUMANS[:1]))
    await put_room(
        admin,
        at_table,
        room_record("r-3", public=False, table_id="t-3-a", members=(HUMANS[1],)),
    )
    cases = [
        ("eve", TABLE, contract.CHAT_NOT_MEMBER),  # a spectator does not talk to the players
        ("bob", "r_r-2", contract.CHAT_NOT_MEMBER),  # another waiting room
        ("alice", "t_t-3-a", contract.CHAT_NOT_MEMBER),  # another table
        ("alice", "t_t-9-z", contract.CHAT_NOT_MEMBER),  # no such table
        ("alice", "r_r-404", contract.CHAT_NOT_MEMBER),  # no such room
        ("eve", SPECTATORS, contract.CHAT_SPECTATOR_CHAT_OFF),
        ("alice", SPECTATORS, contract.CHAT_NOT_MEMBER),  # players stay out of the gallery
        ("alice", "x_nothing", contract.CHAT_BAD_CHANNEL),
    ]
    for player, channel, code in cases:
        assert await refused(gateway, chat_post(channel), post(player, "hi")) == code, (
            player,
            channel,
        )
    # reading: a spectator reads a public table, not a private one nor a waiting room
    assert (await history(gateway, TABLE, "eve")).may_post is False
    for player, channel in (("eve", "t_t-3-a"), ("eve", ROOM), ("alice", "r_r-2x")):
        request = contract.ChatHistoryRequest(player_id=player)
        assert await refused(gateway, chat_history(channel), request) == contract.CHAT_NOT_MEMBER
    await say(gateway, "r_r-2", "alice", "waiting room")  # her own room works
    assert await texts(gateway, TABLE, "alice") == []


async def test_the_creator_lets_spectators_talk_among_themselves(
    at_table: ChatApp, gateway: Client
) -> None:
    turn_on = contract.ChatSettingsRequest(player_id="bob", room_id="r-1", spectator_chat=True)
    assert await refused(gateway, CHAT_SETTINGS, turn_on) == contract.CHAT_NOT_CREATOR
    outsider = contract.ChatSettingsRequest(player_id="eve", room_id="r-1")
    assert await refused(gateway, CHAT_SETTINGS, outsider) == contract.CHAT_NOT_MEMBER
    turn_on = turn_on.model_copy(update={"player_id": "alice"})
    reply = await ask(gateway, CHAT_SETTINGS, turn_on, contract.ChatSettingsReply)
    assert reply.settings.spectator_chat and reply.settings.bot_stickers
    await say(gateway, SPECTATORS, "eve", "what a move")
    assert await texts(gateway, SPECTATORS, "zed") == ["what a move"]
    assert await texts(gateway, TABLE, "alice") == []


async def test_markup_is_stored_and_delivered_verbatim_as_text(
    at_table: ChatApp, gateway: Client
) -> None:
    markup = '<img src=x onerror="alert(1)"> &amp; <b>bold</b> <script>x()</script>'
    delivered: asyncio.Queue[Msg] = asyncio.Queue()
    await gateway.subscribe(chat_messages(TABLE), cb=delivered.put)
    await flush_in_order(gateway)
    await say(gateway, TABLE, "alice", markup)
    raw = (await asyncio.wait_for(delivered.get(), 5)).data
    assert json.loads(raw)["text"] == markup
    assert (await history(gateway, TABLE, "bob")).messages[0].text == markup


async def test_bots_post_their_personas_sticker_unless_the_room_turned_it_off(
    at_table: ChatApp, gateway: Client, bots: Client
) -> None:
    sticker = contract.BotSticker(table_id="t-1-a", bot_id=BOT.player_id, occasion="game_end")
    posted = await ask(bots, CHAT_BOT_STICKER, sticker, contract.ChatPosted)
    assert posted.message.bot and posted.message.sender_name == "Kemi"
    assert posted.message.sticker == contract.sticker_for("shark", "game_end")
    assert [m.sticker for m in (await history(gateway, TABLE, "alice")).messages] == [
        posted.message.sticker
    ]
    stranger = sticker.model_copy(update={"bot_id": "bot-ada"})
    assert await refused(bots, CHAT_BOT_STICKER, stranger) == contract.CHAT_NOT_MEMBER
    human = sticker.model_copy(update={"bot_id": "alice"})
    assert await refused(bots, CHAT_BOT_STICKER, human) == contract.CHAT_NOT_MEMBER
    off = contract.ChatSettingsRequest(player_id="alice", room_id="r-1", bot_stickers=False)
    await ask(gateway, CHAT_SETTINGS, off, contract.ChatSettingsReply)
    later = sticker.model_copy(update={"occasion": "bankruptcy"})
    assert await refused(bots, CHAT_BOT_STICKER, later) == contract.CHAT_BOT_STICKERS_OFF


async def test_rooms_stored_before_chat_started_are_known_when_it_starts(
    admin: Client, chat_factory: ChatFactory, gateway: Client, bots: Client
) -> None:
    """Many rooms already exist when chat (re)starts: the first sticker and the first
    history request after `start` find their table's room (they are found only through
    the watched index), instead of `chat/not_member` while the watch catches up."""
    kv = await admin.jetstream().key_value(ROOMS_BUCKET)
    rooms = [room_record(f"r-{n}", table_id=f"t-{n}-a") for n in range(2000)]
    # more than the watch indexes while the rest of chat starts
    await asyncio.gather(*(kv.put(r.room_id, r.model_dump_json().encode()) for r in rooms))
    app = await chat_factory()
    assert app.ready and app.directory is not None
    assert app.directory.room_of_table("t-1999-a") is not None  # before any other await
    sticker = contract.BotSticker(table_id="t-1999-a", bot_id=BOT.player_id, occasion="game_end")
    posted = await ask(bots, CHAT_BOT_STICKER, sticker, contract.ChatPosted)
    assert posted.message.channel == "t_t-1999-a"
    assert [m.sticker for m in (await history(gateway, "t_t-1999-a", "alice")).messages] == [
        posted.message.sticker
    ]


async def test_each_bot_sticker_moment_is_posted_once_across_instances_and_bots(
    admin: Client, chat_factory: ChatFactory, gateway: Client
) -> None:
    """The same moment asked for again, by another bot or through another instance (a
    game's end announced twice after a table takeover, one bankruptcy read by two bot
    workers), is refused: one sticker per table, occasion and moment."""
    ada = Member(player_id="bot-ada", name="Ada", bot=True, style="builder")
    one, two = await chat_factory(), await chat_factory()
    room = room_record(members=(*HUMANS, BOT, ada))
    for app in (one, two):
        await put_room(admin, app, room)

    async def sticker(app: ChatApp, bot: str, occasion: str, moment: str = "") -> str:
        """Ask this instance itself (the queue group would pick one at random)."""
        body = contract.BotSticker.model_validate(
            {"table_id": "t-1-a", "bot_id": bot, "occasion": occasion, "moment": moment}
        )
        assert app.chat is not None
        answer = json.loads(await app.chat.answer(CHAT_BOT_STICKER, encode(body)))
        return "posted" if answer["ok"] else str(answer["error"]["code"])

    duplicate = contract.CHAT_DUPLICATE
    assert await sticker(one, BOT.player_id, "game_end") == "posted"
    assert await sticker(two, BOT.player_id, "game_end") == duplicate  # the same bot again
    assert await sticker(two, "bot-ada", "game_end") == duplicate  # one goodbye per game
    assert await sticker(one, "bot-ada", "bankruptcy", "1") == "posted"
    assert await sticker(two, BOT.player_id, "bankruptcy", "1") == duplicate
    assert await sticker(two, BOT.player_id, "bankruptcy", "2") == "posted"  # the next one
    assert await sticker(two, "bot-ada", "good_auction", "6-3-1") == "posted"
    assert await sticker(one, "bot-ada", "good_auction", "6-3-1") == duplicate
    said = [(m.sender_id, m.sticker) for m in (await history(gateway, TABLE, "alice")).messages]
    assert said == [
        (BOT.player_id, contract.sticker_for("shark", "game_end")),
        ("bot-ada", contract.sticker_for("builder", "bankruptcy")),
        (BOT.player_id, contract.sticker_for("shark", "bankruptcy")),
        ("bot-ada", contract.sticker_for("builder", "good_auction")),
    ]


async def answered_by(app: ChatApp, subject: str, request: Message) -> dict[str, Any]:
    """Ask this instance itself (the queue group would pick one at random)."""
    assert app.chat is not None
    answer: dict[str, Any] = json.loads(await app.chat.answer(subject, encode(request)))
    return answer


async def test_a_repeated_post_request_is_answered_with_the_first_post_stored_once(
    at_table: ChatApp, gateway: Client, admin: Client
) -> None:
    """A post's request asked again (the gateway's request timed out and the client resent
    it) is the first post: not refused as a duplicate or over the rate, not stored or
    delivered again."""
    delivered: list[contract.ChatMessage] = []

    async def on_message(msg: Msg) -> None:
        delivered.append(contract.ChatMessage.model_validate_json(msg.data))

    await gateway.subscribe(chat_messages(TABLE), cb=on_message)
    await flush_in_order(gateway)
    first = post("alice", "only once", request_id="req-1")
    posted = await ask(gateway, chat_post(TABLE), first, contract.ChatPosted)
    assert (await ask(gateway, chat_post(TABLE), first, contract.ChatPosted)) == posted
    for i in range(4):  # alice reaches the rate limit (5): a repeat is still answered
        await say(gateway, TABLE, "alice", f"then {i}")
    assert await refused(gateway, chat_post(TABLE), post("alice", "more")) == (
        contract.CHAT_RATE_LIMITED
    )
    assert (await ask(gateway, chat_post(TABLE), first, contract.ChatPosted)) == posted
    # another player's request id of the same spelling is another post
    bobs = await ask(
        gateway, chat_post(TABLE), post("bob", "only once", request_id="req-1"), contract.ChatPosted
    )
    assert bobs.message.message_id != posted.message.message_id
    stored = (await history(gateway, TABLE, "bob")).messages
    assert [m.text for m in stored] == [
        "only once",
        "then 0",
        "then 1",
        "then 2",
        "then 3",
        "only once",
    ]
    assert stored[0] == posted.message
    await flush_in_order(gateway)
    await asyncio.sleep(0.1)
    assert [m.message_id for m in delivered].count(posted.message.message_id) == 1
    # chat knows a request id longer than a client resends, and the stream stores a message
    # id once for longer than that (a repeat that publishes again is never stored twice)
    js = admin.jetstream()
    ids = await js.stream_info(f"KV_{CHAT_POST_IDS_BUCKET}")
    assert ids.config.max_age == contract.REQUEST_ID_SECONDS
    latest_repeat = RESEND_WINDOW_SECONDS + 2 * NatsSettings().request_timeout
    assert latest_repeat <= contract.REQUEST_ID_SECONDS
    window = (await js.stream_info(CHAT_STREAM)).config.duplicate_window
    assert window is not None and window > contract.REQUEST_ID_SECONDS


async def test_a_repeated_post_request_at_another_instance_gets_the_first_post(
    admin: Client, chat_factory: ChatFactory, gateway: Client
) -> None:
    one, two = await chat_factory(), await chat_factory()
    for app in (one, two):
        await put_room(admin, app, room_record())
    request = post("alice", "said at one", request_id="req-7")
    first = await answered_by(one, chat_post(TABLE), request)
    assert first["ok"], first
    again = await answered_by(two, chat_post(TABLE), request)
    assert again == first
    assert await texts(gateway, TABLE, "bob") == ["said at one"]
    # a new request of the same text is refused as said at either instance (the repeat's
    # moderation noted it at the second), and the first's post is still the only one
    repeated = post("alice", "said at one", request_id="req-8")
    for app in (one, two):
        refusal = await answered_by(app, chat_post(TABLE), repeated)
        assert refusal["ok"] is False and refusal["error"]["code"] == contract.CHAT_DUPLICATE
    assert await texts(gateway, TABLE, "bob") == ["said at one"]


async def test_a_post_claimed_but_not_published_is_published_by_its_repeat(
    at_table: ChatApp, gateway: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first request failed after its claim (JetStream did not take the publish): the post
    never ran, and its repeat posts it, once."""
    assert at_table.chat is not None
    store = at_table.chat.store
    publish = store.publish
    failed: list[contract.ChatMessage] = []

    async def fail_once(message: contract.ChatMessage) -> None:
        if not failed:
            failed.append(message)
            raise TimeoutError("no ack")
        await publish(message)

    monkeypatch.setattr(store, "publish", fail_once)
    request = post("alice", "not lost", request_id="req-3")
    assert await refused(gateway, chat_post(TABLE), request) == INTERNAL
    assert await texts(gateway, TABLE, "bob") == []
    posted = await ask(gateway, chat_post(TABLE), request, contract.ChatPosted)
    assert posted.message == failed[0]
    assert (await ask(gateway, chat_post(TABLE), request, contract.ChatPosted)) == posted
    assert (await history(gateway, TABLE, "bob")).messages == [posted.message]


async def test_a_repeated_report_request_stores_one_report(
    at_table: ChatApp, gateway: Client
) -> None:
    bad = await say(gateway, TABLE, "bob", "something nasty")
    report = contract.ChatReport(
        player_id="alice", channel=TABLE, message_id=bad.message_id, request_id="req-4"
    )
    first = await ask(gateway, CHAT_REPORT, report, contract.ChatReported)
    assert (await ask(gateway, CHAT_REPORT, report, contract.ChatReported)) == first
    # without a request id, each request is a report of its own (as before)
    plain = report.model_copy(update={"request_id": None})
    other = await ask(gateway, CHAT_REPORT, plain, contract.ChatReported)
    assert at_table.chat is not None
    stored = await at_table.chat.store.list_reports(10)
    assert sorted(r.report_id for r in stored) == sorted([first.report_id, other.report_id])


async def test_once_the_lobby_closed_the_room_only_the_end_of_game_sticker_is_taken(
    admin: Client, at_table: ChatApp, gateway: Client, bots: Client
) -> None:
    kv = await admin.jetstream().key_value(ROOMS_BUCKET)
    await kv.delete("r-1")  # the game finished: the lobby frees the players, closes the room
    assert at_table.directory is not None
    for _ in range(500):
        if at_table.directory.known("r-1") is None:
            break
        await asyncio.sleep(0.01)
    goodbye = contract.BotSticker(table_id="t-1-a", bot_id=BOT.player_id, occasion="game_end")
    posted = await ask(bots, CHAT_BOT_STICKER, goodbye, contract.ChatPosted)
    assert posted.message.channel == TABLE and posted.message.sender_id == BOT.player_id
    late = goodbye.model_copy(update={"occasion": "bankruptcy"})
    assert await refused(bots, CHAT_BOT_STICKER, late) == contract.CHAT_NOT_MEMBER
    stranger = goodbye.model_copy(update={"bot_id": "bot-ada"})
    assert await refused(bots, CHAT_BOT_STICKER, stranger) == contract.CHAT_NOT_MEMBER
    # nobody posts in the closed room's table channel any more
    assert await refused(gateway, chat_post(TABLE), post("alice", "still here?")) == (
        contract.CHAT_NOT_MEMBER
    )


async def test_a_report_is_stored_with_context_for_an_authenticated_operator(
    at_table: ChatApp, gateway: Client
) -> None:
    await say(gateway, TABLE, "alice", "first")
    bad = await say(gateway, TABLE, "bob", "something nasty")
    await say(gateway, TABLE, "alice", "after")
    report = contract.ChatReport(
        player_id="alice", channel=TABLE, message_id=bad.message_id, reason="rude"
    )
    reported = await ask(gateway, CHAT_REPORT, report, contract.ChatReported)
    outsider = report.model_copy(update={"player_id": "eve", "channel": "r_r-1"})
    assert await refused(gateway, CHAT_REPORT, outsider) == contract.CHAT_NOT_MEMBER
    unknown = report.model_copy(update={"message_id": "nope"})
    assert await refused(gateway, CHAT_REPORT, unknown) == contract.CHAT_UNKNOWN_MESSAGE

    assert at_table.operator is not None
    url = f"http://127.0.0.1:{at_table.operator.port}/operator/reports"
    async with httpx.AsyncClient() as http:
        assert (await http.get(url)).status_code == 401
        wrong = {"Authorization": "Bearer wrong"}
        assert (await http.get(url, headers=wrong)).status_code == 401
        ok = await http.get(url, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    assert ok.status_code == 200
    [record] = contract.ChatReports.model_validate(ok.json()).reports
    assert record.report_id == reported.report_id
    assert (record.reporter, record.reason, record.message.text) == ("alice", "rude", bad.text)
    assert [m.text for m in record.context] == ["first", "something nasty"]


async def test_bad_input_gets_a_coded_error_and_the_service_goes_on(
    at_table: ChatApp, gateway: Client
) -> None:
    assert await refused(gateway, chat_post(TABLE), b"{not json") == MALFORMED_JSON
    assert await refused(gateway, chat_post(TABLE), b"[1]") == MALFORMED_JSON
    assert await refused(gateway, chat_post(TABLE), b'{"player_id": "alice"}') == BAD_REQUEST
    huge = b'{"player_id": "alice", "name": "A", "text": "' + b"x" * 5000 + b'"}'
    assert await refused(gateway, chat_post(TABLE), huge) == BAD_REQUEST
    both = b'{"player_id": "alice", "name": "A", "text": "x", "sticker": "gg"}'
    assert await refused(gateway, chat_post(TABLE), both) == BAD_REQUEST
    future = b'{"v": 2, "player_id": "alice", "name": "A", "text": "x"}'
    assert await refused(gateway, chat_post(TABLE), future) != "internal/error"
    await say(gateway, TABLE, "alice", "still here")


async def test_a_waiting_room_made_by_the_real_lobby_is_a_channel(
    chat: ChatApp, gateway: Client, nats_server: object
) -> None:
    from opolyx_contracts.lobby import LobbyCommand, LobbyReply
    from opolyx_contracts.subjects import LOBBY_CMD
    from opolyx_lobby.app import LobbyApp
    from opolyx_lobby.settings import LobbySection, LobbySettings
    from opolyx_service.settings import HttpSettings
    from opolyx_testing.nats_server import NatsServer

    assert isinstance(nats_server, NatsServer)
    lobby = LobbyApp(
        LobbySettings(
            nats=nats_server.settings_for("lobby"),
            http=HttpSettings(port=-1),
            lobby=LobbySection(bot_fill_after_seconds=3600),
        )
    )
    await lobby.start()
    try:
        create = LobbyCommand(type="create", player_id="ann", name="Ann", mode="classic", seats=4)
        room = (await ask(gateway, LOBBY_CMD, create, LobbyReply)).room
        assert room is not None
        join = LobbyCommand(type="join", player_id="ben", name="Ben", room_id=room.room_id)
        await ask(gateway, LOBBY_CMD, join, LobbyReply)
        channel = contract.channel_token("room", room.room_id)
        await say(gateway, channel, "ann", "welcome")
        await say(gateway, channel, "ben", "thanks")  # joined a moment ago: still a member
        assert await texts(gateway, channel, "ben") == ["welcome", "thanks"]
        assert await refused(gateway, chat_post(channel), post("eve", "hi")) == (
            contract.CHAT_NOT_MEMBER
        )
    finally:
        await lobby.stop()


async def test_past_its_bound_of_requests_in_flight_chat_says_busy_and_goes_on(
    chat_factory: ChatFactory, admin: Client, gateway: Client
) -> None:
    app = await chat_factory(max_in_flight=1, rate_count=1000)
    await put_room(admin, app, room_record())
    # Sent together, the requests arrive in one read: the second is taken while the first
    # still waits for its JetStream ack.
    replies = await asyncio.gather(
        *(
            gateway.request(chat_post(TABLE), encode(post("alice", f"burst {i}")), timeout=5)
            for i in range(50)
        )
    )
    outcomes = [json.loads(r.data) for r in replies]
    busy = [o for o in outcomes if not o["ok"]]
    assert busy and all(o["error"]["code"] == "service/busy" for o in busy)
    stored = await texts(gateway, TABLE, "bob")
    assert len(stored) == 50 - len(busy) >= 1
    await say(gateway, TABLE, "bob", "after the burst")
