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
from pathlib import Path

import nats
import pytest
from opolyx_contracts import subjects
from opolyx_contracts.game import Roll
from opolyx_contracts.table import TableCommand
from opolyx_service.nats_auth import connect_options
from opolyx_service.nats_server_config import CONFIG_NAME, url_with_credentials
from opolyx_service.settings import NatsSettings
from opolyx_testing.nats_server import deny_publish, reload_server
from playwright.sync_api import expect

from .client_steps import SEQ, my_pending, poll, sign_in, start_game_with_bots, table_seq
from .conftest import PageWatch, local_system

CATCH_UP_S = 15.0
"""The page looks at the table one second after the refusal (the gateway's RESYNC_DELAY);
a loaded machine takes longer."""


class LocalNats:
    """The nats-server of a `local_system`, found through `scripts/run_local.py`'s layout
    under its data folder."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        (ports,) = (data_dir / "nats-ports").glob("nats-server_*.ports")
        self.pid = int(ports.stem.rsplit("_", 1)[1])
        self.url = str(json.loads(ports.read_text())["nats"][0])

    def url_for(self, role: str) -> str:
        password = (self.data_dir / "nats-auth" / f"{role}.password").read_text().strip()
        return url_with_credentials(self.url, role, password)

    def drop_table_updates(self) -> None:
        deny_publish(
            self.data_dir / "nats-auth" / CONFIG_NAME, "table", [subjects.table_update_wildcard()]
        )
        reload_server(self.pid, self.data_dir / "logs" / "nats-server.log")


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
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A whole local opolyx of this module's own: its updates are dropped mid-test."""
    data_dir = tmp_path_factory.mktemp("opolyx-lost-updates")
    with local_system(data_dir) as url:
        yield url, data_dir


@pytest.fixture(scope="module")
def system_url(local: tuple[str, Path]) -> str:
    return local[0]


def test_a_click_on_a_state_whose_updates_were_lost_brings_the_page_up_to_date(
    pages: PageWatch, local: tuple[str, Path]
) -> None:
    page = pages.open()
    sign_in(page, "Lost")
    start_game_with_bots(page, bots=1)
    roll_button = page.locator("#decision [data-cmd=roll]")
    roll_button.wait_for(timeout=60_000)
    shown = table_seq(page)
    table_id = str(page.evaluate("window.opolyx.app.watching"))
    player_id = str(page.evaluate("window.opolyx.app.session.player_id"))

    nats_server = LocalNats(local[1])
    nats_server.drop_table_updates()
    with ThreadPoolExecutor(1) as other_device:  # its own event loop, beside Playwright's
        stored = other_device.submit(
            asyncio.run, roll_elsewhere(nats_server.url_for("gateway"), table_id, player_id)
        ).result()
    assert stored > shown
    page.wait_for_timeout(500)
    assert table_seq(page) == shown, "an update reached the page: nothing was lost"
    expect(roll_button).to_be_enabled()

    roll_button.click()
    poll(page, f"{SEQ} >= {stored}", CATCH_UP_S)
    assert my_pending(page) != "roll" or table_seq(page) > stored
