"""Free loopback ports for servers a test (or a local run) starts."""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port() -> int:
    """A TCP port nothing listens on right now (the OS picks it; tiny race, fine for tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
