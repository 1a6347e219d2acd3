"""The table's pure core: every decision about a command, without NATS or storage."""

from __future__ import annotations

import opolyx_rules
import pytest
from opolyx_contracts import ErrorReply, game
from opolyx_contracts.table import CommandAccepted, SeatSpec, TableCommand
from opolyx_table import core
from opolyx_table.table import Table

STARTED_AT = 1_000_000.0


def make_table(seats: int = 2, mode: str = "classic", seed: int = 5) -> Table:
    return Table(
        table_id="t1",
        partition=0,
        key="0.t1",
        room_id=None,
        mode=mode,
        rules_version=opolyx_rules.RULES_VERSION,
        seats=[SeatSpec(player_id=f"p{i}") for i in range(seats)],
        seed=seed,
        seed_commitment=opolyx_rules.seed_commitment(seed),
        started_at=STARTED_AT,
        state=opolyx_rules.new_game(mode, seats, seed),
        seq=1,  # the table_created event
    )


def request(
    player: str, command: game.GameCommand, cid: str = "c1", expected: int | None = None
) -> TableCommand:
    return TableCommand(
        command_id=cid, player_id=player, command=command, expected_version=expected
    )


def to_act(state: opolyx_rules.State) -> int:
    assert state.pending is not None
    return state.pending.seat


def at(game_seconds: float) -> float:
    return STARTED_AT + game_seconds


def commit(table: Table, outcome: core.Outcome) -> None:
    """What the shell does once the outcome's batches are stored."""
    for batch in outcome.batches:
        table.seq += len(batch.events)
        table.state = batch.state
        if batch.command_id is not None:
            table.remember(batch.command_id, table.seq, len(batch.events), 64)
    if outcome.rejection is not None:
        table.remember_rejection(*outcome.rejection, 64)


def test_a_legal_command_yields_its_events_and_the_reply_names_the_new_version() -> None:
    table = make_table()
    seat = to_act(table.state)
    outcome = core.accept(table, request(f"p{seat}", game.Roll()), at(1))
    assert outcome.label == "ok"
    (batch,) = outcome.batches
    assert batch.command == game.Roll(seat=seat), "the seat is filled in"
    assert batch.command_id == "c1"
    assert batch.events and batch.state is not table.state
    last = 1 + len(batch.events)
    assert outcome.reply == CommandAccepted(seq=last, version=last, events=len(batch.events))
    assert table.seq == 1, "the core changes nothing"


def test_a_resent_command_id_gets_the_first_answer_and_nothing_is_applied() -> None:
    table = make_table()
    player = f"p{to_act(table.state)}"
    first = core.accept(table, request(player, game.Roll()), at(1))
    commit(table, first)
    again = core.accept(table, request(player, game.Roll()), at(2))
    assert again.label == "duplicate"
    assert again.batches == []
    assert again.reply == first.reply


def test_a_refused_command_id_is_refused_again_the_same_way() -> None:
    table = make_table()
    refused = core.accept(table, request("p0", game.Buy()), at(1))
    assert isinstance(refused.reply, ErrorReply)
    assert refused.rejection is not None
    commit(table, refused)
    again = core.accept(table, request("p0", game.Buy()), at(2))
    assert again.label == "duplicate"
    assert again.reply == refused.reply


@pytest.mark.parametrize(
    ("player", "command", "code"),
    [
        ("p0", game.Roll(seat=1), "seat/not_yours"),
        ("stranger", game.Roll(), "seat/not_yours"),
        ("p0", game.Roll(seat=7), "seat/not_yours"),
        ("p0", game.Timeout(), core.COMMAND_NOT_ALLOWED),
    ],
)
def test_only_a_seat_s_owner_may_act_for_it_and_nobody_sends_a_timeout(
    player: str, command: game.GameCommand, code: str
) -> None:
    table = make_table()
    outcome = core.accept(table, request(player, command), at(1))
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.reply.error.code == code
    assert outcome.batches == []


def test_a_player_with_two_seats_must_name_the_seat() -> None:
    table = make_table()
    table.seats = [SeatSpec(player_id="both"), SeatSpec(player_id="both")]
    unnamed = core.accept(table, request("both", game.Roll()), at(1))
    assert isinstance(unnamed.reply, ErrorReply)
    named = core.accept(table, request("both", game.Roll(seat=to_act(table.state))), at(1))
    assert named.label == "ok"


def test_a_decision_for_an_old_version_is_stale() -> None:
    table = make_table()
    player = f"p{to_act(table.state)}"
    outcome = core.accept(table, request(player, game.Roll(), expected=0), at(1))
    assert outcome.label == "stale"
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.reply.error.code == "command/stale_version"
    assert core.accept(table, request(player, game.Roll(), expected=1), at(1)).label == "ok"


def test_a_rules_refusal_keeps_the_rules_code() -> None:
    table = make_table()
    idle = 1 - to_act(table.state)
    outcome = core.accept(table, request(f"p{idle}", game.Roll()), at(1))
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.label == "refused"
    assert "/" in outcome.reply.error.code
    assert outcome.rejection == ("c1", outcome.reply.error.code, outcome.reply.error.message)


def test_deadlines_due_before_a_command_fire_first_each_at_its_own_time() -> None:
    table = make_table()
    deadline = opolyx_rules.next_deadline(table.state)
    assert deadline is not None
    # Long after the deadline: the timeout is stored first, then whoever acts next acts.
    timed_out = core.fire_due(table.state, deadline)[-1].state
    nxt = to_act(timed_out)
    outcome = core.accept(table, request(f"p{nxt}", game.Roll()), at(deadline + 0.5))
    assert outcome.batches[0].command == game.Timeout()
    assert outcome.batches[0].at == deadline
    assert outcome.batches[0].command_id is None
    assert outcome.batches[-1].command == game.Roll(seat=nxt)
    total = sum(len(b.events) for b in outcome.batches)
    assert isinstance(outcome.reply, CommandAccepted)
    assert outcome.reply.seq == 1 + total


def test_timeouts_are_stored_even_when_the_command_then_fails() -> None:
    table = make_table()
    deadline = opolyx_rules.next_deadline(table.state)
    assert deadline is not None
    timed_out = core.fire_due(table.state, deadline)[-1].state
    waiting = 1 - to_act(timed_out)
    outcome = core.accept(table, request(f"p{waiting}", game.Roll()), at(deadline + 0.5))
    assert isinstance(outcome.reply, ErrorReply), "not this seat's turn once the timeout fired"
    assert outcome.batches and all(b.command == game.Timeout() for b in outcome.batches)


def test_a_moved_table_answers_not_owner() -> None:
    table = make_table()
    table.dropped = True
    outcome = core.accept(table, request("p0", game.Roll()), at(1))
    assert outcome.label == "moved"


def test_fire_due_fires_nothing_before_the_deadline() -> None:
    table = make_table()
    deadline = opolyx_rules.next_deadline(table.state)
    assert deadline is not None
    assert core.fire_due(table.state, deadline - 0.001) == []
    fired = core.fire_due(table.state, deadline)
    assert len(fired) == 1 and fired[0].at == deadline


def test_decisions_name_each_waiting_seat_its_kind_and_its_legal_commands() -> None:
    table = make_table()
    (decision,) = core.decisions(table.state)
    assert decision.seat == to_act(table.state) and decision.kind == "roll"
    assert decision.legal == opolyx_rules.legal_commands(table.state, decision.seat)
    assert decision.deadline == opolyx_rules.next_deadline(table.state)


def test_a_finished_game_refuses_commands() -> None:
    table = make_table(mode="blitz")
    state = table.state
    while not state.finished:
        state, _ = opolyx_rules.apply(state, opolyx_rules.commands.Resign(0), 1.0)
    table.state = state
    outcome = core.accept(table, request("p1", game.Roll()), at(2))
    assert isinstance(outcome.reply, ErrorReply)
    assert outcome.reply.error.code == "table/finished"
