"""Run a service as a real process (for kill -9 and restart tests).

    proc = ServiceProcess(["opolyx-table"], env={"OPOLYX_NATS__URL": url}, log_dir=tmp_path)
    proc.start(); await proc.wait_ready()
    proc.kill()        # SIGKILL: no shutdown hooks run

The child gets a free port for its health endpoint (`OPOLYX_HTTP__PORT`) and readiness is
polled on /readyz. Output goes to a log file whose tail is shown when it fails to start.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opolyx_testing.http import http_get, metric_value
from opolyx_testing.ports import free_port

__all__ = ["ServiceProcess", "free_port", "script_path"]


def script_path(name: str) -> str:
    """An entry-point script of this interpreter's environment (e.g. "opolyx-table")."""
    for directory in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        if (directory / name).exists():
            return str(directory / name)
    return name


class ServiceProcess:
    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        log_dir: Path,
        name: str = "service",
    ) -> None:
        self.argv = list(argv)
        self.name = name
        self.http_port = free_port()
        self.env = {
            **os.environ,
            "OPOLYX_HTTP__PORT": str(self.http_port),
            "OPOLYX_HTTP__HOST": "127.0.0.1",
            # Bots answer at once in tests (a test that wants the players' pace sets it).
            "OPOLYX_TABLE__BOT_PACE": "0",
            **env,
        }
        self.log_path = log_dir / f"{name}.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> ServiceProcess:
        log_file = self.log_path.open("ab")
        self._process = subprocess.Popen(
            self.argv, env=self.env, stdout=log_file, stderr=subprocess.STDOUT
        )
        log_file.close()
        return self

    async def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"{self.name} exited early:\n{self.log_tail()}")
            if await self._ready():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"{self.name} not ready within {timeout} s:\n{self.log_tail()}")

    async def _ready(self) -> bool:
        try:
            status, _ = await self.get("/readyz")
        except (OSError, TimeoutError):
            return False
        return status == 200

    async def get(self, path: str, timeout: float = 2.0) -> tuple[int, bytes]:
        """GET `path` on the health endpoint: (status, body). Raises OSError when closed."""
        return await http_get(self.http_port, path, timeout)

    async def readiness(self) -> dict[str, Any]:
        """The `/readyz` body: {"ready", "draining", "checks"}."""
        _, body = await self.get("/readyz")
        parsed: dict[str, Any] = json.loads(body)
        return parsed

    async def metric(self, name: str, labels: str = "") -> float | None:
        """One sample of `/metrics` (`labels` as written, e.g. 'outcome="failed"')."""
        _, body = await self.get("/metrics")
        return metric_value(body.decode(), name, labels)

    def send_signal(self, sig: signal.Signals) -> None:
        assert self._process is not None, "not started"
        self._process.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if still running after `timeout` seconds."""
        assert self._process is not None, "not started"
        try:
            return int(self._process.wait(timeout))
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to clean up."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait(10)

    def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait; returns the exit code (killed if it does not stop in time)."""
        assert self._process is not None, "not started"
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
        return int(self._process.returncode)

    def log_tail(self, chars: int = 6000) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]
