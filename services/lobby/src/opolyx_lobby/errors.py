"""The lobby's coded error: a `ContractError` whose code is one of the contract's `LOBBY_*`."""

from __future__ import annotations

from opolyx_contracts.errors import ContractError

__all__ = ["LobbyError"]


class LobbyError(ContractError):
    """A lobby request that cannot be carried out; ``code`` is stable (``lobby/<reason>``)."""
