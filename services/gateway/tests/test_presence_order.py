"""Presence reports reach progression in the order they were made (a page that reconnects
sends "offline" then "online"; the other way round would show a connected player offline)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from opolyx_contracts.progression import PresenceAck, PresenceReport
from opolyx_gateway.presence import FOLD_SECONDS, Presence
from opolyx_gateway.upstream import Upstream


class SlowFirstProgression:
    """Answers the first report after 0.2 s and every later one at once: reports sent side by
    side would arrive second first."""

    def __init__(self) -> None:
        self.received: list[PresenceReport] = []
        self.calls = 0

    async def progression(self, subject: str, request: Any, reply: type[Any]) -> PresenceAck:
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(0.2)
        self.received.append(request)
        return PresenceAck()


def _presence() -> tuple[Presence, SlowFirstProgression]:
    upstream = SlowFirstProgression()
    return Presence(cast(Upstream, upstream)), upstream


async def test_a_reconnect_is_reported_offline_then_online() -> None:
    presence, progression = _presence()
    presence.connected("p1", "Mira")
    await asyncio.sleep(FOLD_SECONDS * 3)  # "online" folded and in flight (slow)
    presence.disconnected("p1")
    await asyncio.sleep(FOLD_SECONDS * 3)  # "offline" folded while "online" is in flight
    presence.connected("p1", "Mira")
    await asyncio.sleep(0.5)
    said = [("on" if r.online else "off") for r in progression.received]
    assert said == ["on", "off", "on"]


async def test_a_full_report_waits_for_the_reports_before_it() -> None:
    presence, progression = _presence()
    presence.connected("p1", "Mira")
    presence.connected("p2", "Rolf")
    await asyncio.sleep(FOLD_SECONDS * 3)  # "online p1 p2" in flight (slow)
    presence.disconnected("p1")
    await asyncio.sleep(FOLD_SECONDS * 3)  # "offline p1" queued behind it
    await presence.report_all()  # goes last: "online p2"
    assert [(r.online, r.offline) for r in progression.received] == [
        (["p1", "p2"], []),
        ([], ["p1"]),
        (["p2"], []),
    ]
