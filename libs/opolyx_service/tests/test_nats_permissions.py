"""Each role against the real nats-server configured by `nats_server_config` (the one `make run`
and the test harness start): what the role may do works, everything another role may do and
this one may not is refused by the server (a permissions violation), and JetStream streams and
buckets are reachable only by the roles the table lists."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import StreamConfig
from nats.js.errors import NoStreamResponseError
from opolyx_contracts import subjects
from opolyx_contracts.permissions import ROLES, SERVICE_ROLES, Role
from opolyx_service import flush_in_order
from opolyx_testing.nats_server import NatsServer
from opolyx_testing.pytest_plugin import ConnectAs

_VIOLATION = re.compile(r'permissions violation for (publish|subscription) to "([^"]+)"', re.I)


def concrete(pattern: str) -> str:
    """A subject that `pattern` matches (`*` and `>` filled in)."""
    return ".".join("x1" if t == "*" else "x1.x2" if t == ">" else t for t in pattern.split("."))


def subjects_of_others(role: Role) -> set[str]:
    """Every subject some other role may publish or subscribe to (filled in), plus the ones an
    attacker would try first."""
    found = {
        concrete(pattern)
        for other in ROLES.values()
        if other is not role and other.name != "admin"
        for pattern in (*other.publish, *other.subscribe)
    }
    found |= {
        subjects.GAME_FINISHED,
        f"$KV.{subjects.TABLES_BUCKET}.3.t-1",
        f"$JS.API.STREAM.DELETE.{subjects.TABLE_EVENTS_STREAM}",
        f"$JS.API.STREAM.PURGE.{subjects.GAMES_STREAM}",
        "_INBOX.x1.x2",
        "$SYS.REQ.SERVER.PING",
    }
    return found


@dataclass
class Watched:
    """A connection of one role whose refusals (reported by the server) are collected."""

    nc: Client
    refused: list[tuple[str, str]] = field(default_factory=list)

    async def wait_refusals(self, expected: set[tuple[str, str]], timeout: float = 5.0) -> None:
        # nats-py reports the server's message lower-cased.
        expected = {(kind, subject.lower()) for kind, subject in expected}
        deadline = asyncio.get_running_loop().time() + timeout
        while not expected <= set(self.refused):
            if asyncio.get_running_loop().time() > deadline:
                missing = sorted(expected - set(self.refused))
                raise AssertionError(f"the server did not refuse: {missing[:10]}")
            await asyncio.sleep(0.02)


async def connect_watched(server: NatsServer, role: str) -> Watched:
    watched: Watched

    async def on_error(exc: Exception) -> None:
        match = _VIOLATION.search(str(exc))
        if match:
            watched.refused.append((match[1].lower(), match[2]))

    watched = Watched(await server.connect(role, error_cb=on_error))
    return watched


@pytest.fixture
async def admin(connect_as: ConnectAs) -> Client:
    return await connect_as()


class Seen:
    """Everything published on the server, as the admin sees it."""

    def __init__(self) -> None:
        self.subjects: list[str] = []

    async def collect(self, msg: Msg) -> None:
        self.subjects.append(msg.subject)

    async def wait_for(self, wanted: Iterable[str], timeout: float = 5.0) -> None:
        wanted = set(wanted)
        deadline = asyncio.get_running_loop().time() + timeout
        while not wanted <= set(self.subjects):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"never delivered: {sorted(wanted - set(self.subjects))}")
            await asyncio.sleep(0.02)


async def watch_everything(admin: Client) -> Seen:
    seen = Seen()
    await admin.subscribe(">", cb=seen.collect)
    await flush_in_order(admin)
    return seen


@pytest.mark.parametrize("role", [r.name for r in SERVICE_ROLES])
async def test_a_role_is_refused_everywhere_its_row_does_not_allow(
    role: str, nats_server: NatsServer, admin: Client
) -> None:
    me = ROLES[role]
    seen = await watch_everything(admin)
    watched = await connect_watched(nats_server, role)
    try:
        candidates = subjects_of_others(me)
        publish_denied = sorted(s for s in candidates if not me.may_publish(s))
        subscribe_denied = sorted(s for s in candidates if not me.may_subscribe(s))
        assert publish_denied and subscribe_denied
        for subject in publish_denied:
            await watched.nc.publish(subject, b"forged")
        for subject in subscribe_denied:
            await watched.nc.subscribe(subject)
        await flush_in_order(watched.nc)
        await watched.wait_refusals(
            {("publish", s) for s in publish_denied}
            | {("subscription", s) for s in subscribe_denied}
        )
        # Nothing forged reached anybody (the admin listens to everything).
        await flush_in_order(admin)
        assert not set(publish_denied) & set(seen.subjects)
        assert watched.nc.is_connected  # refused, not disconnected: the service keeps working
    finally:
        await watched.nc.close()


@pytest.mark.parametrize("role", [r.name for r in SERVICE_ROLES])
async def test_a_role_can_publish_and_subscribe_where_its_row_allows(
    role: str, nats_server: NatsServer, admin: Client
) -> None:
    me = ROLES[role]
    seen = await watch_everything(admin)
    watched = await connect_watched(nats_server, role)
    try:
        own_publish = [concrete(p) for g in me.grants for p in g.publish]
        own_subscribe = [concrete(p) for g in me.grants for p in g.subscribe]
        got: list[str] = []

        async def collect(msg: Msg) -> None:
            got.append(msg.subject)

        for subject in own_subscribe:
            await watched.nc.subscribe(subject, cb=collect)
        await flush_in_order(watched.nc)
        for subject in own_publish:
            await watched.nc.publish(subject, b"{}")
        for subject in own_subscribe:
            await admin.publish(subject, b"{}")
        await flush_in_order(watched.nc)
        await flush_in_order(admin)
        await seen.wait_for(own_publish)
        deadline = asyncio.get_running_loop().time() + 5
        while not set(own_subscribe) <= set(got):
            assert asyncio.get_running_loop().time() < deadline, set(own_subscribe) - set(got)
            await asyncio.sleep(0.02)
        assert watched.refused == []
    finally:
        await watched.nc.close()


async def test_requests_and_replies_work_between_roles_through_their_own_inboxes(
    nats_server: NatsServer,
) -> None:
    table = await nats_server.connect("table")
    gateway = await connect_watched(nats_server, "gateway")
    bots = await connect_watched(nats_server, "bots")
    try:

        async def answer(msg: Msg) -> None:
            await msg.respond(b'{"ok": true}')

        await table.subscribe(subjects.table_partition_subjects(3), cb=answer)
        await flush_in_order(table)
        reply = await gateway.nc.request("opolyx.table.3.t-1.cmd", b"{}", timeout=5)
        assert reply.data == b'{"ok": true}'
        assert reply.subject.startswith("_INBOX.gateway.")
        # Another role cannot listen in on the gateway's replies.
        await bots.nc.subscribe("_INBOX.gateway.>")
        await flush_in_order(bots.nc)
        await bots.wait_refusals({("subscription", "_INBOX.gateway.>")})
    finally:
        for nc in (table, gateway.nc, bots.nc):
            await nc.close()


async def test_jetstream_streams_and_buckets_obey_the_table(nats_server: NatsServer) -> None:
    table = await nats_server.connect("table")
    gateway = await connect_watched(nats_server, "gateway")
    lobby = await connect_watched(nats_server, "lobby")
    bots = await connect_watched(nats_server, "bots")
    events = subjects.table_events("t-1")
    try:
        js = table.jetstream(timeout=5)
        await js.add_stream(
            StreamConfig(
                name=subjects.TABLE_EVENTS_STREAM, subjects=[subjects.TABLE_EVENTS_SUBJECTS]
            )
        )
        tables = await js.create_key_value(bucket=subjects.TABLES_BUCKET)
        assert (await js.publish(events, b'{"real": 1}')).seq == 1
        await tables.put("3.t-1", b"snapshot")

        # The gateway follows the events (an ordered consumer) but cannot write them.
        follow = await gateway.nc.jetstream().subscribe(events, ordered_consumer=True)
        assert (await follow.next_msg(timeout=5)).data == b'{"real": 1}'
        await follow.unsubscribe()
        with pytest.raises((NatsTimeoutError, NoRespondersError, NoStreamResponseError)):
            await gateway.nc.jetstream(timeout=1).publish(events, b'{"forged": 1}')
        await gateway.wait_refusals({("publish", events)})

        # Nobody but the table writes its buckets or reconfigures and deletes its streams.
        await lobby.nc.publish("$KV.tables.3.t-1", b"forged")
        await gateway.nc.publish("$JS.API.STREAM.DELETE.TABLE_EVENTS", b"")
        await flush_in_order(lobby.nc)
        await flush_in_order(gateway.nc)
        await lobby.wait_refusals({("publish", "$KV.tables.3.t-1")})
        await gateway.wait_refusals({("publish", "$JS.API.STREAM.DELETE.TABLE_EVENTS")})

        # Bots may not even read the events.
        with pytest.raises((NatsTimeoutError, NoRespondersError)):
            await bots.nc.jetstream(timeout=1).subscribe(
                events, stream=subjects.TABLE_EVENTS_STREAM, ordered_consumer=True
            )
        assert any(kind == "publish" and "consumer" in s for kind, s in bots.refused)

        # What the table wrote is all there is.
        info = await js.stream_info(subjects.TABLE_EVENTS_STREAM)
        assert info.state.messages == 1
        assert (await tables.get("3.t-1")).value == b"snapshot"
    finally:
        for nc in (table, gateway.nc, lobby.nc, bots.nc):
            await nc.close()


async def refused_connect(url: str) -> Exception:
    """Connect and return the error; the half-open client is closed (no leaked socket)."""
    client = Client()
    try:
        await client.connect(url, allow_reconnect=False, max_reconnect_attempts=0)
    except Exception as exc:
        return exc
    finally:
        await client.close()
    raise AssertionError(f"connected to {url} without valid credentials")


async def test_a_connection_without_valid_credentials_is_refused(nats_server: NatsServer) -> None:
    assert "authorization" in str(await refused_connect(nats_server.plain_url)).lower()
    wrong = nats_server.plain_url.replace("nats://", "nats://table:not-the-password@")
    assert "authorization" in str(await refused_connect(wrong)).lower()
