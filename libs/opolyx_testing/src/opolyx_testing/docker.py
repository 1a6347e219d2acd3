"""Is a Docker engine reachable? Asked once per process, answered within ~2 s."""

from __future__ import annotations

import functools
import gc
import os
import warnings
from pathlib import Path

__all__ = ["docker_available"]


@functools.cache
def docker_available() -> bool:
    if os.environ.get("OPOLYX_TEST_NO_DOCKER"):
        return False
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    # docker-py leaves its socket to the garbage collector when the ping fails; collect it
    # here with the warning silenced, or pytest's "warnings are errors" fails a random test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            import docker  # type: ignore[import-untyped,unused-ignore]

            client = docker.from_env(timeout=2)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:
            return False
        finally:
            gc.collect()
