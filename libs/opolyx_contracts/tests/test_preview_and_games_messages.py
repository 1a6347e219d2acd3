"""The websocket messages of the trade preview, the running-games list and net worth:
round trips, and bad input refused by the contract before anything is forwarded."""

from __future__ import annotations

import pytest
from opolyx_contracts.gateway import (
    LOBBY_ACTIONS,
    LobbyResult,
    OkReply,
    TableTradePreview,
    TradePreviewResult,
    client_message_adapter,
    server_message_adapter,
)
from opolyx_contracts.lobby import LobbyReply, RoomMember, RunningGame
from pydantic import ValidationError


def test_a_trade_preview_request_round_trips_and_its_result_reads_back() -> None:
    raw = (
        '{"id": 7, "type": "table.trade_preview", "table": "t-1", "to": 2, "give_cash": 500,'
        ' "give_squares": [39], "take_squares": [1, 3]}'
    )
    message = client_message_adapter.validate_json(raw)
    assert isinstance(message, TableTradePreview)
    assert (message.to, message.give_squares, message.take_cash) == (2, [39], 0)
    result = TradePreviewResult(
        seat=0,
        give_value=4500,
        take_value=1200,
        share_pct=26,
        fairness_pct=50,
        allies=False,
        allowed=False,
    )
    reply = server_message_adapter.validate_json(OkReply(id=7, data=result).model_dump_json())
    assert isinstance(reply, OkReply) and reply.data == result


@pytest.mark.parametrize(
    "fields",
    [
        '"to": 2, "give_squares": [40]',
        '"to": 2, "give_cash": -1',
        '"to": 9',
        '"to": 2, "take_squares": [' + ",".join(["1"] * 29) + "]",
        '"to": 2, "seat": 0',
    ],
)
def test_a_bad_trade_preview_is_refused_by_the_contract(fields: str) -> None:
    raw = '{"id": 1, "type": "table.trade_preview", "table": "t-1", ' + fields + "}"
    with pytest.raises(ValidationError):
        client_message_adapter.validate_json(raw)


def test_the_running_games_list_passes_through_the_lobby_result() -> None:
    assert "games" in LOBBY_ACTIONS
    game = RunningGame(
        room_id="r-1",
        mode="classic",
        seat_count=2,
        public=True,
        status="started",
        creator="ann",
        members=[RoomMember(player_id="ann", name="Ann")],
        filled=1,
        humans=1,
        table_id="t-1-a",
    )
    result = LobbyResult.of(LobbyReply(games=[game]))
    text = OkReply(id=1, data=result).model_dump_json()
    parsed = server_message_adapter.validate_json(text)
    assert isinstance(parsed, OkReply) and isinstance(parsed.data, LobbyResult)
    assert parsed.data.games is not None and parsed.data.games[0].table_id == "t-1-a"
