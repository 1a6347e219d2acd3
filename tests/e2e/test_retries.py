"""A change in flight when the socket drops is sent again after the reconnect and answered
once, in a real browser against the whole local system: a lobby ``create`` makes exactly one
room and the page shows it without an error; a chat post is one message, the form cleared.

The reply is lost the way a dropped connection loses it: the page's websocket runs through
the test (`LossyLink`), which passes the message on to the gateway, holds back its reply and
closes both sides. The page reconnects by itself and resends under the first id (`net.js`,
the types served as ONCE_PER_ID_TYPES); the gateway answers from its memory of replies.

One size only: what is checked is the connection's behaviour, not a layout."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from opolyx_testing.gateway_client import frame_messages
from playwright.sync_api import Page, WebSocketRoute, expect

from .client_steps import sign_in
from .conftest import PageWatch
from .test_social import open_chat, say

Matcher = Callable[[dict[str, Any]], bool]
ANSWER_WAIT_S = 30.0
"""The page reconnects within a second; a busy machine may take longer to start a socket."""


class LossyLink:
    """The page's websockets, through the test. Once `arm`ed, the first message the matcher
    picks reaches the gateway, and its reply is lost with the connection; every other
    message, and every later socket, is passed through."""

    def __init__(self, page: Page) -> None:
        self.matches: Matcher | None = None
        self.lost_id: object = None
        self.dropped = False
        self.sockets = 0
        self.sent: list[tuple[int, dict[str, Any]]] = []
        """(socket number, message) for every message of the lost one's id the page sent."""
        self.answers: list[tuple[int, dict[str, Any]]] = []
        """(socket number, reply) for every reply to it that reached the page."""
        page.route_web_socket(re.compile(r"/ws(\?[^/]*)?$"), self._route)

    def arm(self, matches: Matcher) -> None:
        self.matches = matches

    def _route(self, page_side: WebSocketRoute) -> None:
        self.sockets += 1
        number = self.sockets
        server = page_side.connect_to_server()

        def to_server(message: str | bytes) -> None:
            data = _parse(message)
            if data is not None and self.matches is not None and self.matches(data):
                self.matches = None
                self.lost_id = data["id"]
            if data is not None and self.lost_id is not None and data.get("id") == self.lost_id:
                self.sent.append((number, data))
            server.send(message)

        def to_page(message: str | bytes) -> None:
            for data in frame_messages(message):
                if self.lost_id is not None and data.get("id") == self.lost_id:
                    if not self.dropped:
                        self.dropped = True
                        page_side.close()
                        server.close()
                        return
                    self.answers.append((number, data))
            page_side.send(message)

        page_side.on_message(to_server)
        server.on_message(to_page)


def _parse(message: str | bytes) -> dict[str, Any] | None:
    if not isinstance(message, str):
        return None
    data = json.loads(message)
    return data if isinstance(data, dict) else None


def rooms_created_by(page: Page, player_id: str) -> list[str]:
    """The lobby's open rooms this player created, asked on the page's own socket."""
    rooms: list[str] = page.evaluate(
        """(me) => window.opolyx.app.conn.request('lobby', { action: 'list' })
            .then((data) => data.rooms.filter((r) => r.creator === me).map((r) => r.room_id))""",
        player_id,
    )
    return rooms


def answered_after_the_reconnect(page: Page, link: LossyLink) -> dict[str, Any]:
    """The reply to the lost message that reached the page on a later socket (fails the test
    if the page never resent it)."""
    deadline = time.monotonic() + ANSWER_WAIT_S
    while not link.answers and time.monotonic() < deadline:
        page.wait_for_timeout(100)  # (the route's callbacks run while Playwright waits)
    assert link.dropped, "the message the test waited for was never sent"
    assert link.answers, f"no reply after the reconnect; the page sent {link.sent}"
    ((socket, reply),) = link.answers
    assert socket > 1, "answered on the socket that was dropped"
    # sent twice, under one id: on the dropped socket and again after the reconnect
    assert [s for s, _ in link.sent] == [1, socket], link.sent
    assert link.sent[0][1] == link.sent[1][1]
    return reply


def player_id(page: Page) -> str:
    return str(page.evaluate("window.opolyx.app.session.player_id"))


def test_a_create_cut_short_by_a_lost_socket_makes_one_room(pages: PageWatch) -> None:
    page = pages.open()
    link = LossyLink(page)
    sign_in(page, "Remy")
    me = player_id(page)
    assert rooms_created_by(page, me) == []

    link.arm(lambda m: m.get("type") == "lobby" and m.get("action") == "create")
    page.select_option("#create-seats", "3")
    page.click("#create-room")
    reply = answered_after_the_reconnect(page, link)
    assert reply["ok"], reply
    room_id = reply["data"]["room"]["room_id"]

    expect(page.locator("#conn")).to_have_text("online")
    expect(page.locator("#my-room")).to_be_visible()
    expect(page.locator("#members li")).to_have_count(1)
    assert page.evaluate("window.opolyx.app.room.room_id") == room_id
    expect(page.locator("#toast")).to_be_hidden()  # no "connection lost" for the create
    assert rooms_created_by(page, me) == [room_id]


def test_a_chat_post_cut_short_by_a_lost_socket_is_one_message(pages: PageWatch) -> None:
    writer = pages.open()
    link = LossyLink(writer)
    sign_in(writer, "Sol")
    open_chat(writer, "chat-lobby")
    # the lobby's channel outlives a test (its history too): a text of this run's own
    text = f"said once ({uuid.uuid4().hex[:8]})"

    link.arm(lambda m: m.get("type") == "chat.post" and m.get("text") == text)
    say(writer, "chat-lobby", text)
    reply = answered_after_the_reconnect(writer, link)
    assert reply["ok"], reply
    message_id = reply["data"]["message"]["message_id"]

    panel = writer.locator("#chat-lobby")
    expect(panel.locator(".chat-input")).to_have_value("")  # posted: the form is cleared
    expect(panel.locator(".chat-error")).to_have_text("")
    expect(panel.locator("li", has_text=text)).to_have_count(1)

    # the chat service holds it once: a reader who joins now gets one in the history
    reader = pages.open()
    sign_in(reader, "Tam")
    open_chat(reader, "chat-lobby")
    history = reader.locator("#chat-lobby li", has_text=text)
    expect(history).to_have_count(1)
    expect(history).to_have_attribute("data-message", message_id)
