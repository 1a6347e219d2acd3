"""The web client's connection (`static/js/net.js`) in Debian's headless Chromium against the
real gateway: it renews its token before expiry without the socket closing, and a table
command cut short by a lost connection is sent again under the same id (run once)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
from gateway_builders import RunningGateway, gateway_settings, serve_gateway
from nats.aio.msg import Msg
from opolyx_contracts import subjects
from opolyx_contracts.table import CommandAccepted, TableCommand
from opolyx_service import flush_in_order
from opolyx_testing.nats_server import NatsServer
from playwright.async_api import Page, async_playwright

CHROMIUM = os.environ.get("OPOLYX_CHROMIUM", "/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None and not os.path.exists(CHROMIUM),
    reason="needs Chromium (Debian's /usr/bin/chromium or OPOLYX_CHROMIUM)",
)

# Loaded into the page: the client's own module, with callbacks that record what happens.
HARNESS = """async () => {
  const net = await import("/js/net.js");
  const seen = { statuses: [], sessions: [], authFailed: [], pushes: 0 };
  window.seen = seen;
  const session = await net.signIn("Browser");
  seen.first = session;
  window.conn = new net.Connection(session.token, {
    onPush: () => { seen.pushes += 1; },
    onReady: (hello) => { seen.hello = hello; },
    onStatus: (status) => seen.statuses.push(status),
    onAuthFailed: (err) => seen.authFailed.push(err.code),
    onSession: (s) => seen.sessions.push(s),
  });
  window.conn.open();
  window.net = net;
}"""


async def until(page: Page, predicate: str, timeout: float = 15.0) -> None:
    """Poll `predicate` in the page (the page's CSP forbids the string evaluation of
    Playwright's own waiting)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await page.evaluate(predicate):
        assert asyncio.get_running_loop().time() < deadline, f"never true: {predicate}"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def open_page(gw: RunningGateway) -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(gw.base_url + "/")
            await page.evaluate(HARNESS)
            await until(page, "() => Boolean(window.conn && window.conn.ready)")
            yield page
            assert not errors, errors
        finally:
            await browser.close()


async def test_the_client_renews_its_token_and_stays_connected(nats_server: NatsServer) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"), token_ttl_seconds=4)
    async with serve_gateway(settings, nats_server.url) as gw, open_page(gw) as page:
        first: dict[str, Any] = await page.evaluate("window.seen.first")
        # well past the first token's expiry (4 s), renewed at half-life each time
        await until(page, f"() => Date.now() / 1000 > {first['expires_at'] + 2}")
        seen: dict[str, Any] = await page.evaluate("window.seen")
        assert seen["authFailed"] == []
        assert len(seen["sessions"]) >= 2
        assert {s["player_id"] for s in seen["sessions"]} == {first["player_id"]}
        assert seen["statuses"] == ["connecting", "online"]  # never dropped
        pong = await page.evaluate('window.conn.request("ping")')
        assert pong["now"] > 0


async def test_a_command_cut_short_by_a_reconnect_is_sent_again_and_runs_once(
    nats_server: NatsServer,
) -> None:
    settings = gateway_settings(nats_server.url_for("gateway"))
    async with serve_gateway(settings, nats_server.url) as gw:
        received: list[TableCommand] = []

        async def slow_table(msg: Msg) -> None:  # answers after the client has reconnected
            received.append(TableCommand.model_validate_json(msg.data))
            await asyncio.sleep(1.5)
            await msg.respond(
                CommandAccepted(seq=2, version=2, events=1).model_dump_json().encode()
            )

        await gw.nc.subscribe(subjects.table_command("t-slow"), cb=slow_table)
        await flush_in_order(gw.nc)
        async with open_page(gw) as page:
            await page.evaluate(
                """() => {
                  window.result = null;
                  window.conn.request("table.cmd", { table: "t-slow", command: { type: "roll" } })
                    .then((data) => { window.result = { ok: true, data }; },
                          (err) => { window.result = { ok: false, code: err.code }; });
                  setTimeout(() => window.conn.socket.close(), 300);
                }"""
            )
            await until(page, "() => window.result !== null")
            result = await page.evaluate("window.result")
            statuses = await page.evaluate("window.seen.statuses")
        assert "offline" in statuses  # the socket was really lost and opened again
        assert result == {"ok": True, "data": {"seq": 2, "version": 2, "events": 1}}
        assert len(received) == 1
