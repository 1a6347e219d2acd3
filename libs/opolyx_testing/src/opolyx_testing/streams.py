"""Read what a JetStream stream holds for a subject, in order, as contract models."""

from __future__ import annotations

from typing import TypeVar

from nats.aio.client import Client
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError
from pydantic import BaseModel

__all__ = ["read_stored"]

M = TypeVar("M", bound=BaseModel)


async def read_stored(
    nc: Client, stream: str, subject: str, model: type[M], timeout: float = 5.0
) -> list[M]:
    """Every message stored so far on `subject` (wildcards allowed) in `stream`, oldest
    first, parsed as `model`. Reads up to the last message stored when called, through an
    ordered consumer (no durable state left behind)."""
    js = nc.jetstream()
    try:
        last = await js.get_last_msg(stream, subject)
    except NotFoundError:
        return []
    sub = await js.subscribe(
        subject, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL, stream=stream
    )
    found: list[M] = []
    try:
        while True:
            msg = await sub.next_msg(timeout=timeout)
            found.append(model.model_validate_json(msg.data))
            if msg.metadata.sequence.stream >= (last.seq or 0):
                return found
    finally:
        await sub.unsubscribe()
