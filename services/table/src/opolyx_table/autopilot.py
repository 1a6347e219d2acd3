"""Who plays a human seat: its player, or the autopilot (a bot) while the player is away.

A seat's states; presence is memory only, autopilot on and off are stored table events
(`AutopilotChanged`), so logs and replays show them and a table loaded elsewhere keeps them:

    here   --the last socket goes-->            away (grace: the seat's own clock runs, R16)
    away   --grace over, the room allows it-->  autopilot (reason "away")
    away, autopilot --a socket again, or the player acts--> here (reason "back" if it was on)
    any    --the player switches it on-->       autopilot (reason "chosen": stays on when
                                                the player is here)
    chosen --the player switches it off-->      here (reason "released")

A seat no gateway has reported counts as here: without a gateway the plain R16 rules
apply. A gateway repeats its reports while the player stays (`SeatPresenceReports`), and
one not heard from within `ttl` no longer counts: a gateway that died without a word does
not keep the seat "here" once the player has gone from the gateway they came back on.
Nothing here does I/O; every check is O(1) (a seat has a gateway or two).
"""

from __future__ import annotations

from opolyx_contracts.table import AutopilotChanged

from opolyx_table.table import Table

__all__ = ["back", "grace_over", "human_seat", "presence", "record", "switch"]


def human_seat(table: Table, player_id: str) -> int | None:
    """The player's seat, if it is a human one (a bot seat is never on autopilot)."""
    return next((s for s in table.seat_of(player_id) if not table.seats[s].bot), None)


def _playing(table: Table, seat: int) -> bool:
    return not table.finished and not table.state.seats[seat].out


def presence(
    table: Table,
    seat: int,
    gateway: str,
    connected: bool,
    now: float,
    grace: float,
    ttl: float = float("inf"),
) -> tuple[AutopilotChanged | None, float | None]:
    """A gateway reports the seat's player connected or gone.

    Returns the change to store now (the player is back), and when the grace period of a
    fresh drop ends (the caller checks `grace_over` then)."""
    gateways = table.connected.setdefault(seat, {})
    if connected:
        gateways[gateway] = now
        return back(table, seat), None
    gateways.pop(gateway, None)
    for stale in [g for g, said in gateways.items() if now - said > ttl]:
        del gateways[stale]  # gone quiet: died, or lost the player without a word
    if gateways or seat in table.away:
        return None, None  # still connected elsewhere, or already away
    table.away[seat] = now
    if not table.autopilot_on_drop or seat in table.autopilot or not _playing(table, seat):
        return None, None
    return None, now + grace


def back(table: Table, seat: int) -> AutopilotChanged | None:
    """The seat's player is here again (a socket, or a command of their own)."""
    table.away.pop(seat, None)
    if seat in table.autopilot and seat not in table.autopilot_chosen:
        return AutopilotChanged(seat=seat, on=False, reason="back")
    return None


def grace_over(table: Table, seat: int, since: float) -> AutopilotChanged | None:
    """The grace period of the drop at `since` ended: the autopilot takes the seat if its
    player is still away (not back and gone again since) and the room allows it."""
    if table.away.get(seat) != since or seat in table.autopilot:
        return None
    if not table.autopilot_on_drop or not _playing(table, seat):
        return None
    return AutopilotChanged(seat=seat, on=True, reason="away")


def switch(table: Table, seat: int, on: bool) -> AutopilotChanged | None:
    """The player switches autopilot for their own seat (they are evidently here)."""
    table.away.pop(seat, None)
    if on:
        if seat in table.autopilot_chosen or not _playing(table, seat):
            return None
        return AutopilotChanged(seat=seat, on=True, reason="chosen")
    if seat in table.autopilot:
        return AutopilotChanged(seat=seat, on=False, reason="released")
    return None


def record(table: Table, change: AutopilotChanged) -> None:
    """Apply a stored change (live, or replayed when the table is loaded)."""
    if change.on:
        table.autopilot.add(change.seat)
        if change.reason == "chosen":
            table.autopilot_chosen.add(change.seat)
    else:
        table.autopilot.discard(change.seat)
        table.autopilot_chosen.discard(change.seat)
