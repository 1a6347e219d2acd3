"""Trade previews: how the rules judge an offer the player is still drafting.

Answered straight from the table in memory, without queueing on it: nothing is applied,
stored or published, and the state read is the one the last stored batch left (states are
immutable values). The proposer's seat is looked up from the player id the gateway vouches
for; the verdict is the rules' own guard (`opolyx_rules.preview_offer`), so no client
computes the fairness rule itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import opolyx_rules
from nats.aio.msg import Msg
from opolyx_contracts import ContractError, decode, error_reply
from opolyx_contracts import errors as codes
from opolyx_contracts.errors import ErrorBody
from opolyx_contracts.table import MAX_PREVIEW_BYTES, TradePreview, TradePreviewRequest
from opolyx_rules import Terms

from opolyx_table.messages import encode
from opolyx_table.table import Table

__all__ = ["TradePreviews", "preview_reply"]


def _error(code: str, message: str) -> bytes:
    return encode(error_reply(code, message))


def preview_reply(table: Table | None, table_id: str, data: bytes) -> bytes:
    """The encoded reply to one preview request (a coded error for anything unusable)."""
    if len(data) > MAX_PREVIEW_BYTES:
        return _error(codes.BAD_REQUEST, f"a trade preview is at most {MAX_PREVIEW_BYTES} bytes")
    try:
        request = decode(TradePreviewRequest, data)
    except ContractError as exc:
        return _error(exc.code, exc.message)
    if table is None:
        return _error(codes.TABLE_NOT_FOUND, f"table {table_id!r} is not running here")
    mine = table.seat_of(request.player_id)
    if not mine:
        return _error(codes.SEAT_NOT_YOURS, "only a player seated at this table can trade")
    seat = mine[0]
    terms = Terms(
        request.give_cash,
        tuple(request.give_squares),
        request.take_cash,
        tuple(request.take_squares),
    )
    preview = opolyx_rules.preview_offer(table.state, seat, request.to, terms)
    refusal = None
    if preview.refusal is not None:
        refusal = ErrorBody(code=preview.refusal.code, message=preview.refusal.message)
    return encode(
        TradePreview(
            seat=seat,
            give_value=preview.give_value,
            take_value=preview.take_value,
            share_pct=preview.share_pct,
            fairness_pct=preview.fairness_pct,
            allies=preview.allies,
            allowed=refusal is None,
            refusal=None
            if refusal is None
            else ErrorBody(code=refusal.code, message=refusal.message),
        )
    )


class TradePreviews:
    """The handler of ``table_trade_preview`` subjects (routed here by `Handlers`)."""

    def __init__(
        self, tables: dict[str, Table], reply: Callable[[Msg, bytes], Awaitable[None]]
    ) -> None:
        self.tables = tables
        self.reply = reply

    async def handle(self, msg: Msg, table_id: str) -> None:
        await self.reply(msg, preview_reply(self.tables.get(table_id), table_id, msg.data))
