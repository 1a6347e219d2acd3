from pathlib import Path

import nats
import pytest
from nats.js.api import StreamConfig
from opolyx_contracts.subjects import GAME_FINISHED
from opolyx_service import flush_in_order
from opolyx_testing import NatsServer, start_nats_server
from opolyx_testing.pytest_plugin import ConnectAs


async def test_nats_url_fixture_gives_a_server_with_jetstream(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name="PROBE", subjects=["probe.>"]))
        ack = await js.publish("probe.one", b"hello")
        assert ack.seq == 1
        message = await js.get_msg("PROBE", 1)
        assert message.data == b"hello"
    finally:
        await nc.close()


async def test_local_server_keeps_streams_across_a_restart(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    if not nats_server.is_local_process:
        pytest.skip("restart is a local-binary feature")
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="KEEP", subjects=["keep.>"]))
    await js.publish("keep.a", b"1")
    await nc.close()

    nats_server.restart()

    nc = await nats.connect(nats_server.url)
    try:
        info = await nc.jetstream().stream_info("KEEP")
        assert info.state.messages == 1
    finally:
        await nc.close()


def test_two_servers_get_different_ports(tmp_path: Path) -> None:
    with (
        start_nats_server(tmp_path / "a", prefer_docker=False) as first,
        start_nats_server(tmp_path / "b", prefer_docker=False) as second,
    ):
        assert first.url != second.url
        assert first.plain_url.startswith("nats://127.0.0.1:")


async def test_connect_as_connects_with_the_roles_rights(
    connect_as: ConnectAs, nats_server: NatsServer
) -> None:
    gateway, admin = await connect_as("gateway"), await connect_as()
    for nc in (gateway, admin):
        await nc.publish(GAME_FINISHED, b"{}")  # the table's subject: not the gateway's
        await flush_in_order(nc)
    refused = [(user, subject) for user, kind, subject in nats_server.permission_violations()]
    assert refused == [("gateway", GAME_FINISHED)]


async def test_a_denied_publish_is_dropped_on_a_connection_already_open_until_lifted(
    connect_as: ConnectAs, nats_server: NatsServer
) -> None:
    table, admin = await connect_as("table"), await connect_as()
    updates = await admin.subscribe("opolyx.table.*.update")
    await flush_in_order(admin)

    async def publish(body: bytes) -> None:
        # In order: `Client.flush` may send its PING ahead of the PUB (or of the SUB above),
        # and its PONG then proves nothing about either.
        await table.publish("opolyx.table.t1.update", body)
        await flush_in_order(table)

    await publish(b"before")
    nats_server.deny_publish("table", ["opolyx.table.*.update"])
    await publish(b"denied")
    nats_server.deny_publish("table", [])
    await publish(b"after")
    # One connection's messages arrive in the order they were sent: "after" straight after
    # "before" means "denied" was dropped.
    received = [(await updates.next_msg(timeout=10)).data for _ in range(2)]
    assert received == [b"before", b"after"]
    violations = nats_server.permission_violations()
    assert violations == [("table", "Publish", "opolyx.table.t1.update")]
