"""Replies go to inboxes only: a responder never publishes to a reply subject outside `_INBOX.`.

A requester picks the reply subject. Under NATS authorization a responder publishes its
reply with its *own* rights (the server allows responses to any reply subject it was sent),
so a request whose reply subject is, say, `opolyx.game.finished` would make the responder
forge an event there. Every requester of opolyx replies to `_INBOX.<role>.` (see
`nats_auth.inbox_prefix`), so anything else is refused:

- FastStream handlers built through the skeleton (`create_broker`) get
  `inbox_replies_only`: such a request is dropped unhandled, logged (`reply_refused`) and
  counted in `opolyx_handler_errors_total{code="request/reply_not_inbox"}`;
- a plain nats-py responder asks `safe_reply_subject(msg)` and answers only when it is not
  None (it logs the refusal; the caller counts it, e.g. with `runtime.metrics.handled`).
"""

from __future__ import annotations

from typing import Any, Protocol

from faststream import BaseMiddleware
from faststream.exceptions import SkipMessage
from opolyx_contracts.errors import REPLY_NOT_INBOX
from prometheus_client import CollectorRegistry

from opolyx_service.logs import get_logger
from opolyx_service.metrics import handler_errors
from opolyx_service.nats_auth import DEFAULT_INBOX_ROOT

__all__ = [
    "REPLY_PREFIX",
    "inbox_replies_only",
    "is_inbox",
    "safe_reply_subject",
]

REPLY_PREFIX = f"{DEFAULT_INBOX_ROOT}."

log = get_logger("opolyx_service.replies")


class _HasReply(Protocol):
    subject: str
    reply: str


def is_inbox(reply: str) -> bool:
    """True for a reply subject a responder may publish to (`_INBOX.` and something)."""
    return reply.startswith(REPLY_PREFIX) and len(reply) > len(REPLY_PREFIX)


def safe_reply_subject(msg: _HasReply) -> str | None:
    """The reply subject of a nats-py message when it is an inbox, else None (logged when
    a reply subject was given but refused; a message without one needs no answer)."""
    if is_inbox(msg.reply):
        return msg.reply
    if msg.reply:
        _log_refusal(msg.subject, msg.reply)
    return None


def _log_refusal(subject: str, reply: str) -> None:
    # The subject is attacker-chosen: bounded in the log line.
    log.warning("reply_refused", code=REPLY_NOT_INBOX, subject=subject, reply_to=reply[:128])


def inbox_replies_only(registry: CollectorRegistry | None = None) -> type[BaseMiddleware]:
    """A FastStream middleware that drops, before any handler runs, a message whose reply
    subject is not an inbox (logged, counted in `opolyx_handler_errors_total{code}`).
    Dropped by `SkipMessage`, which FastStream neither answers nor logs as an error: an
    exception here would become an error reply, published to the very subject refused."""
    errors = handler_errors(registry) if registry is not None else None

    class InboxRepliesOnly(BaseMiddleware):
        async def consume_scope(self, call_next: Any, msg: Any) -> Any:
            reply = msg.reply_to
            if reply and not is_inbox(reply):
                _log_refusal(getattr(self.msg, "subject", "?"), reply)
                if errors is not None:
                    errors.labels(REPLY_NOT_INBOX).inc()
                raise SkipMessage
            return await call_next(msg)

    return InboxRepliesOnly
