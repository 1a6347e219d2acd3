"""A player whose table's updates were lost is brought up to date by their next click, in a
real browser against the whole local system.

A table owner killed between its events write and its update publish loses the update.
Here the local nats-server is made to drop every update the table publishes
(`opolyx_testing.nats_server.deny_publish`, then a configuration reload), at a moment the
test chooses. The player's roll is then played from another device (a connection of the
gateway's role, as another gateway would send it), so the table moves on while this page
still shows the roll. The click, sent without a version as the web client sends every
click, is answered by the table (refused as out of turn, or taken when the turn came back
to the player), and the page then shows the state the table is in: no update came, and no
turn timer had to fire.

One size only: what is checked is the page's state, not a layout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import nats
import pytest
from opolyx_contracts import subjects
from opolyx_contracts.game import Roll
from opolyx_contracts.table import TableCommand
from opolyx_service.nats_auth import connect_options
from opolyx_service.settings import NatsSettings
from opolyx_testing.local_layout import LocalLayout
from opolyx_testing.nats_server import deny_publish, reload_server
from playwright.sync_api import expect

from .client_steps import SEQ, my_pending, poll, sign_in, start_game_with_bots, table_seq
from .conftest import LocalSystem, PageWatch, local_system

CATCH_UP_S = 15.0
"""The page looks at the table one second after the refusal (the gateway's RESYNC_DELAY);
a loaded machine takes longer."""


def drop_table_updates(layout: LocalLayout) -> None:
    """From now on, the local nats-server drops every update the table service publishes."""
    deny_publish(layout.nats_config, "table", [subjects.table_update_wildcard()])
    reload_server(layout.nats_server().pid, layout.log_file("nats-server"))


async def roll_elsewhere(url: str, table_id: str, player_id: str) -> int:
    """The player's roll, sent as another gateway would (`url`: with the gateway role's
    credentials); the table's sequence after it."""
    settings = NatsSettings(url=url)  # the role's own reply inbox, as a service connects
    nc = await nats.connect(servers=settings.servers, **connect_options(settings))
    try:
        command = TableCommand(command_id="other-device", player_id=player_id, command=Roll())
        reply = await nc.request(
            subjects.table_command(table_id), command.model_dump_json().encode(), timeout=10
        )
    finally:
        await nc.close()
    answer = json.loads(reply.data)
    assert answer["ok"], answer
    return int(answer["seq"])


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """A whole local opolyx of this module's own: its updates are dropped mid-test."""
    with local_system(tmp_path_factory.mktemp("opolyx-lost-updates")) as system:
        yield system


def test_a_click_on_a_state_whose_updates_were_lost_brings_the_page_up_to_date(
    pages: PageWatch, local: LocalSystem
) -> None:
    page = pages.open()
    sign_in(page, "Lost")
    start_game_with_bots(page, bots=1)
    roll_button = page.locator("#decision [data-cmd=roll]")
    roll_button.wait_for(timeout=60_000)
    shown = table_seq(page)
    table_id = str(page.evaluate("window.opolyx.app.watching"))
    player_id = str(page.evaluate("window.opolyx.app.session.player_id"))

    drop_table_updates(local.layout)
    with ThreadPoolExecutor(1) as other_device:  # its own event loop, beside Playwright's
        stored = other_device.submit(
            asyncio.run, roll_elsewhere(local.layout.nats_url_for("gateway"), table_id, player_id)
        ).result()
    assert stored > shown
    page.wait_for_timeout(500)
    assert table_seq(page) == shown, "an update reached the page: nothing was lost"
    expect(roll_button).to_be_enabled()

    roll_button.click()
    poll(page, f"{SEQ} >= {stored}", CATCH_UP_S)
    assert my_pending(page) != "roll" or table_seq(page) > stored
