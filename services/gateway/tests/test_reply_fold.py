"""A command's reply in the same frame as the update it caused (`reply_fold.py`), on a
socket that asks for batched frames; every other socket and push one message per frame.

The real gateway on a real nats-server, in front of `FakeTable` answering in the table
service's order (the reply first, then the update: `FakeTable.reply_first`)."""

from __future__ import annotations

from typing import Any

from gateway_builders import FakeTable, RunningGateway, WsClient
from opolyx_contracts.gateway import (
    OkReply,
    TableCmdResult,
    TableUpdatePush,
    server_frame_adapter,
)
from opolyx_gateway.reply_fold import FOLD_WAIT


def kinds(frame: list[dict[str, Any]]) -> list[str]:
    return [m["type"] for m in frame]


async def seated(
    gateway: RunningGateway, table_id: str, *, batched: bool
) -> tuple[FakeTable, WsClient, WsClient]:
    """A two-seat table answering reply first; the first seat's socket (batched or not)
    and the second seat's (never batched), both watching with the state read."""
    token_a, a_id = await gateway.sign_in("Ann")
    token_b, b_id = await gateway.sign_in("Ben")
    table = await FakeTable(gateway.nc, table_id, [a_id, b_id]).start()
    table.reply_first = True
    actor = await gateway.client(token_a, batched=batched)
    other = await gateway.client(token_b)
    for client in (actor, other):
        await client.request("table.watch", table=table_id)
        await client.push("table.state")
    return table, actor, other


async def test_the_reply_comes_in_one_frame_after_the_update_it_caused(
    gateway: RunningGateway,
) -> None:
    table, actor, other = await seated(gateway, "f1", batched=True)
    sent = await actor.send("table.cmd", table="f1", command={"type": "roll"})
    reply = await actor.reply(sent)
    assert reply["ok"] and reply["data"]["seq"] == table.seq == 2
    update = await actor.push("table.update")
    assert update["last_seq"] == 2
    # one frame, the update first: the client has the new state when the reply resolves
    assert kinds(actor.frames[-1]) == ["table.update", "reply"]
    assert actor.frames[-1][1]["id"] == sent
    # the contract reads the frame as its two messages, the reply's result typed
    frame = server_frame_adapter.validate_python(actor.frames[-1])
    assert isinstance(frame, list) and [type(m) for m in frame] == [TableUpdatePush, OkReply]
    assert isinstance(frame[1], OkReply) and isinstance(frame[1].data, TableCmdResult)
    # the other seat's socket gets the same update as a frame of its own
    assert (await other.push("table.update"))["last_seq"] == 2
    assert kinds(other.frames[-1]) == ["table.update"]


async def test_a_socket_that_does_not_ask_gets_one_message_per_frame(
    gateway: RunningGateway,
) -> None:
    table, actor, _ = await seated(gateway, "f2", batched=False)
    reply = await actor.request("table.cmd", table="f2", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == table.seq == 2
    assert (await actor.push("table.update"))["last_seq"] == 2
    assert all(len(frame) == 1 for frame in actor.frames)
    assert sorted(kinds(actor.frames[-2]) + kinds(actor.frames[-1])) == ["reply", "table.update"]


async def test_an_update_that_came_first_waits_for_its_reply(gateway: RunningGateway) -> None:
    table, actor, other = await seated(gateway, "f3", batched=True)
    table.reply_first = False  # the update reaches the gateway before the reply
    reply = await actor.request("table.cmd", table="f3", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == 2
    assert (await actor.push("table.update"))["last_seq"] == 2
    assert kinds(actor.frames[-1]) == ["table.update", "reply"]
    assert (await other.push("table.update"))["last_seq"] == 2
    assert kinds(other.frames[-1]) == ["table.update"]


async def test_an_update_waits_for_a_slow_reply_no_longer_than_the_fold_wait(
    gateway: RunningGateway,
) -> None:
    table, actor, _ = await seated(gateway, "f7", batched=True)
    table.reply_first = False
    table.reply_delay = 4 * FOLD_WAIT  # past the wait (and the sweep that ends it)
    reply = await actor.request("table.cmd", table="f7", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == 2
    # the update went on its own once its wait was over, before the reply came
    assert kinds(actor.frames[-2]) == ["table.update"] and kinds(actor.frames[-1]) == ["reply"]
    assert actor.frames[-2][0]["last_seq"] == 2


async def test_an_update_from_before_the_command_goes_first_on_its_own(
    gateway: RunningGateway,
) -> None:
    table, actor, _ = await seated(gateway, "f8", batched=True)
    for reply_first in (True, False):
        table.reply_first = reply_first
        table.acts_before_command = 1  # the other seat acts just before this command
        reply = await actor.request("table.cmd", table="f8", command={"type": "roll"})
        seq = reply["data"]["seq"]
        assert (await actor.push("table.update"))["last_seq"] == seq - 1
        assert (await actor.push("table.update"))["last_seq"] == seq
        # the other action's update alone, then this command's update with its reply
        assert kinds(actor.frames[-2]) == ["table.update"]
        assert actor.frames[-2][0]["last_seq"] == seq - 1
        assert kinds(actor.frames[-1]) == ["table.update", "reply"]
        assert actor.frames[-1][0]["last_seq"] == seq


async def test_a_lost_update_does_not_keep_the_reply(gateway: RunningGateway) -> None:
    table, actor, _ = await seated(gateway, "f4", batched=True)
    table.drop_updates = 1  # core NATS lost the update: the feed resyncs from the stream
    reply = await actor.request("table.cmd", table="f4", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == 2
    assert kinds(actor.frames[-1]) == ["reply"]  # alone, once its wait was over
    missed = await actor.push("table.events")
    assert [e["seq"] for e in missed["events"]] == [2]
    assert (await actor.push("table.state"))["seq"] == 2
    # and the next command folds again
    reply = await actor.request("table.cmd", table="f4", command={"type": "roll"})
    assert reply["data"]["seq"] == 3
    assert kinds(actor.frames[-1]) == ["table.update", "reply"]


async def test_refusals_and_other_replies_are_never_held(gateway: RunningGateway) -> None:
    table, actor, _ = await seated(gateway, "f5", batched=True)
    refused = await actor.request("table.cmd", table="f5", command={"type": "roll", "seat": 1})
    assert refused["error"]["code"] == "seat/not_yours"
    assert kinds(actor.frames[-1]) == ["reply"]
    assert (await actor.request("ping"))["ok"]
    assert kinds(actor.frames[-1]) == ["reply"]
    assert table.seq == 1


async def test_a_command_at_a_table_not_watched_is_answered_at_once(
    gateway: RunningGateway,
) -> None:
    token, me = await gateway.sign_in()
    table = await FakeTable(gateway.nc, "f6", [me, "bot-1"]).start()
    table.reply_first = True
    actor = await gateway.client(token, batched=True)
    reply = await actor.request("table.cmd", table="f6", command={"type": "roll"})
    assert reply["ok"] and reply["data"]["seq"] == 2
    assert actor.frames == [actor.frames[0], [reply]]  # the hello's reply, then this one
