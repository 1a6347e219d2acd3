"""Message envelopes: every body is a JSON object with a contract version `v`.

`Message` is the base of every request, reply and event. Replies are either
`{"v": 1, "ok": true, ...}` or `{"v": 1, "ok": false, "error": {"code", "message"}}`.
Receivers tolerate unknown fields (older readers of newer writers within one major
version) and refuse a major version they do not know.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from opolyx_contracts.errors import (
    BAD_REQUEST,
    CONTRACT_VERSION_UNSUPPORTED,
    MALFORMED_JSON,
    ContractError,
    ErrorBody,
)

__all__ = [
    "CONTRACT_VERSION",
    "ErrorReply",
    "Message",
    "OkReply",
    "decode",
    "encode",
    "error_reply",
    "parse_json_object",
]

CONTRACT_VERSION = 1
"""Bumped only for a change an existing reader cannot understand."""


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    v: int = CONTRACT_VERSION
    """Contract version of this message."""

    @field_validator("v")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v != CONTRACT_VERSION:
            raise ValueError(f"contract version {v} is not supported (this side speaks v1)")
        return v


class OkReply(Message):
    ok: Literal[True] = True


class ErrorReply(Message):
    ok: Literal[False] = False
    error: ErrorBody


def error_reply(code: str, message: str) -> ErrorReply:
    return ErrorReply(error=ErrorBody(code=code, message=message))


M = TypeVar("M", bound=BaseModel)


def encode(message: BaseModel) -> bytes:
    return message.model_dump_json().encode()


def parse_json_object(data: bytes | str) -> dict[str, Any]:
    """Parse a body that must be a JSON object; raise `ContractError` with a clear code."""
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ContractError(MALFORMED_JSON, f"the message body is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ContractError(MALFORMED_JSON, "the message body must be a JSON object")
    return parsed


def decode(model: type[M], data: bytes | str | dict[str, Any]) -> M:
    """Validate a body against `model`; any problem is a `ContractError`, never a crash."""
    try:
        if isinstance(data, dict):
            return model.model_validate(data)
        # Parsing and validating in one pass (pydantic-core) is the fast path for requests.
        return model.model_validate_json(data)
    except ValidationError as exc:
        errors = exc.errors()
        if any(err["type"] == "json_invalid" for err in errors):
            raise ContractError(
                MALFORMED_JSON, f"the message body is not valid JSON: {errors[0]['msg']}"
            ) from None
        if any(err["loc"] == () for err in errors):
            raise ContractError(MALFORMED_JSON, "the message body must be a JSON object") from None
        version_errors = [err for err in errors if err["loc"] == ("v",)]
        if version_errors:
            raise ContractError(
                CONTRACT_VERSION_UNSUPPORTED,
                f"unsupported contract version {version_errors[0].get('input')!r} (this side"
                f" speaks v{CONTRACT_VERSION})",
            ) from None
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in errors[:5]
        )
        raise ContractError(BAD_REQUEST, f"invalid {model.__name__}: {details}") from None
