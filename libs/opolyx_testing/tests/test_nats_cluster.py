"""The 3-node test cluster: every role's URL lists every node, a stream or bucket can have 3
replicas there (one server refuses more than 1), and with 3 a lost node loses nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import pytest
from nats.js.errors import APIError
from opolyx_service.connection import ensure_kv
from opolyx_service.nats_auth import connect_options
from opolyx_service.settings import NatsSettings
from opolyx_testing.nats_cluster import start_nats_cluster
from opolyx_testing.nats_server import NatsServer


async def test_a_bucket_with_three_replicas_outlives_a_lost_node(tmp_path: Path) -> None:
    with start_nats_cluster(tmp_path) as cluster:
        assert cluster.url_for("lobby").count("@127.0.0.1:") == 3
        lobby = await cluster.connect("lobby")
        try:
            rooms = await ensure_kv(lobby.jetstream(), "rooms", replicas=3)
            await rooms.put("r1", b"kept")
            info = await lobby.jetstream().stream_info("KV_rooms")
        finally:
            await lobby.close()
        assert info.cluster is not None and info.config.num_replicas == 3
        # Lose the node that leads the bucket; read from the two others.
        lost = int(str(info.cluster.leader).removeprefix("n"))
        cluster.stop_node(lost)
        survivors = [url for index, url in enumerate(cluster.plain_urls) if index != lost]
        settings = NatsSettings(url=",".join(cluster.auth.url_for("lobby", u) for u in survivors))
        lobby = await nats.connect(servers=settings.servers, **connect_options(settings))
        try:
            entry = None
            for _ in range(100):  # until the two elect a new leader (a few seconds)
                try:
                    rooms = await lobby.jetstream(timeout=1).key_value("rooms")
                    entry = await rooms.get("r1")
                    break
                except (nats.errors.Error, APIError):
                    await asyncio.sleep(0.1)
            assert entry is not None and entry.value == b"kept"
        finally:
            await lobby.close()


async def test_a_single_server_refuses_more_than_one_replica(nats_server: NatsServer) -> None:
    nc = await nats_server.connect()
    try:
        with pytest.raises(APIError, match="replicas > 1 not supported"):
            await ensure_kv(nc.jetstream(), "rooms", replicas=3)
    finally:
        await nc.close()
