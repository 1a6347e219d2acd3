"""opolyx wire contract: subjects, envelopes with a contract version, the error shape."""

from opolyx_contracts.envelope import (
    CONTRACT_VERSION,
    ErrorReply,
    Message,
    OkReply,
    decode,
    encode,
    error_reply,
    parse_json_object,
)
from opolyx_contracts.errors import ContractError, ErrorBody

__all__ = [
    "CONTRACT_VERSION",
    "ContractError",
    "ErrorBody",
    "ErrorReply",
    "Message",
    "OkReply",
    "decode",
    "encode",
    "error_reply",
    "parse_json_object",
]
