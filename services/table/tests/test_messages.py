"""The messages a table sends: spliced encodings are exactly the contract models' own."""

from __future__ import annotations

import json
import time

import opolyx_rules
from opolyx_contracts import game
from opolyx_contracts.table import DecisionRequest, PublicView, SeatSpec, TableUpdate
from opolyx_rules.simulate import simple_policy
from opolyx_table import core, messages
from opolyx_table.table import Table


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
    stored = messages.events_message(table, 201, messages.rules_events(batch), batch, "w")
    table.state = new_state
    change = messages.Change(table, core.decisions(new_state))
    body = messages.table_update(table, [stored], change)
    update = TableUpdate.model_validate_json(body)
    assert update.view == PublicView.model_validate(opolyx_rules.public_view(new_state))
    assert update.events == stored.events
    assert [d.seat for d in update.pending] == opolyx_rules.awaiting(new_state)
    # Byte for byte what the model itself writes (same fields, same order, same values).
    assert json.loads(body) == json.loads(messages.encode(update))


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
    assert json.loads(body) == json.loads(messages.encode(request))
    assert "rng" not in json.loads(body)["state"]


def test_encode_with_splices_into_any_model() -> None:
    empty = PublicView.model_construct()
    assert messages.encode_with(empty, {"mode": b'"classic"'}) == b'{"mode":"classic"}'


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
