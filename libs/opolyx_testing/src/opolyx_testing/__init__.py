"""Test harness: real nats-server (JetStream) and PostgreSQL, service processes, and the
small helpers every test needs once (free port, HTTP probe, stored-stream reader)."""

from opolyx_testing.http import http_get, metric_value
from opolyx_testing.nats_server import NatsServer, start_nats_server
from opolyx_testing.ports import free_port
from opolyx_testing.postgres import PostgresServer, start_postgres
from opolyx_testing.process import ServiceProcess, script_path
from opolyx_testing.streams import read_stored

__all__ = [
    "NatsServer",
    "PostgresServer",
    "ServiceProcess",
    "free_port",
    "http_get",
    "metric_value",
    "read_stored",
    "script_path",
    "start_nats_server",
    "start_postgres",
]
