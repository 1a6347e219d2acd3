"""opolyx rules library: the whole game as pure functions over an immutable state.

See API.md for the contract services rely on and README.md for the versioning policy.
"""

from .assets import complete_groups, net_worth
from .commands import Command, command_from_json, command_to_json
from .engine import (
    SeatSetup,
    advance,
    apply,
    awaiting,
    decide,
    new_game,
    next_deadline,
    replay,
    seed_commitment,
)
from .errors import RulesError, StateVersionError
from .events import Event, event_from_json, event_to_json
from .evolve import evolve
from .jsonio import public_from_stored, public_view, state_from_json, state_to_json
from .legal import legal_commands
from .modes import MODES, ModeConfig, get_mode
from .results import places, seat_results
from .state import RULES_VERSION, SCHEMA_VERSION, Script, State, with_fields
from .trade import can_offer

__all__ = [
    "MODES",
    "RULES_VERSION",
    "SCHEMA_VERSION",
    "Command",
    "Event",
    "ModeConfig",
    "RulesError",
    "Script",
    "SeatSetup",
    "State",
    "StateVersionError",
    "advance",
    "apply",
    "awaiting",
    "can_offer",
    "command_from_json",
    "command_to_json",
    "complete_groups",
    "decide",
    "event_from_json",
    "event_to_json",
    "evolve",
    "get_mode",
    "legal_commands",
    "net_worth",
    "new_game",
    "next_deadline",
    "places",
    "public_from_stored",
    "public_view",
    "replay",
    "seat_results",
    "seed_commitment",
    "state_from_json",
    "state_to_json",
    "with_fields",
]
