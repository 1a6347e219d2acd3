"""The one error shape on the wire: {"code": "namespace/reason", "message": "..."}.

Codes are stable strings that travel to clients unchanged (rules errors keep the rules
library's codes). The message says what was wrong and what to do.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "BAD_REQUEST",
    "BUSY",
    "COMMAND_STALE",
    "CONTRACT_VERSION_UNSUPPORTED",
    "INTERNAL",
    "MALFORMED_JSON",
    "NOT_OWNER",
    "PLAYER_NOT_FOUND",
    "RATE_LIMITED",
    "REPLY_NOT_INBOX",
    "RETRY_LATER",
    "SEAT_NOT_YOURS",
    "TABLE_EXISTS",
    "TABLE_FINISHED",
    "TABLE_NOT_FOUND",
    "UNAVAILABLE",
    "ContractError",
    "ErrorBody",
]

MALFORMED_JSON = "request/malformed_json"
BAD_REQUEST = "request/invalid"
CONTRACT_VERSION_UNSUPPORTED = "request/unsupported_version"
TABLE_NOT_FOUND = "table/not_found"
TABLE_EXISTS = "table/exists"
TABLE_FINISHED = "table/finished"
NOT_OWNER = "table/not_owner"
"""This instance does not own the table's partition (moving between instances): retry."""
SEAT_NOT_YOURS = "seat/not_yours"
COMMAND_STALE = "command/stale_version"
UNAVAILABLE = "service/unavailable"
RATE_LIMITED = "request/rate_limited"
"""Too many requests from this client: the request was not processed; slow down."""
PLAYER_NOT_FOUND = "player/not_found"
BUSY = "service/busy"
"""The instance has as many commands in flight as it accepts: retry after a short backoff."""
INTERNAL = "internal/error"
REPLY_NOT_INBOX = "request/reply_not_inbox"
"""A request whose reply subject is outside ``_INBOX.``: dropped unanswered and counted
under this code (a reply there could reach another client's subscription)."""

RETRY_LATER = frozenset({BUSY, NOT_OWNER})
"""Refusals that mean the command did not run: the sender sends it again, with the same
command id, after a short backoff (the gateway for a player, the bot worker for a bot)."""


class ErrorBody(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    """Stable "namespace/reason" string; clients branch on it."""
    message: str
    """Human-readable: what was wrong and what to do."""


class ContractError(Exception):
    """A request that cannot be served; becomes an `ErrorBody` in the reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def to_body(self) -> ErrorBody:
        return ErrorBody(code=self.code, message=self.message)
