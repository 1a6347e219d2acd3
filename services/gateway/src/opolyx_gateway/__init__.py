"""opolyx gateway: guest sign-in, the players' websockets, REST and the static web client."""

from opolyx_gateway.app import create_app
from opolyx_gateway.settings import GatewaySettings

__all__ = ["GatewaySettings", "create_app"]
