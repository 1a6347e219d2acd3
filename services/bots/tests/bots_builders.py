"""What the bots tests build as the table would: decision requests for a state."""

from __future__ import annotations

from opolyx_contracts.table import DecisionRequest
from opolyx_rules import State, command_to_json, legal_commands, public_view


def request_for(state: State, seat: int, attempt: int = 1, version: int = 7) -> DecisionRequest:
    # the view and the commands as JSON, validated into the contract's models as a table's are
    return DecisionRequest.model_validate(
        {
            "table_id": "t-1",
            "seat": seat,
            "player_id": "bot-esme",
            "command_subject": "opolyx.table.3.t-1.bot",
            "command_id": f"t-1:{version}:{seat}",
            "version": version,
            "attempt": attempt,
            "state": public_view(state),
            "legal": [command_to_json(c) for c in legal_commands(state, seat)],
            "deadline_at": None,
        }
    )
