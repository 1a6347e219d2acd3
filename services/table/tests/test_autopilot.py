"""Who may act for a seat, and the autopilot's state machine (present, grace, autopilot,
back), without NATS: the pure parts of the table (`core`, `autopilot`, `pace`)."""

from __future__ import annotations

import opolyx_rules
from opolyx_contracts import ErrorReply, errors, game
from opolyx_contracts.table import SEAT_NOT_AUTOMATED, CommandAccepted, SeatSpec, TableCommand
from opolyx_table import autopilot, core, pace
from opolyx_table.table import Table

STARTED_AT = 1_000_000.0
GRACE = 30.0


def make_table(seats: list[SeatSpec], seed: int = 5, on_drop: bool = True) -> Table:
    return Table(
        table_id="t1",
        partition=0,
        key="0.t1",
        room_id=None,
        mode="classic",
        rules_version=opolyx_rules.RULES_VERSION,
        seats=seats,
        seed=seed,
        seed_commitment=opolyx_rules.seed_commitment(seed),
        started_at=STARTED_AT,
        state=opolyx_rules.new_game("classic", len(seats), seed),
        seq=1,
        autopilot_on_drop=on_drop,
    )


HUMAN_AND_BOT = [SeatSpec(player_id="ines"), SeatSpec(player_id="bot-ada", bot=True)]


def roll_for(table: Table, player: str, cid: str = "c1") -> TableCommand:
    return TableCommand(command_id=cid, player_id=player, command=game.Roll())


def seat_to_act(table: Table) -> int:
    assert table.state.pending is not None
    return table.state.pending.seat


def table_where(seat_on_move: int, **kwargs: object) -> Table:
    """A human-and-bot table whose first decision is `seat_on_move`'s roll."""
    for seed in range(1, 200):
        table = make_table(list(HUMAN_AND_BOT), seed=seed, **kwargs)  # type: ignore[arg-type]
        if seat_to_act(table) == seat_on_move:
            return table
    raise AssertionError("no seed starts with that seat")


# --- who may act on which subject ---------------------------------------------------


def test_a_bots_subject_command_for_a_human_seat_is_refused_and_changes_nothing() -> None:
    table = table_where(0)
    before = opolyx_rules.state_to_json(table.state)
    outcome = core.accept(table, roll_for(table, "ines"), STARTED_AT + 1, via_bots=True)
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.reply.error.code == SEAT_NOT_AUTOMATED
    assert outcome.batches == []
    assert opolyx_rules.state_to_json(table.state) == before


def test_a_players_subject_command_for_a_bot_seat_is_refused() -> None:
    table = table_where(1)
    outcome = core.accept(table, roll_for(table, "bot-ada"), STARTED_AT + 1)
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.reply.error.code == errors.SEAT_NOT_YOURS
    assert outcome.batches == []


def test_bots_act_for_bot_seats_and_players_for_their_own() -> None:
    bot_turn = table_where(1)
    outcome = core.accept(bot_turn, roll_for(bot_turn, "bot-ada"), STARTED_AT + 1, via_bots=True)
    assert isinstance(outcome.reply, CommandAccepted)
    assert not outcome.batches[-1].autopilot
    human_turn = table_where(0)
    outcome = core.accept(human_turn, roll_for(human_turn, "ines"), STARTED_AT + 1)
    assert isinstance(outcome.reply, CommandAccepted)
    assert not outcome.batches[-1].autopilot


def test_the_bots_may_act_for_a_human_seat_only_while_it_is_on_autopilot() -> None:
    table = table_where(0)
    table.autopilot.add(0)
    outcome = core.accept(table, roll_for(table, "ines"), STARTED_AT + 1, via_bots=True)
    assert isinstance(outcome.reply, CommandAccepted)
    assert outcome.batches[-1].autopilot, "the autopilot's turns are marked"
    table.autopilot.discard(0)
    again = core.accept(table, roll_for(table, "ines", "c2"), STARTED_AT + 1, via_bots=True)
    assert isinstance(again.reply, ErrorReply)
    assert again.reply.error.code == SEAT_NOT_AUTOMATED


# --- the state machine ------------------------------------------------------------


def test_a_seat_never_reported_counts_as_present() -> None:
    table = table_where(0)
    assert table.away == {} and table.autopilot == set()
    assert autopilot.grace_over(table, 0, STARTED_AT) is None


def test_a_drop_starts_the_grace_period_and_the_autopilot_takes_over_after_it() -> None:
    table = table_where(0)
    assert autopilot.presence(table, 0, "gw1", True, STARTED_AT, GRACE) == (None, None)
    change, grace_end = autopilot.presence(table, 0, "gw1", False, STARTED_AT + 5, GRACE)
    assert change is None, "during the grace period the seat keeps its own clock"
    assert grace_end == STARTED_AT + 5 + GRACE
    assert table.away == {0: STARTED_AT + 5}
    on = autopilot.grace_over(table, 0, STARTED_AT + 5)
    assert on is not None and on.on and on.reason == "away" and on.seat == 0
    autopilot.record(table, on)
    assert table.autopilot == {0}
    assert autopilot.grace_over(table, 0, STARTED_AT + 5) is None, "only once"


def test_the_player_back_within_the_grace_period_keeps_the_seat() -> None:
    table = table_where(0)
    autopilot.presence(table, 0, "gw1", False, STARTED_AT, GRACE)
    change, _ = autopilot.presence(table, 0, "gw1", True, STARTED_AT + 3, GRACE)
    assert change is None
    assert autopilot.grace_over(table, 0, STARTED_AT) is None
    # Gone again: a new grace period (the old one's end does nothing).
    _, grace_end = autopilot.presence(table, 0, "gw1", False, STARTED_AT + 10, GRACE)
    assert grace_end == STARTED_AT + 10 + GRACE
    assert autopilot.grace_over(table, 0, STARTED_AT) is None
    assert autopilot.grace_over(table, 0, STARTED_AT + 10) is not None


def test_the_player_back_takes_the_seat_from_the_autopilot_at_once() -> None:
    table = table_where(0)
    autopilot.presence(table, 0, "gw1", False, STARTED_AT, GRACE)
    on = autopilot.grace_over(table, 0, STARTED_AT)
    assert on is not None
    autopilot.record(table, on)
    off, _ = autopilot.presence(table, 0, "gw1", True, STARTED_AT + 60, GRACE)
    assert off is not None and not off.on and off.reason == "back"
    autopilot.record(table, off)
    assert table.autopilot == set() and table.away == {}
    # Mid-decision: the bots' command for the seat is refused from now on.
    outcome = core.accept(table, roll_for(table, "ines"), STARTED_AT + 61, via_bots=True)
    assert isinstance(outcome.reply, ErrorReply)


def test_a_command_of_the_player_counts_as_back() -> None:
    table = table_where(0)
    autopilot.presence(table, 0, "gw1", False, STARTED_AT, GRACE)
    on = autopilot.grace_over(table, 0, STARTED_AT)
    assert on is not None
    autopilot.record(table, on)
    off = autopilot.back(table, 0)
    assert off is not None and off.reason == "back"


def test_a_socket_on_another_gateway_keeps_the_player_present() -> None:
    table = table_where(0)
    autopilot.presence(table, 0, "gw1", True, STARTED_AT, GRACE)
    autopilot.presence(table, 0, "gw2", True, STARTED_AT, GRACE)
    assert autopilot.presence(table, 0, "gw1", False, STARTED_AT + 1, GRACE) == (None, None)
    assert table.away == {}
    _, grace_end = autopilot.presence(table, 0, "gw2", False, STARTED_AT + 2, GRACE)
    assert grace_end == STARTED_AT + 2 + GRACE


def test_a_gateway_gone_quiet_no_longer_keeps_the_player_present() -> None:
    table = table_where(0)
    ttl = 90.0
    autopilot.presence(table, 0, "dead-gw", True, STARTED_AT, GRACE, ttl)  # then it died
    autopilot.presence(table, 0, "gw2", True, STARTED_AT + 100, GRACE, ttl)  # came back here
    _, grace_end = autopilot.presence(table, 0, "gw2", False, STARTED_AT + 120, GRACE, ttl)
    assert grace_end == STARTED_AT + 120 + GRACE
    assert table.away == {0: STARTED_AT + 120}
    # A gateway that keeps repeating its word still counts.
    fresh = table_where(0)
    autopilot.presence(fresh, 0, "gw1", True, STARTED_AT, GRACE, ttl)
    autopilot.presence(fresh, 0, "gw2", True, STARTED_AT, GRACE, ttl)
    autopilot.presence(fresh, 0, "gw1", True, STARTED_AT + 60, GRACE, ttl)  # its refresh
    assert autopilot.presence(fresh, 0, "gw2", False, STARTED_AT + 100, GRACE, ttl) == (None, None)
    assert fresh.away == {}


def test_plain_r16_rooms_never_start_the_autopilot_on_a_drop() -> None:
    table = table_where(0, on_drop=False)
    change, grace_end = autopilot.presence(table, 0, "gw1", False, STARTED_AT, GRACE)
    assert change is None and grace_end is None
    assert autopilot.grace_over(table, 0, STARTED_AT) is None
    # ...but a player may still choose it for themselves.
    chosen = autopilot.switch(table, 0, True)
    assert chosen is not None and chosen.on and chosen.reason == "chosen"


def test_a_chosen_autopilot_stays_on_when_the_player_is_back_until_switched_off() -> None:
    table = table_where(0)
    chosen = autopilot.switch(table, 0, True)
    assert chosen is not None
    autopilot.record(table, chosen)
    assert table.autopilot == {0} and table.autopilot_chosen == {0}
    assert autopilot.switch(table, 0, True) is None, "already on"
    assert autopilot.presence(table, 0, "gw1", True, STARTED_AT, GRACE) == (None, None)
    assert autopilot.back(table, 0) is None
    released = autopilot.switch(table, 0, False)
    assert released is not None and not released.on and released.reason == "released"
    autopilot.record(table, released)
    assert table.autopilot == set() and table.autopilot_chosen == set()
    assert autopilot.switch(table, 0, False) is None


def test_the_autopilot_state_survives_a_snapshot() -> None:
    table = table_where(0, on_drop=False)
    chosen = autopilot.switch(table, 0, True)
    assert chosen is not None
    autopilot.record(table, chosen)
    loaded = Table.from_snapshot(table.to_snapshot(), table.key, 1)
    assert loaded.autopilot == {0} and loaded.autopilot_chosen == {0}
    assert loaded.autopilot_on_drop is False


def test_bot_seats_are_not_human_seats() -> None:
    table = table_where(0)
    assert autopilot.human_seat(table, "ines") == 0
    assert autopilot.human_seat(table, "bot-ada") is None
    assert autopilot.human_seat(table, "someone") is None


# --- pace ---------------------------------------------------------------------------


def _bot_decision(table: Table) -> core.Decision:
    (decision,) = [d for d in core.decisions(table.state) if d.seat == 1]
    return decision


def test_with_a_human_at_the_table_a_bot_thinks_for_a_while() -> None:
    table = table_where(1)
    decision = _bot_decision(table)
    delay = pace.think_seconds(table, decision, 1.0)
    low, high = pace.STYLE_THINK["balanced"]  # bot-ada's style
    assert low * pace.TRIVIAL_FACTOR <= delay <= high * pace.TRIVIAL_FACTOR, "a roll is quick"
    assert pace.think_seconds(table, decision, 1.0) == delay, "seeded: the same every time"
    assert pace.think_seconds(table, decision, 2.0) == 2 * delay


def test_a_decision_with_choices_takes_longer_than_a_roll() -> None:
    table = table_where(1)
    decision = core.Decision(1, "buy", None, _bot_decision(table).legal * 2)
    delay = pace.think_seconds(table, decision, 1.0)
    low, high = pace.STYLE_THINK["balanced"]
    assert low <= delay <= high


def test_only_bots_left_or_pace_zero_means_no_wait() -> None:
    table = table_where(1)
    decision = _bot_decision(table)
    assert pace.think_seconds(table, decision, 0.0) == 0.0
    bots_only = make_table(
        [SeatSpec(player_id="bot-ada", bot=True), SeatSpec(player_id="bot-kemi", bot=True)]
    )
    (first,) = core.decisions(bots_only.state)
    assert pace.think_seconds(bots_only, first, 1.0) == 0.0
