"""The messages a table sends and the snapshot it stores: the bytes are exactly the contract
models' own, the parts kept between commands are what the rules give."""

from __future__ import annotations

import json
import time

import opolyx_rules
import orjson
import pytest
from opolyx_contracts import game
from opolyx_contracts.table import (
    AutopilotChanged,
    DecisionRequest,
    PendingDecision,
    PublicView,
    SeatSpec,
    TableEvents,
    TableUpdate,
)
from opolyx_rules.commands import PayBail, Roll
from opolyx_rules.simulate import simple_policy
from opolyx_table import core, messages
from opolyx_table.table import SNAPSHOT_FORMAT, Table


def midgame_table() -> Table:
    state = opolyx_rules.new_game("classic", 3, 17)
    for step in range(80):
        seat = opolyx_rules.awaiting(state)[0]
        state, _ = opolyx_rules.apply(state, simple_policy(state, seat), float(step + 1))
    return Table(
        table_id="t-msg",
        partition=3,
        key="3.t-msg",
        room_id="room",
        mode="classic",
        rules_version=opolyx_rules.RULES_VERSION,
        seats=[SeatSpec(player_id=f"bot-{i}", bot=True) for i in range(3)],
        seed=17,
        seed_commitment=opolyx_rules.seed_commitment(17),
        started_at=time.time() - 100,
        state=state,
        seq=200,
    )


def test_the_spliced_update_is_the_update_model_with_the_rules_view() -> None:
    table = midgame_table()
    seat = opolyx_rules.awaiting(table.state)[0]
    new_state, events = opolyx_rules.apply(table.state, simple_policy(table.state, seat), 90.0)
    batch = core.PlannedBatch(game.Roll(seat=seat), "c", 90.0, events, new_state)
    stored = messages.rules_batch(table, 201, batch, "w")
    table.state = new_state
    change = messages.Change(table, core.decisions(new_state))
    body = messages.table_update(table, [stored], change)
    update = TableUpdate.model_validate_json(body)
    assert update.view == PublicView.model_validate(opolyx_rules.public_view(new_state))
    assert update.events == stored.message.events
    assert [d.seat for d in update.pending] == opolyx_rules.awaiting(new_state)
    # Byte for byte what the model itself writes (same fields, same order, same values).
    assert body == messages.encode(update)


def test_the_spliced_decision_request_is_the_request_model() -> None:
    table = midgame_table()
    decisions = core.decisions(table.state)
    change = messages.Change(table, decisions)
    seat = decisions[0].seat
    body = messages.decision_request(table, seat, 2, change, 16)
    request = DecisionRequest.model_validate_json(body)
    assert request.seat == seat and request.attempt == 2 and request.version == 200
    assert request.command_subject.endswith(".t-msg.bot"), "the bots answer on their own subject"
    assert [c.model_dump(mode="json") for c in request.legal] == [
        opolyx_rules.command_to_json(c) for c in opolyx_rules.legal_commands(table.state, seat)
    ]
    assert body == messages.encode(request)
    assert "rng" not in json.loads(body)["state"]


def test_encode_fields_writes_every_field_of_the_model_in_its_order_and_no_other() -> None:
    fields = {"seat": 1, "kind": "roll", "deadline_at": None}
    legal = orjson.Fragment(b'[{"type":"roll","seat":1}]')
    body = messages.encode_fields(PendingDecision, legal=legal, **fields)
    assert body == messages.encode(PendingDecision.model_validate_json(body))
    assert list(json.loads(body)) == list(PendingDecision.model_fields)
    with pytest.raises(TypeError, match=r"missing fields \['legal'\]"):
        messages.encode_fields(PendingDecision, **fields)
    with pytest.raises(TypeError, match=r"unknown fields \['legl'\]"):
        messages.encode_fields(PendingDecision, legl=legal, **fields)
    misspelt = r"unknown fields \['deadline'\], missing fields \['deadline_at'\]"
    with pytest.raises(TypeError, match=misspelt):
        messages.encode_fields(PendingDecision, seat=1, kind="roll", deadline=None, legal=legal)


def test_the_view_carries_the_same_pending_decisions_as_an_update() -> None:
    """A first watcher asks once: the view names every open decision with its legal
    commands, exactly as the next `TableUpdate` would."""
    table = midgame_table()
    change = messages.Change(table, core.decisions(table.state))
    pending_in_update = json.loads(change.pending_json)
    view = messages.view_reply(table, None)
    assert view.legal is None
    assert [p.model_dump(mode="json") for p in view.pending] == pending_in_update
    assert [p.seat for p in view.pending] == opolyx_rules.awaiting(table.state)


def test_a_rules_batch_is_stored_as_the_events_model_would_write_it() -> None:
    """The stored bytes come from the rules' event JSON, not the model: over a whole game
    (every event kind a game meets, autopilot marks too) they parse to the message the
    model builds from the same batch, and are byte for byte what that model writes."""
    table = midgame_table()
    state = opolyx_rules.new_game("classic", 3, 23)
    seq, kinds = 1, set[str]()
    for step in range(600):
        if state.finished:
            break
        seat = opolyx_rules.awaiting(state)[0]
        command = simple_policy(state, seat)
        state, events = opolyx_rules.apply(state, command, float(step + 1))
        batch = core.PlannedBatch(
            game.Roll(seat=seat), f"c{step}", float(step + 1), events, state, step % 5 == 0
        )
        stored = messages.rules_batch(table, seq + 1, batch, f"w{step}")
        expected = messages.events_message(
            table, seq + 1, messages.rules_events(batch), batch, f"w{step}"
        )
        parsed = TableEvents.model_validate_json(stored.body)
        assert parsed == expected.model_copy(update={"at": parsed.at})
        assert stored.body == messages.encode(parsed)
        assert (stored.first_seq, stored.last_seq, stored.version) == (
            expected.first_seq, expected.last_seq, expected.version,
        )  # fmt: skip
        kinds.update(record.event.type for record in parsed.events)
        seq = stored.last_seq
    assert len(kinds) >= 10, f"too few event kinds met: {sorted(kinds)}"


def test_an_update_carries_the_records_of_every_batch_it_covers_in_order() -> None:
    table = midgame_table()
    first = messages.StoredEvents.of(
        messages.events_message(
            table, 201, [AutopilotChanged(seat=1, on=True, reason="away")], None, "a"
        )
    )
    seat = opolyx_rules.awaiting(table.state)[0]
    new_state, events = opolyx_rules.apply(table.state, simple_policy(table.state, seat), 90.0)
    second = messages.rules_batch(
        table, 202, core.PlannedBatch(game.Roll(seat=seat), "c", 90.0, events, new_state), "w"
    )
    table.state = new_state
    change = messages.Change(table, core.decisions(new_state))
    update = TableUpdate.model_validate_json(messages.table_update(table, [first, second], change))
    assert (update.first_seq, update.last_seq) == (201, second.last_seq)
    assert update.events == [*first.message.events, *second.message.events]
    assert [r.seq for r in update.events] == list(range(201, second.last_seq + 1))


def test_the_view_and_legal_json_kept_between_commands_are_what_the_rules_give() -> None:
    """The squares' JSON and the property values in the net worths are kept by the `props`
    value and each legal command's JSON by value:
    over a whole game the bytes equal a fresh serialisation, after props changed and when
    not, and games whose properties are alike share one entry."""
    state = opolyx_rules.new_game("classic", 4, 29)
    assert messages.view_json(state) == orjson.dumps(opolyx_rules.public_view(state))
    kept = len(messages._PROPS_PARTS)
    other = opolyx_rules.new_game("classic", 3, 30)
    assert other.props is not state.props and other.props == state.props
    assert messages.view_json(other) == orjson.dumps(opolyx_rules.public_view(other))
    assert len(messages._PROPS_PARTS) == kept, "a new game's squares are shared"
    assert messages.net_worths(other) == list(opolyx_rules.net_worths(other))
    assert len(messages.net_worths(other)) == 3 and len(messages.net_worths(state)) == 4
    changed = 0
    for step in range(500):
        if state.finished:
            break
        assert messages.view_json(state) == orjson.dumps(opolyx_rules.public_view(state))
        assert messages.net_worths(state) == list(opolyx_rules.net_worths(state))
        for decision in core.decisions(state):
            assert messages.legal_json(decision.legal) == orjson.dumps(
                [opolyx_rules.command_to_json(c) for c in decision.legal]
            )
        seat = opolyx_rules.awaiting(state)[0]
        before = state.props
        state, _ = opolyx_rules.apply(state, simple_policy(state, seat), float(step + 1))
        changed += state.props != before
    assert changed > 1, "the game never changed its properties"


def test_a_change_s_view_and_net_worths_follow_the_table_s_props_over_a_game() -> None:
    """A table reuses its props parts while `props` is the very same tuple: every change
    over a game is still what the rules give, after props changed and when not."""
    table = midgame_table()
    reused = changed = 0
    for step in range(400):
        if table.state.finished:
            break
        kept = table.kept_props
        change = messages.Change(table, core.decisions(table.state))
        assert change.view_json == orjson.dumps(opolyx_rules.public_view(table.state))
        assert change.net_worth == list(opolyx_rules.net_worths(table.state))
        assert table.kept_props is not None and table.kept_props[0] is table.state.props
        reused += kept is table.kept_props
        seat = opolyx_rules.awaiting(table.state)[0]
        before = table.state.props
        table.state, _ = opolyx_rules.apply(
            table.state, simple_policy(table.state, seat), float(200 + step)
        )
        changed += table.state.props != before
    assert reused > 100 and changed > 1, (reused, changed)


def test_a_snapshot_with_the_kept_squares_is_the_snapshot_the_table_writes_alone() -> None:
    table = midgame_table()
    squares = messages.table_props_parts(table).squares
    assert orjson.dumps(table.to_snapshot(squares)) == orjson.dumps(table.to_snapshot())
    loaded = Table.from_snapshot(orjson.loads(orjson.dumps(table.to_snapshot(squares))), "k", 1)
    assert loaded.state == table.state and loaded.seats == table.seats


def stored(table: Table) -> dict[str, object]:
    """The snapshot as it comes back from the KV bucket (JSON, as the store writes it)."""
    loaded: dict[str, object] = orjson.loads(orjson.dumps(table.to_snapshot()))
    return loaded


def test_the_recent_command_ids_come_back_in_order_with_their_answers() -> None:
    table = midgame_table()
    for n in range(70):
        table.remember(f"cmd-{n}", 100 + n, 1 + n % 3, 64)
    snapshot = stored(table)
    assert snapshot["format"] == SNAPSHOT_FORMAT == 3
    loaded = Table.from_snapshot(snapshot, table.key, 7)
    assert list(loaded.recent.items()) == list(table.recent.items())
    assert next(iter(loaded.recent)) == "cmd-6", "the oldest are the ones dropped"
    assert loaded.recent["cmd-69"] == (169, 1)


def test_a_snapshot_of_format_2_with_recent_as_a_list_still_loads() -> None:
    table = midgame_table()
    table.remember("a", 201, 2, 64)
    table.remember("b", 203, 1, 64)
    snapshot = stored(table)
    snapshot["format"] = 2
    snapshot["recent"] = [["a", 201, 2], ["b", 203, 1]]
    loaded = Table.from_snapshot(snapshot, table.key, 7)
    assert list(loaded.recent.items()) == [("a", (201, 2)), ("b", (203, 1))]
    assert loaded.state == table.state


def test_the_squares_kept_are_bounded_oldest_first() -> None:
    first = opolyx_rules.new_game("classic", 2, 1)
    messages.view_json(first)
    state = first
    for step in range(messages._PROPS_PARTS_LIMIT + 5):
        props = list(state.props)
        props[0] = props[0]._replace(mortgaged_round=step + 1)
        state = opolyx_rules.with_fields(state, props=tuple(props))
        assert messages.view_json(state) == orjson.dumps(opolyx_rules.public_view(state))
    assert len(messages._PROPS_PARTS) == messages._PROPS_PARTS_LIMIT
    assert first.props not in messages._PROPS_PARTS
    assert messages.view_json(first) == orjson.dumps(opolyx_rules.public_view(first))


def test_commands_of_different_types_with_equal_fields_keep_their_own_json() -> None:
    assert tuple(Roll(2)) == tuple(PayBail(2))
    assert messages.legal_json([Roll(2)]) == b'[{"type":"roll","seat":2}]'
    assert messages.legal_json([PayBail(2), Roll(2)]) == (
        b'[{"type":"pay_bail","seat":2},{"type":"roll","seat":2}]'
    )
