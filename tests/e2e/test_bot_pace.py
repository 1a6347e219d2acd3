"""Bots at a table with a person play at a pace the person can follow: their moves reach the
page one at a time, spaced by their think time, not a whole round between two clicks.

Measured as the page receives them, against the real services at the pace `make run` uses
(`bot_pace` 1: about 0.5-1.5 s a decision, 0.4 of that for a roll): the test records every
table update the page's websocket receives (its sequence numbers and the table's clock at
sending), and while the bots play it looks at the page's state over and over. The property
is counted, not timed by the test's clock: the page was seen in (at least) half as many
different states as the bots sent updates, so they did not arrive together. Unpaced, a round
of three bots arrives within milliseconds and the page is seen in one or two states. The
table's own clock on the updates (`now`) says how far apart it sent them: the bots' think
time is a lower bound on it, which a loaded machine can only lengthen."""

from __future__ import annotations

import itertools
import os
import statistics
import time
from dataclasses import dataclass, field

from opolyx_testing.gateway_client import frame_messages
from playwright.sync_api import Page, ViewportSize, WebSocket

from .client_steps import WAIT_S, my_pending, sign_in, start_game_with_bots, table_seq
from .conftest import VIEWPORTS, PageWatch

# the shortest think time at bot_pace 1 (services/table pace.py: 0.5 s for the quickest
# style, times 0.4 for a roll), less a margin for the clock's resolution
SHORTEST_THINK_S = 0.5 * 0.4 * 0.9
ROUNDS = 2
# what this seat answers when the bots' turns ask it something (an auction, mostly)
ANSWERS = ("pass", "decline", "jackpot_decline", "pay", "bus", "teleport")


@dataclass
class Updates:
    """The table updates the page received: (first_seq, last_seq, table clock at sending)."""

    seen: list[tuple[int, int, float]] = field(default_factory=list)

    def listen(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        for message in frame_messages(payload):
            if message.get("type") == "table.update":
                self.seen.append((message["first_seq"], message["last_seq"], message["now"]))


def end_my_turn(page: Page) -> None:
    """Roll, and decline or pay whatever follows, until the decision is not this seat's."""
    page.locator("#decision [data-cmd=roll]").wait_for(timeout=WAIT_S * 1000)
    deadline = time.monotonic() + WAIT_S
    while my_pending(page) is not None:
        assert time.monotonic() < deadline, "my turn did not end"
        answer(page, ("roll", *ANSWERS))


def answer(page: Page, commands: tuple[str, ...]) -> None:
    for command in commands:
        button = page.locator(f"#decision [data-cmd={command}]:enabled")
        if button.count():
            before = table_seq(page)
            button.first.click()
            while table_seq(page) <= before and my_pending(page) is not None:
                page.wait_for_timeout(30)
            return
    page.wait_for_timeout(30)


def watch_the_bots(page: Page) -> list[int]:
    """The page's sequence number, looked at again and again until it is this seat's roll."""
    observed: list[int] = []
    deadline = time.monotonic() + 3 * WAIT_S
    while True:
        observed.append(table_seq(page))
        kind = my_pending(page)
        if kind == "roll":
            return observed
        if kind is not None:
            answer(page, ANSWERS)
        assert time.monotonic() < deadline, "the bots never handed the turn back"
        page.wait_for_timeout(40)


@VIEWPORTS
def test_bots_moves_reach_the_page_one_at_a_time_at_their_pace(
    pages: PageWatch, viewport: ViewportSize
) -> None:
    page = pages.open(viewport)
    updates = Updates()
    page.on("websocket", updates.listen)
    sign_in(page, "Pace")
    start_game_with_bots(page, bots=3)
    distinct, batches, gaps = 0, 0, []
    for _ in range(ROUNDS):
        end_my_turn(page)
        start = table_seq(page)
        observed = watch_the_bots(page)
        end = observed[-1]
        bots = [u for u in updates.seen if u[0] > start and u[1] <= end]
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(bots)), "out of order"
        distinct += len({seq for seq in observed if start < seq <= end})
        batches += len(bots)
        gaps += [b[2] - a[2] for a, b in itertools.pairwise(bots)]
    print(
        f"bots' updates {batches}, page states seen {distinct}, table's gaps median "
        f"{statistics.median(gaps):.2f} s (min {min(gaps):.2f} s), load {os.getloadavg()[0]:.1f}"
    )
    assert batches >= 3 * ROUNDS  # three bots took their turns, each at least one update
    assert distinct * 2 >= batches, (distinct, batches)
    assert statistics.median(gaps) >= SHORTEST_THINK_S, gaps
