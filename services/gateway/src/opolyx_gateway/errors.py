"""The gateway's coded error: the services' one base (`ContractError`), ``{"code", "message"}``
on the wire."""

from __future__ import annotations

from opolyx_contracts.errors import ContractError

__all__ = ["GatewayError"]


class GatewayError(ContractError):
    """A request the gateway cannot serve (an upstream refusal keeps the upstream's code)."""
