"""One coded error, one wire shape: what a service raises and what its caller receives.

The base every service raises is `opolyx_contracts.errors.ContractError` (code + message;
the lobby's `LobbyError` and the gateway's errors derive from it). It lives in the contract
because the contract's own `decode` raises it and every service already depends on it.

Errors from libraries that must not depend on the contract (the rules library's
`RulesError`, which stays dependency-free) are *mapped*, not subclassed: anything with a
string `code` and `message` keeps its code on the wire. Everything else is a bug: it is
logged with its traceback and the caller gets `internal/error` without the details.

    try:
        ...
    except Exception as exc:
        reply = error_reply_for(exc, log)      # ErrorReply, ready to encode
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from opolyx_contracts.envelope import ErrorReply
from opolyx_contracts.errors import BAD_REQUEST, INTERNAL, ContractError, ErrorBody
from pydantic import ValidationError

__all__ = ["CodedException", "ContractError", "error_body", "error_reply_for"]

INTERNAL_MESSAGE = "the service failed on this request; try again"


@runtime_checkable
class CodedException(Protocol):
    """What a coded error looks like to the mapping (ContractError, RulesError, ...)."""

    code: str
    message: str


def error_body(exc: BaseException, log: Any = None) -> ErrorBody:
    """The wire error for `exc`. Uncoded exceptions are logged (when `log` is given)."""
    if isinstance(exc, ContractError):
        return exc.to_body()
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, str) and isinstance(message, str) and "/" in code:
        return ErrorBody(code=code, message=message)
    if isinstance(exc, ValidationError):
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
        )
        return ErrorBody(code=BAD_REQUEST, message=f"invalid message: {details}")
    if log is not None:
        log.error("unexpected_error", error=repr(exc), exc_info=exc)
    return ErrorBody(code=INTERNAL, message=INTERNAL_MESSAGE)


def error_reply_for(exc: BaseException, log: Any = None) -> ErrorReply:
    """`{"v": 1, "ok": false, "error": {...}}` for `exc` (see `error_body`)."""
    return ErrorReply(error=error_body(exc, log))
