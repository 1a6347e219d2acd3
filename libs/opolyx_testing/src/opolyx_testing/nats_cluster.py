"""A real 3-node nats-server cluster with JetStream on loopback, for tests of what only a
cluster shows: streams and buckets created with several replicas (one server accepts 1 only).

    with start_nats_cluster(tmp_path) as cluster:
        nc = await cluster.connect()                        # admin, every subject allowed
        env = {"OPOLYX_NATS__URL": cluster.url_for("lobby")}  # a service as its role

The nodes run the same authorization as the single test server (`write_nats_auth`: one
user per role), each with its own client port, route port and JetStream store. `url` lists
every node, as a service in a cluster is configured. The context returns once JetStream can
place a stream on every node, so a stream with as many replicas can be created at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from nats.js.api import StorageType
from opolyx_service.nats_auth import connect_options
from opolyx_service.nats_server_config import NatsAuthSetup, write_nats_auth
from opolyx_service.settings import NatsSettings

from opolyx_testing.nats_server import ADMIN_ROLE, nats_server_binary
from opolyx_testing.ports import free_port

__all__ = ["NatsCluster", "start_nats_cluster"]

CLUSTER_NAME = "opolyx-test"
PLACEMENT_PROBE = "CLUSTER_READY_PROBE"
"""A stream made with a replica on every node and deleted again before the cluster is used."""


@dataclass
class NatsCluster:
    plain_urls: list[str]
    """Each node's client URL, without credentials."""
    auth: NatsAuthSetup
    _processes: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)
    _log_paths: list[Path] = field(default_factory=list, repr=False)

    @property
    def plain_url(self) -> str:
        """Every node's URL without credentials, comma-separated."""
        return ",".join(self.plain_urls)

    @property
    def url(self) -> str:
        """The admin's URLs (every node, comma-separated)."""
        return self.url_for(ADMIN_ROLE)

    def url_for(self, role: str) -> str:
        """Every node's URL with `role`'s credentials, comma-separated (`OPOLYX_NATS__URL`)."""
        return ",".join(self.auth.url_for(role, url) for url in self.plain_urls)

    def settings_for(self, role: str) -> NatsSettings:
        return NatsSettings(url=self.url_for(role))

    async def connect(self, role: str = ADMIN_ROLE, **options: Any) -> Client:
        settings = self.settings_for(role)
        return await nats.connect(
            servers=settings.servers, **{**connect_options(settings), **options}
        )

    def log_tail(self, chars: int = 2000) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-chars:]}"
            for path in self._log_paths
            if path.exists()
        )

    def stop_node(self, index: int) -> None:
        """Stop one node (a lost server); the others go on."""
        process = self._processes[index]
        process.terminate()
        process.wait(10)

    def stop(self) -> None:
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        self._processes.clear()


def _node_config(
    auth: NatsAuthSetup, name: str, store: Path, route_ports: list[int], own: int
) -> str:
    config: dict[str, Any] = json.loads(auth.config_path.read_text())
    config["server_name"] = name
    config["jetstream"] = {"store_dir": str(store)}
    config["cluster"] = {
        "name": CLUSTER_NAME,
        "listen": f"127.0.0.1:{own}",
        "routes": [f"nats-route://127.0.0.1:{port}" for port in route_ports if port != own],
    }
    return json.dumps(config, indent=2)


async def _quiet(exc: Exception) -> None:
    """A refused connection while the nodes start is expected: not logged."""


async def _wait_for_jetstream(cluster: NatsCluster, nodes: int, deadline: float) -> None:
    """Until a stream with `nodes` replicas can be placed: the meta group has a leader and
    knows every node. A meta leader alone was not enough: a bucket with 3 replicas created
    right after one was elected got "no suitable peers for placement" (once, in a CI run
    beside another test suite), as the leader had not heard of every peer yet."""
    last: Exception | None = None
    while time.monotonic() < deadline:
        settings = cluster.settings_for(ADMIN_ROLE)
        # A client of our own, closed after a refusal: nats.connect() would leave the
        # refused socket open (its finalisation warning would land in a later test).
        nc = Client()
        try:
            await nc.connect(
                servers=settings.servers,
                **connect_options(settings),
                allow_reconnect=False,
                connect_timeout=1,
                error_cb=_quiet,
                max_reconnect_attempts=0,
            )
        except Exception as exc:  # no node listening yet
            await nc.close()
            last = exc
            await asyncio.sleep(0.05)
            continue
        try:
            js = nc.jetstream(timeout=2)
            await js.add_stream(
                name=PLACEMENT_PROBE,
                subjects=[f"{PLACEMENT_PROBE}.>"],
                num_replicas=nodes,
                storage=StorageType.MEMORY,
            )
            await js.delete_stream(PLACEMENT_PROBE)
            return
        except Exception as exc:  # no meta leader yet, or it does not know every peer yet
            last = exc
            await asyncio.sleep(0.1)
        finally:
            await nc.close()
    raise RuntimeError(f"the cluster's JetStream did not come up: {last!r}\n{cluster.log_tail()}")


@contextlib.contextmanager
def start_nats_cluster(
    directory: Path, nodes: int = 3, timeout: float = 30.0
) -> Iterator[NatsCluster]:
    """`nodes` nats-servers routed to each other, stopped on exit."""
    auth = write_nats_auth(directory / "auth")
    client_ports = [free_port() for _ in range(nodes)]
    route_ports = [free_port() for _ in range(nodes)]
    cluster = NatsCluster([f"nats://127.0.0.1:{port}" for port in client_ports], auth)
    try:
        for index, (client_port, route_port) in enumerate(
            zip(client_ports, route_ports, strict=True)
        ):
            node = directory / f"node{index}"
            node.mkdir(parents=True, exist_ok=True)
            config = node / "nats-server.conf"
            config.write_text(
                _node_config(auth, f"n{index}", node / "jetstream", route_ports, route_port)
            )
            log_path = node / "nats-server.log"
            with log_path.open("ab") as log_file:
                cluster._processes.append(
                    subprocess.Popen(
                        [
                            str(nats_server_binary()),
                            "-c",
                            str(config),
                            "-a",
                            "127.0.0.1",
                            "-p",
                            str(client_port),
                        ],
                        stdout=log_file,
                        stderr=subprocess.STDOUT,
                    )
                )
            cluster._log_paths.append(log_path)
        # In a thread of its own: the caller may be running an event loop already.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(
                asyncio.run, _wait_for_jetstream(cluster, nodes, time.monotonic() + timeout)
            ).result()
        yield cluster
    finally:
        cluster.stop()
