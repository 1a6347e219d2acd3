"""`LocalLayout` finds a nats-server started the way `scripts/run_local.py` starts it (the
real binary, with the layout's configuration and ports folder) and connects as a role."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from opolyx_service.nats_server_config import write_nats_auth
from opolyx_testing.local_layout import LocalLayout
from opolyx_testing.nats_server import ports_file, wait_for_ports_file


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[tuple[LocalLayout, str]]:
    """The layout, with the URL its nats-server wrote once it listened."""
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
        yield layout, wait_for_ports_file(proc, layout.nats_ports, 15)
    finally:
        proc.terminate()
        proc.wait(10)


async def test_the_running_server_is_found_and_a_role_connects_with_its_password(
    layout: tuple[LocalLayout, str],
) -> None:
    local, listening = layout
    running = local.nats_server()
    assert ports_file(local.nats_ports, running.pid).exists()
    assert running.url == listening
    assert running.url.startswith("nats://127.0.0.1:")
    nc = await nats.connect(local.nats_url_for("gateway"))
    try:
        assert nc.is_connected
    finally:
        await nc.close()
