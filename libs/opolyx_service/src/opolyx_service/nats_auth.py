"""How a service proves who it is to NATS: credentials, reply inbox and TLS from `NatsSettings`.

One function per client library, from the same settings: `connect_options` for nats-py
(`connect_nats`) and `broker_options` for FastStream (`create_broker`). The server side (who
may do what) is `opolyx_contracts.permissions`; docs/NATS_PERMISSIONS.md explains both.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import unquote, urlsplit

from faststream.nats.security import NatsCredentials, NatsNKey, NatsSecurity, NatsUserPassword

from opolyx_service.settings import NatsSettings

__all__ = [
    "CLIENT_AUTH_OPTIONS",
    "DEFAULT_INBOX_ROOT",
    "broker_options",
    "connect_options",
    "inbox_prefix",
    "nats_user",
    "redacted_servers",
    "tls_context",
]

DEFAULT_INBOX_ROOT = "_INBOX"
CLIENT_AUTH_OPTIONS = frozenset(
    {"inbox_prefix", "user", "password", "user_credentials", "nkeys_seed", "tls", "tls_hostname"}
)
"""The keys `connect_options` may return (FastStream takes them as `broker_options` instead)."""


def nats_user(settings: NatsSettings) -> str | None:
    """The user this service connects as: the setting, else the one in the first URL."""
    if settings.user:
        return settings.user
    for server in settings.servers:
        username = urlsplit(server if "://" in server else f"nats://{server}").username
        if username:
            return unquote(username)
    return None


def redacted_servers(settings: NatsSettings) -> list[str]:
    """The server URLs fit for a log line: a password in a URL is replaced by `***`."""
    shown = []
    for server in settings.servers:
        parts = urlsplit(server)
        if parts.password is not None:
            netloc = parts.netloc.rsplit("@", 1)[1]
            server = parts._replace(netloc=f"{parts.username}:***@{netloc}").geturl()
        shown.append(server)
    return shown


def inbox_prefix(settings: NatsSettings) -> str:
    """`_INBOX.<user>`: the server lets each role subscribe only to its own reply inbox."""
    if settings.inbox_prefix:
        return settings.inbox_prefix
    user = nats_user(settings)
    return f"{DEFAULT_INBOX_ROOT}.{user}" if user else DEFAULT_INBOX_ROOT


def _password(settings: NatsSettings) -> str | None:
    if settings.password is not None:
        return settings.password.get_secret_value()
    if settings.password_file is not None:
        try:
            return settings.password_file.read_text().strip()
        except OSError as exc:
            raise ValueError(f"cannot read the NATS password file: {exc}") from None
    return None


def tls_context(settings: NatsSettings) -> ssl.SSLContext | None:
    """A client TLS context when any tls_* setting is given (verifies the server)."""
    if not (settings.tls_ca_file or settings.tls_cert_file or settings.tls_key_file):
        return None
    context = ssl.create_default_context(
        cafile=str(settings.tls_ca_file) if settings.tls_ca_file else None
    )
    if settings.tls_cert_file is not None:
        context.load_cert_chain(
            str(settings.tls_cert_file),
            str(settings.tls_key_file) if settings.tls_key_file else None,
        )
    elif settings.tls_key_file is not None:
        raise ValueError("OPOLYX_NATS__TLS_KEY_FILE is set without OPOLYX_NATS__TLS_CERT_FILE")
    return context


def _check_user_password(settings: NatsSettings, password: str | None) -> None:
    if settings.user and password is None:
        raise ValueError(
            "OPOLYX_NATS__USER is set without OPOLYX_NATS__PASSWORD or OPOLYX_NATS__PASSWORD_FILE"
        )
    if password is not None and not settings.user:
        raise ValueError("a NATS password is set without OPOLYX_NATS__USER")


def connect_options(settings: NatsSettings) -> dict[str, Any]:
    """Keyword arguments for `nats.connect` (credentials, inbox prefix, TLS)."""
    options: dict[str, Any] = {"inbox_prefix": inbox_prefix(settings)}
    password = _password(settings)
    _check_user_password(settings, password)
    if settings.user and password is not None:
        options["user"] = settings.user
        options["password"] = password
    if settings.creds_file is not None:
        options["user_credentials"] = str(settings.creds_file)
    if settings.nkey_seed_file is not None:
        options["nkeys_seed"] = str(settings.nkey_seed_file)
    context = tls_context(settings)
    if context is not None:
        options["tls"] = context
        if settings.tls_hostname:
            options["tls_hostname"] = settings.tls_hostname
    return options


def broker_options(settings: NatsSettings) -> dict[str, Any]:
    """Keyword arguments for FastStream's `NatsBroker` (its `security=` object and inbox)."""
    password = _password(settings)
    _check_user_password(settings, password)
    context, hostname = tls_context(settings), settings.tls_hostname
    security: NatsSecurity | None
    if settings.user and password is not None:
        security = NatsUserPassword(
            settings.user, password, ssl_context=context, tls_hostname=hostname
        )
    elif settings.creds_file is not None:
        security = NatsCredentials(
            str(settings.creds_file), ssl_context=context, tls_hostname=hostname
        )
    elif settings.nkey_seed_file is not None:
        security = NatsNKey(settings.nkey_seed_file, ssl_context=context, tls_hostname=hostname)
    elif context is not None:
        security = NatsSecurity(ssl_context=context, tls_hostname=hostname)
    else:
        security = None
    options: dict[str, Any] = {"inbox_prefix": inbox_prefix(settings)}
    if security is not None:
        options["security"] = security
    return options
