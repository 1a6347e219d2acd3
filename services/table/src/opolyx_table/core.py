"""The table's decisions, with no I/O: what a command or a clock tick does to a table.

`accept(table, request, now, via_bots)` checks, in a fixed order, that the command is new
(its id not seen before), that this instance still serves the table, that it is not a
timeout, that the sender owns the seat and may act for it on the subject it came by (a
player never for a bot seat; the bots only for a bot seat or one on autopilot), fires every
deadline due before it, checks the expected version, and asks the rules. It returns an
`Outcome`: the batches to store (timeouts fired, then the command's events), the reply once
they are stored, and what to remember. The shell stores, replies and publishes; it never
decides anything itself. Everything is in the rules library's own types; only the reply is
a contract message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import opolyx_rules
from opolyx_contracts import ErrorReply, error_reply, game
from opolyx_contracts import errors as codes
from opolyx_contracts.refusals import COMMAND_NOT_ALLOWED
from opolyx_contracts.table import SEAT_NOT_AUTOMATED, CommandAccepted, DecisionKind, TableCommand
from opolyx_rules import Command, Event, State
from opolyx_rules.commands import Timeout

from opolyx_table.engine import rules_command
from opolyx_table.table import Table

__all__ = [
    "COMMAND_NOT_ALLOWED",
    "Decision",
    "Label",
    "Outcome",
    "PlannedBatch",
    "accept",
    "accepted",
    "decisions",
    "fire_due",
]


Label = Literal["ok", "duplicate", "invalid", "refused", "stale", "moved", "error"]
"""The outcome of a command, for metrics."""


@dataclass(frozen=True, slots=True)
class PlannedBatch:
    """One events message to store: a command's events (or a timeout's), all or none."""

    command: game.GameCommand
    """The command as applied (the seat filled in), `Timeout` for a deadline."""
    command_id: str | None
    at: float
    """Game time it was applied at."""
    events: list[Event]
    state: State
    """The state after these events."""
    autopilot: bool = False
    """Sent by the autopilot for a human seat (the stored records say so)."""


@dataclass(slots=True)
class Outcome:
    reply: CommandAccepted | ErrorReply
    """What the sender gets once `batches` are stored."""
    label: Label
    batches: list[PlannedBatch] = field(default_factory=list)
    rejection: tuple[str, str, str] | None = None
    """(command id, code, message) of a command the rules refused: answer a resend the same."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision the rules wait for now."""

    seat: int
    kind: DecisionKind
    deadline: float | None
    """Game time when the table decides for the seat."""
    legal: list[Command]


def accepted(seq: int, events: int) -> CommandAccepted:
    return CommandAccepted(seq=seq, version=seq, events=events)


def _error(code: str, message: str, label: Label) -> Outcome:
    return Outcome(error_reply(code, message), label)


def fire_due(state: State, now: float) -> list[PlannedBatch]:
    """Every deadline due at game time `now`, each fired at its own time (as replay does)."""
    batches: list[PlannedBatch] = []
    while not state.finished:
        deadline = opolyx_rules.next_deadline(state)
        if deadline is None or deadline > now:
            break
        try:
            state, events = opolyx_rules.apply(state, Timeout(), deadline)
        except opolyx_rules.RulesError:
            break
        if not events:
            break
        batches.append(PlannedBatch(game.Timeout(), None, deadline, events, state))
    return batches


def accept(table: Table, request: TableCommand, now: float, via_bots: bool = False) -> Outcome:
    """What `request` does to `table` at wall-clock `now` (nothing is changed here);
    `via_bots`: it came on the bots' subject (only the bots role may send there)."""
    done = table.recent.get(request.command_id)
    if done is not None:
        return Outcome(accepted(*done), "duplicate")
    refused = table.rejected.get(request.command_id)
    if refused is not None:
        return _error(*refused, "duplicate")
    if table.dropped:
        return _error(codes.NOT_OWNER, f"table {table.table_id} moved; retry", "moved")
    command = request.command
    if isinstance(command, game.Timeout):
        return _error(COMMAND_NOT_ALLOWED, "timeouts are fired by the table", "invalid")
    mine = table.seat_of(request.player_id)
    seat = command.seat if command.seat is not None else (mine[0] if len(mine) == 1 else None)
    if seat is None or seat not in mine:
        return _error(
            codes.SEAT_NOT_YOURS,
            f"player {request.player_id!r} does not own seat {seat!r} at this table",
            "refused",
        )
    bot_seat = table.seats[seat].bot
    if via_bots and not bot_seat and seat not in table.autopilot:
        return _error(
            SEAT_NOT_AUTOMATED,
            f"seat {seat} is played by its player: bots act only for bot seats and seats on "
            "autopilot",
            "refused",
        )
    if bot_seat and not via_bots:
        return _error(
            codes.SEAT_NOT_YOURS, f"seat {seat} is a bot's: only its bot acts for it", "refused"
        )
    game_now = table.game_time(now)
    due = fire_due(table.state, game_now)
    state = due[-1].state if due else table.state
    version = table.seq + sum(len(batch.events) for batch in due)
    if state.finished:
        outcome = _error(codes.TABLE_FINISHED, "the game has ended", "refused")
    elif request.expected_version is not None and request.expected_version != version:
        outcome = _error(
            codes.COMMAND_STALE,
            f"the table is at version {version}, not {request.expected_version}; decide "
            "again on the current state",
            "stale",
        )
    else:
        outcome = _apply(
            request, command, seat, state, version, game_now, via_bots and not bot_seat
        )
    outcome.batches[:0] = due
    return outcome


def _apply(
    request: TableCommand,
    command: game.GameCommand,
    seat: int,
    state: State,
    version: int,
    game_now: float,
    by_autopilot: bool,
) -> Outcome:
    try:
        new_state, events = opolyx_rules.apply(state, rules_command(command, seat), game_now)
    except opolyx_rules.RulesError as exc:
        outcome = _error(exc.code, exc.message, "refused")
        outcome.rejection = (request.command_id, exc.code, exc.message)
        return outcome
    if not events:
        return Outcome(accepted(version, 0), "ok")
    seated = getattr(command, "seat", seat) == seat
    applied = command if seated else command.model_copy(update={"seat": seat})
    batch = PlannedBatch(applied, request.command_id, game_now, events, new_state, by_autopilot)
    return Outcome(accepted(version + len(events), len(events)), "ok", [batch])


def decisions(state: State) -> list[Decision]:
    """The decisions open now, each with the seat's legal commands."""
    out: list[Decision] = []
    pending = state.pending
    for seat in opolyx_rules.awaiting(state):
        if pending is not None and pending.seat == seat:
            kind: DecisionKind = pending.kind  # type: ignore[assignment]
            deadline: float | None = pending.deadline
        else:
            kind = "offer"
            deadline = min((o.deadline for o in state.offers if o.to == seat), default=None)
        out.append(Decision(seat, kind, deadline, opolyx_rules.legal_commands(state, seat)))
    return out
