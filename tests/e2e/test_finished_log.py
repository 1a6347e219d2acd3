"""The log of a long finished game, watched afterwards, reads correctly. A spectator's page
re-watches only the last 150 events of a finished game, so its log begins partway: it must
begin at a turn (not with half of one: a payment whose card was drawn before the window)
and say that earlier moves are not shown, every line must be a sentence of the catalogue,
and it must end with the winner.

The game is a real one: a Blitz table of one player and two bots, the player resigns, and
the bots (at once, since no person is left) play it to the end."""

from __future__ import annotations

import re

from playwright.sync_api import ViewportSize, expect

from .client_steps import poll, sign_in, start_game_with_bots, wait_for_my_roll
from .conftest import DESKTOP, PHONE, WIDE, PageWatch

FINISH_S = 300.0
REPLAYED = 150  # the client's LOG_REPLAY: events re-watched when a page comes to a game


def test_a_long_finished_game_reads_from_a_turn_to_the_winner(pages: PageWatch) -> None:
    player = pages.open(DESKTOP)
    player.on("dialog", lambda dialog: dialog.accept())
    sign_in(player, "Rhea")
    start_game_with_bots(player, bots=2, mode="blitz")
    table_id = player.evaluate("window.opolyx.app.table.id")
    wait_for_my_roll(player)
    player.click("#resign")
    poll(player, "window.opolyx.app.table.view.state.finished", FINISH_S)
    last_seq = int(player.evaluate("window.opolyx.app.table.view.seq"))
    assert last_seq > 2 * REPLAYED, "the game is too short to test a partial log"

    # one finished game, read at both sizes the client is checked at
    for viewport, name in ((WIDE, "Vera"), (PHONE, "Vito")):
        read_the_log(pages, viewport, name, table_id, last_seq)


def read_the_log(
    pages: PageWatch, viewport: ViewportSize, name: str, table_id: str, last_seq: int
) -> None:
    viewer = pages.open(viewport, path=f"/?watch={table_id}")
    viewer.fill("#signin-name", name)
    viewer.click("#signin-go")
    expect(viewer.locator("#view-table")).to_be_visible()
    poll(viewer, "window.opolyx.app.table && window.opolyx.app.table.view")
    poll(viewer, f"window.opolyx.app.table.seq >= {last_seq}")
    got = viewer.evaluate(
        """async () => {
          const { EVENT_TYPES } = await import('/js/constants.js');
          const names = await import('/js/names.js');
          const t = window.opolyx.app.table;
          return {
            events: t.events.length,
            partial: t.partial,
            winner: names.winnerText(t.view.state),
            // whose turn the log's first whole turn is (none: the window lies inside one
            // turn, as a bankruptcy's many sales and mortgages can make the last one)
            first: ((turn) => (turn ? names.seatName(turn.seat) : null))(
              t.events.find((e) => e.type === EVENT_TYPES.TURN_STARTED)),
            lines: [...document.querySelectorAll('#log li')].map((li) => ({
              kind: li.className, text: li.textContent.trim() })),
            types: Object.values(EVENT_TYPES).map((type) => type.replaceAll('_', ' ')),
          };
        }"""
    )
    assert got["partial"] and got["events"] <= REPLAYED
    lines = got["lines"]  # newest first, as the page shows them
    texts = [line["text"] for line in lines]
    # it begins by saying so, and what follows is the start of a turn: that player's move
    # (a window without a turn's start is kept whole: the next test checks that case)
    assert lines[-1] == {"kind": "earlier", "text": "Earlier moves are not shown here."}
    if got["first"] is not None:
        assert texts[-2].startswith(got["first"]), (got["first"], texts[-6:])
    # it ends with the winner (the seed's fairness link comes last of all)
    assert got["winner"] in texts[:3], texts[:3]
    assert any(line["kind"] == "win" for line in lines[:3])
    # every line is a sentence: no key, no placeholder, no event type spelled as a fallback
    for text in texts:
        assert text and "{" not in text and not re.search(r"\b(log|ui|app)\.[a-z]", text), text
        assert text not in got["types"], text
    assert len(texts) > 20
    expect(viewer.locator("#end-dialog")).to_be_visible()


def test_a_partial_log_begins_at_its_first_turn_or_keeps_a_window_inside_one_turn(
    pages: PageWatch,
) -> None:
    # The page's own module on two windows of a game's events: one where a turn starts
    # after a moment of the turn before (that half story is dropped), one that lies inside
    # a single long turn (nothing to drop: every move is kept).
    page = pages.open(PHONE)
    got = page.evaluate(
        """async () => {
          const log = await import('/js/log.js');
          const { EVENT_TYPES: E, MOVE_HOWS: HOW } = await import('/js/constants.js');
          const named = [];  // the seats each log names, in order
          const ctx = {
            partial: true, tableId: 't', cardText: () => 'a card', squareName: () => 'a square',
            seatName: (seat) => { named.push(seat); return `seat ${seat}`; },
          };
          const moved = (seq, seat) => ({
            seq, type: E.MOVED, seat, frm: 0, to: 5, how: HOW.CARD, passed_start: false });
          const turn = { seq: 2, type: E.TURN_STARTED, seat: 1, round: 1, deadline: 75 };
          const read = (events) => {
            named.length = 0;
            const lines = log.describe(events, ctx).map((line) => line.kind || '');
            return { lines, named: [...named] };
          };
          return {
            atTurn: read([moved(1, 0), turn, moved(3, 1)]),
            insideTurn: read([moved(1, 0), moved(2, 0)]),
          };
        }"""
    )
    # the oldest line says earlier moves are not shown; then the moves kept, by whom
    assert got["atTurn"] == {"lines": ["earlier", ""], "named": [1]}
    assert got["insideTurn"] == {"lines": ["earlier", "", ""], "named": [0, 0]}


def test_a_log_cut_to_its_newest_lines_still_says_earlier_moves_are_not_shown(
    pages: PageWatch,
) -> None:
    # The table's log shows its newest 200 lines: a game of more has its oldest cut, and the
    # line that says so must be the one kept, not the first one cut. The page's own module.
    page = pages.open(PHONE)
    got = page.evaluate(
        """async () => {
          const log = await import('/js/log.js');
          const lines = (n) => [...Array(n).keys()].map((i) => ({ text: `line ${i}` }));
          const partial = [log.earlierLine(), ...lines(300)];
          return {
            earlier: log.earlierLine(),
            cut: log.newestLines(lines(300), 200),
            cutPartial: log.newestLines(partial, 200),
            short: log.newestLines(lines(5), 200),
          };
        }"""
    )
    for cut in (got["cut"], got["cutPartial"]):
        assert len(cut) == 200
        assert cut[0] == got["earlier"] and got["earlier"]["kind"] == "earlier"
        assert [line["text"] for line in cut[1:3]] == ["line 101", "line 102"]
        assert cut[-1] == {"text": "line 299"}
    assert [line["text"] for line in got["short"]] == [f"line {i}" for i in range(5)]
