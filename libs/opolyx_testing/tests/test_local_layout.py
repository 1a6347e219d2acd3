"""`LocalLayout` finds a nats-server started the way `scripts/run_local.py` starts it (the
real binary, with the layout's configuration and ports folder) and connects as a role."""

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from opolyx_service.nats_server_config import write_nats_auth
from opolyx_testing.local_layout import LocalLayout


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[LocalLayout]:
    layout = LocalLayout(tmp_path)
    auth = write_nats_auth(layout.nats_auth)
    assert auth.config_path == layout.nats_config
    layout.nats_ports.mkdir()
    proc = subprocess.Popen(
        layout.nats_server_argv(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while not layout.ports_file(proc.pid).exists():
            assert proc.poll() is None, "nats-server exited"
            assert time.monotonic() < deadline, "nats-server wrote no ports file"
            time.sleep(0.02)
        yield layout
    finally:
        proc.terminate()
        proc.wait(10)


async def test_the_running_server_is_found_and_a_role_connects_with_its_password(
    layout: LocalLayout,
) -> None:
    running = layout.nats_server()
    assert layout.ports_file(running.pid).exists()
    assert running.url.startswith("nats://127.0.0.1:")
    nc = await nats.connect(layout.nats_url_for("gateway"))
    try:
        assert nc.is_connected
    finally:
        await nc.close()
