#!/usr/bin/env python3
"""Run the whole of opolyx on this machine: a local nats-server with JetStream, the table,
lobby and bot services (and any other service that is installed), then the gateway.

    .venv/bin/python scripts/run_local.py [--port 8000] [--data-dir .run] [--bots 2]

Prints the URL to open once everything is ready; Ctrl-C stops everything cleanly.
State (JetStream store, logs, the session signing key) lives under the data directory,
so a restart keeps games and signed-in players.

NATS runs with authorization, as in production: the first start writes the server
configuration and one password per role under `<data-dir>/nats-auth/`
(docs/NATS_PERMISSIONS.md), and every service connects as its own role. To look around
with the `nats` CLI or a script, use the `admin` user and `nats-auth/admin.password`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from opolyx_service.nats_server_config import write_nats_auth
from opolyx_testing.local_layout import LocalLayout
from opolyx_testing.nats_server import wait_for_ports_file
from opolyx_testing.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(sysconfig.get_path("scripts"))
READY_SECONDS = 120.0
"""How long a service may take to answer its readiness probe after it was started."""

# Backend services in start order: (name, entry point, extra arguments); each connects to
# NATS as the role of its name. Missing ones are skipped, so the launcher works while
# services are still being written.
SERVICES: list[tuple[str, str, list[str]]] = [
    ("table", "opolyx-table", []),
    ("lobby", "opolyx-lobby", []),
    ("progression", "opolyx-progression", []),
    ("chat", "opolyx-chat", []),
]


def log(text: str) -> None:
    print(f"[opolyx] {text}", flush=True)


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def kept_secret(path: Path) -> str:
    """A random secret kept in `path` (0600): made on the first run, the same on the next
    (the gateway's signing key keeps players signed in; the operator tokens stay valid)."""
    if not path.exists():
        path.write_text(secrets.token_urlsafe(32))
        path.chmod(0o600)
    return path.read_text().strip()


def http_ok(port: int, path: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


class Launcher:
    def __init__(self, data_dir: Path, port: int, bots: int) -> None:
        self.data_dir = data_dir
        self.layout = LocalLayout(data_dir)
        self.port = port
        self.bots = bots
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []

    # -- processes ------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        self.layout.logs.mkdir(parents=True, exist_ok=True)
        with self.layout.log_file(name).open("ab") as out:
            proc = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the launcher only; it stops them in order
            )
        self.children.append((name, proc))
        return proc

    def wait_ready(self, name: str, proc: subprocess.Popen[bytes], port: int, path: str) -> None:
        # Generous: on 2 loaded cores a service's imports alone were seen to take 36 s; a
        # service that really fails to start exits, which is reported at once below.
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = self.layout.log_file(name).read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with code {proc.returncode}:\n{tail}")
            if http_ok(port, path):
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"{name} was not ready within {READY_SECONDS:g} s; see {self.layout.log_file(name)}"
        )

    def stop(self) -> None:
        """Stop in reverse start order: the gateway first, nats-server last."""
        for name, proc in reversed(self.children):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                log(f"{name} did not stop in time; killing it")
                proc.kill()
                proc.wait(5)
            if time.monotonic() - started > 2:
                log(f"{name} took {time.monotonic() - started:.1f} s to stop")
        self.children.clear()

    # -- the system -------------------------------------------------------------
    def start_nats(self) -> str:
        """nats-server with the configuration `write_nats_auth` wrote under the layout."""
        self.layout.nats_store.mkdir(parents=True, exist_ok=True)
        self.layout.nats_ports.mkdir(parents=True, exist_ok=True)
        for stale in self.layout.nats_ports.glob("*.ports"):
            stale.unlink()
        proc = self.spawn("nats-server", self.layout.nats_server_argv(), {})
        try:
            return wait_for_ports_file(proc, self.layout.nats_ports, 15)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; see {self.layout.log_file('nats-server')}") from None

    def progression_env(self) -> dict[str, str]:
        """Progression keeps its SQLite database under the data directory; its operator
        endpoint (alt-farming flags) takes the token written here on the first run."""
        return {
            "OPOLYX_PROGRESSION__DATA_DIR": str(self.layout.progression_data),
            "OPOLYX_PROGRESSION__OPERATOR__TOKEN": kept_secret(
                self.layout.operator_token("progression")
            ),
        }

    def chat_env(self) -> dict[str, str]:
        """Chat's reports endpoint for operators takes the token written here on the first run,
        on a port of this run written beside it (`chat-operator-port`)."""
        token = self.layout.operator_token("chat")
        secret = kept_secret(token)
        port = free_port()
        self.layout.operator_port("chat").write_text(str(port))
        log(f"chat reports: http://127.0.0.1:{port}/operator/reports (token in {token})")
        return {
            "OPOLYX_CHAT__OPERATOR__TOKEN": secret,
            "OPOLYX_CHAT__OPERATOR__PORT": str(port),
        }

    def run(self) -> str:
        auth = write_nats_auth(self.layout.nats_auth)
        nats_url = self.start_nats()
        log(f"nats-server with JetStream at {nats_url} (data in {self.layout.nats_store})")
        log(f"NATS users and passwords (one per role) in {auth.directory}")
        common = {"OPOLYX_NATS__URL": nats_url, "OPOLYX_LOG__FORMAT": "console"}
        for name, entry, args in SERVICES:
            exe = SCRIPTS / entry
            if not exe.exists():
                log(f"{name}: not installed, skipped")
                continue
            health = free_port()
            env = {**common, **auth.env_for(name), "OPOLYX_HTTP__PORT": str(health)}
            if name == "progression":
                env.update(self.progression_env())
            if name == "chat":
                env.update(self.chat_env())
            proc = self.spawn(name, [str(exe), *args], env)
            self.wait_ready(name, proc, health, "/readyz")
            log(f"{name} ready")
        bots_exe = SCRIPTS / "opolyx-bots"
        if bots_exe.exists():
            for i in range(self.bots):
                health = free_port()
                env = {**common, **auth.env_for("bots"), "OPOLYX_HTTP__PORT": str(health)}
                proc = self.spawn(f"bots-{i + 1}", [str(bots_exe)], env)
                self.wait_ready(f"bots-{i + 1}", proc, health, "/readyz")
            log(f"{self.bots} bot worker(s) ready")
        else:
            log("bots: not installed, skipped")
        port = self.port if self.port and port_is_free(self.port) else free_port()
        if self.port and port != self.port:
            log(f"port {self.port} is busy; using {port}")
        signing_keys = {"local": kept_secret(self.layout.signing_key)}
        gateway = self.spawn(
            "gateway",
            [str(SCRIPTS / "opolyx-gateway")],
            {
                **common,
                **auth.env_for("gateway"),
                "OPOLYX_HTTP__PORT": str(port),
                "OPOLYX_GATEWAY__SIGNING_KEYS": json.dumps(signing_keys),
            },
        )
        self.wait_ready("gateway", gateway, port, "/readyz")
        return f"http://127.0.0.1:{port}/"

    def watch(self) -> None:
        """Block until Ctrl-C, or until a process dies (then say which and stop)."""
        while True:
            for name, proc in self.children:
                if proc.poll() is not None:
                    where = self.layout.log_file(name)
                    log(f"{name} exited with code {proc.returncode}; see {where}")
                    return
            time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT", "8000")),
        help="gateway port (0: any free port; a busy port is replaced)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=ROOT / ".run",
        help="JetStream store, logs and the signing key",
    )
    parser.add_argument("--bots", type=int, default=2, help="bot worker processes")
    options = parser.parse_args()
    launcher = Launcher(options.data_dir.resolve(), options.port, options.bots)

    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)  # also when started with SIGINT ignored
    try:
        url = launcher.run()
        log(f"opolyx is running: open {url}  (Ctrl-C to stop; logs in {launcher.layout.logs})")
        launcher.watch()
        return 1
    except KeyboardInterrupt:
        log("stopping…")
        return 0
    except RuntimeError as exc:
        log(f"could not start: {exc}")
        return 1
    finally:
        # A second Ctrl-C (or the SIGINT a wrapper such as `uv run` forwards) must not
        # cut the clean-up short and leave services running.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        launcher.stop()
        log("stopped")


if __name__ == "__main__":
    sys.exit(main())
