"""Chat moderation in a real browser against the whole local system, at 1366x860 and
390x844: the room's creator picks spectator chat and bot stickers with the new room and
changes them while it waits, and a spectator of a room without spectator chat has no control
to write with and is refused by the chat service when posting anyway; a player reports
another player's message, sees it confirmed, and an operator reads the report (with what was
said before it) through the chat service's authenticated reports endpoint."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from typing import Any

from opolyx_testing.local_layout import LocalLayout
from playwright.sync_api import Page, ViewportSize, expect

from .conftest import VIEWPORTS, LocalSystem, PageWatch
from .test_social import open_chat, say, sign_in


def room_chat_settings(page: Page, room_id: str) -> dict[str, Any]:
    """What the chat service holds for the room, asked on the page's own socket."""
    reply: dict[str, Any] = page.evaluate(
        "(room) => window.opolyx.app.conn.request('chat.settings', { room })", room_id
    )
    return reply


def refusal(page: Page, message_type: str, fields: dict[str, Any]) -> str:
    """The error code the gateway answers a request with, sent on the page's socket."""
    code: str = page.evaluate(
        """([type, fields]) => window.opolyx.app.conn.request(type, fields)
            .then(() => "accepted", (err) => err.code)""",
        [message_type, fields],
    )
    return code


@VIEWPORTS
def test_the_creator_turns_spectator_chat_off_and_a_spectator_cannot_write(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    host = pages.open(viewport)
    sign_in(host, "Cora")
    # spectator chat on and bot stickers off with the new room
    expect(host.locator("#create-spectator-chat")).not_to_be_checked()
    expect(host.locator("#create-bot-stickers")).to_be_checked()
    host.check("#create-spectator-chat")
    host.uncheck("#create-bot-stickers")
    host.click("#create-room")
    expect(host.locator("#my-room")).to_be_visible()
    room_id = str(host.evaluate("window.opolyx.app.room.room_id"))
    expect(host.locator("#room-spectator-chat")).to_be_checked()
    expect(host.locator("#room-bot-stickers")).not_to_be_checked()
    assert room_chat_settings(host, room_id) == {
        "room": room_id,
        "spectator_chat": True,
        "bot_stickers": False,
    }

    # changed while the room waits: spectator chat off again
    host.uncheck("#room-spectator-chat")
    expect(host.locator("#room-spectator-chat")).not_to_be_checked()
    for _ in range(50):  # the switch's request and this read may cross on the way
        if not room_chat_settings(host, room_id)["spectator_chat"]:
            break
        host.wait_for_timeout(100)
    assert room_chat_settings(host, room_id)["spectator_chat"] is False

    host.click("#add-bot")
    expect(host.locator("#members li")).to_have_count(2)
    host.click("#start-game")
    expect(host.locator("#view-table")).to_be_visible()
    table_id = str(host.evaluate("window.opolyx.app.table.id"))

    viewer = pages.open(viewport, path=f"/?watch={table_id}")
    sign_in(viewer, "Sven")
    expect(viewer.locator("#view-table")).to_be_visible()
    chat = viewer.locator("#chat-table")
    if "folded" in (chat.get_attribute("class") or ""):
        chat.locator(".chat-toggle").click()
    # no spectators' channel to write in: the players' chat, read only, and no control
    expect(chat.locator(".chat-note")).to_be_visible()
    expect(chat.locator(".chat-form")).to_be_hidden()
    expect(chat.locator(".chat-input")).to_be_hidden()
    # and a post sent anyway is refused by the chat service, in both channels
    spectators = {"channel": f"s_{table_id}", "text": "psst"}
    assert refusal(viewer, "chat.post", spectators) == "chat/spectator_chat_off"
    players = {"channel": f"t_{table_id}", "text": "psst"}
    assert refusal(viewer, "chat.post", players) == "chat/not_member"
    # nor can someone who is not in the room switch it back on
    assert (
        refusal(viewer, "chat.settings", {"room": room_id, "spectator_chat": True})
        == "chat/not_member"
    )


def operator_reports(layout: LocalLayout, token: str | None) -> tuple[int, dict[str, Any]]:
    port = int(layout.operator_port("chat").read_text())
    request = urllib.request.Request(f"http://127.0.0.1:{port}/operator/reports?limit=500")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {}


@VIEWPORTS
def test_a_player_reports_a_message_and_an_operator_reads_it(
    pages: PageWatch, viewport: ViewportSize, local: LocalSystem
) -> None:
    host = pages.open(viewport)
    host_id = sign_in(host, "Rita")
    guest = pages.open(viewport)
    guest_id = sign_in(guest, "Otto")
    host.click("#create-room")
    expect(host.locator("#my-room")).to_be_visible()
    room_id = str(host.evaluate("window.opolyx.app.room.room_id"))
    guest.click(f'#rooms li[data-room="{room_id}"] button')
    expect(guest.locator("#members li")).to_have_count(2)
    open_chat(host, "chat-room")
    open_chat(guest, "chat-room")
    before = f"hello there ({uuid.uuid4().hex[:6]})"
    rude = f"you play like a potato ({uuid.uuid4().hex[:6]})"
    say(host, "chat-room", before)
    expect(guest.locator("#chat-room .chat-text", has_text=before)).to_be_visible()
    say(guest, "chat-room", rude)
    line = host.locator(f'#chat-room li[data-sender="{guest_id}"]', has_text=rude)
    expect(line).to_be_visible()

    # one's own message offers no actions (nothing to report there)
    own = host.locator(f'#chat-room li[data-sender="{host_id}"]', has_text=before)
    expect(own.locator("button.chat-name")).to_have_count(0)
    line.locator("button.chat-name").click()
    line.locator('[data-action="report"]').click()
    expect(host.locator("#chat-room .chat-status")).to_have_text(
        "Reported, thank you. A moderator will look at it."
    )
    expect(line.locator(".chat-actions")).to_have_count(0)

    layout = local.layout
    assert operator_reports(layout, None)[0] == 401
    assert operator_reports(layout, "not-the-token")[0] == 401
    token = layout.operator_token("chat").read_text().strip()
    status, body = operator_reports(layout, token)
    assert status == 200
    mine = [r for r in body["reports"] if r["message"]["text"] == rude]
    assert len(mine) == 1, body
    report = mine[0]
    assert report["reporter"] == host_id
    assert report["message"]["sender_id"] == guest_id
    assert report["message"]["channel"] == f"r_{room_id}"
    assert [m["text"] for m in report["context"]][-2:] == [before, rude]
