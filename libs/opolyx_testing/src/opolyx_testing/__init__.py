"""Test harness: real nats-server (JetStream) and PostgreSQL, service processes."""

from opolyx_testing.nats_server import NatsServer, start_nats_server
from opolyx_testing.postgres import PostgresServer, start_postgres
from opolyx_testing.process import ServiceProcess, free_port, script_path

__all__ = [
    "NatsServer",
    "PostgresServer",
    "ServiceProcess",
    "free_port",
    "script_path",
    "start_nats_server",
    "start_postgres",
]
