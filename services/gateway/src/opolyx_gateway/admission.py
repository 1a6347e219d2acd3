"""Who may open a websocket: the client's address (behind trusted proxies only, from
``X-Forwarded-For``), a cap on one address's open sockets, and a cool-down after a socket
was closed for flooding (1008), for its address and for its player.

Without the cool-down a flooding client closed with 1008 reconnects at once and floods
again, and without the cap one address can hold any number of sockets. Both are per gateway
instance: a load balancer that keeps an address on one instance (or the proxy's own limits)
makes them cluster-wide; otherwise each instance applies them to what it sees.
"""

from __future__ import annotations

import ipaddress
import time
from collections import Counter, OrderedDict

__all__ = ["Admission", "client_address"]

REMEMBERED = 10_000
"""Most addresses and players in cool-down remembered (the oldest go first)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _parse_networks(proxies: list[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())


def _is_in(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: tuple[Network, ...]
) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the
    nearest address in ``X-Forwarded-For`` that is not a trusted proxy (anything further
    left was written by the client itself and proves nothing)."""
    address = peer or "unknown"
    if not trusted or not forwarded_for or not _is_in(address, trusted):
        return address
    hops = [hop.strip() for hop in forwarded_for.split(",")[-32:] if hop.strip()]
    for hop in reversed(hops):
        if not _is_in(hop, trusted):
            return hop[:64]
        address = hop
    return address


class Admission:
    def __init__(
        self,
        max_sockets_per_address: int,
        flood_cooldown_seconds: float,
        trusted_proxies: list[str],
    ) -> None:
        self.max_sockets = max_sockets_per_address
        self.cooldown = flood_cooldown_seconds
        self.trusted = _parse_networks(trusted_proxies)
        self.open: Counter[str] = Counter()
        """Open sockets by client address."""
        self._cooling: OrderedDict[str, float] = OrderedDict()
        """``a:<address>`` / ``p:<player>`` -> monotonic time its cool-down ends."""

    def address_of(self, peer: str | None, forwarded_for: str | None) -> str:
        return client_address(peer, forwarded_for, self.trusted)

    def refusal(self, address: str) -> str | None:
        """Why a new socket from `address` is refused, or None to let it in."""
        if self._is_cooling(f"a:{address}"):
            return "closed for flooding; try again later"
        if self.open[address] >= self.max_sockets:
            return "too many connections from this address"
        return None

    def player_refusal(self, player_id: str) -> str | None:
        if self._is_cooling(f"p:{player_id}"):
            return "closed for flooding; try again later"
        return None

    def opened(self, address: str) -> None:
        self.open[address] += 1

    def closed(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    def flooded(self, address: str, player_id: str | None) -> None:
        """A socket of `address` (and `player_id`) was closed for flooding."""
        ends = time.monotonic() + self.cooldown
        for key in (f"a:{address}", f"p:{player_id}" if player_id else None):
            if key is None:
                continue
            self._cooling.pop(key, None)
            self._cooling[key] = ends
            while len(self._cooling) > REMEMBERED:
                self._cooling.popitem(last=False)

    def _is_cooling(self, key: str) -> bool:
        ends = self._cooling.get(key)
        if ends is None:
            return False
        if ends <= time.monotonic():
            del self._cooling[key]
            return False
        return True
