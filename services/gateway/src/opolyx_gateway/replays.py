"""Replays of finished games over HTTP: the timeline, pages of states, analytics, the file.

A replay is built once per game from the table's stored events (stream TABLE_EVENTS, read
by subject from its first message to its last) and kept in a small LRU: the rules library
rebuilds the state at every step (the start of each turn, see ``opolyx_rules.forking``)
and the analytics in one pass. States are kept as the rules' immutable values (sharing
what did not change between turns); a page of public views is serialised on first ask and
cached with its replay. Measured on a 500-round, four-seat game (bench/replay.py): building
it costs well under the 1 s target, and a page is a dictionary lookup after the first.

The models are `opolyx_contracts.replay`; routes are registered by the app (`ROUTES`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import nats.errors
import opolyx_rules
from litestar import Request, Response, get, post
from litestar.datastructures import State as AppState
from litestar.params import JSONBody, Parameter
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError
from opolyx_contracts import subjects
from opolyx_contracts.envelope import ErrorReply
from opolyx_contracts.errors import UNAVAILABLE
from opolyx_contracts.gateway import AUTH_REQUIRED, UPSTREAM_BAD_REPLY
from opolyx_contracts.lobby import LobbyCommand, LobbyReply
from opolyx_contracts.replay import (
    PAST_GAMES,
    PAST_GAMES_LIMIT,
    REPLAY_BAD_STEP,
    REPLAY_NOT_FINISHED,
    REPLAY_NOT_FOUND,
    REPLAY_UNREADABLE,
    ForkRequest,
    ForkResult,
    GameAnalytics,
    PastGame,
    PastGames,
    PastGamesReply,
    PastGamesRequest,
    ReplayBatch,
    ReplayFile,
    ReplayPage,
    ReplaySeat,
    ReplayStep,
    ReplaySummary,
    TimelineMark,
)
from opolyx_contracts.table import SeedRevealed, TableCreatedEvent
from opolyx_rules import Event, State
from opolyx_rules.analytics import game_analytics
from opolyx_rules.forking import step_bounds
from opolyx_service.logs import get_logger
from pydantic import Field, TypeAdapter, ValidationError

from opolyx_gateway.auth import AuthError, Identity
from opolyx_gateway.errors import GatewayError

__all__ = [
    "PAGE_SIZE",
    "REPLAYS_KEPT",
    "ROUTES",
    "Replay",
    "Replays",
    "build_quietly",
    "build_replay",
]

log = get_logger("opolyx.gateway.replays")

PAGE_SIZE = 50
"""Steps per page: about 200 KB of JSON, a few milliseconds to serialise."""
REPLAYS_KEPT = 8
"""Replays kept built (a 500-round game's states take a few MB)."""
PAGES_KEPT = 16
"""Serialised pages kept per replay."""
READ_TIMEOUT = 10.0
"""Seconds reading one game's events may wait for the next message."""
MAX_BATCHES = 200_000
"""Most events messages a replay reads (a 500-round, six-seat game has about 10,000)."""

PRACTICE_TIMEOUT = 15.0
"""Seconds the lobby may take to create a practice game (it rebuilds the position from the
stored game before the table exists)."""
_LOBBY_REPLY: TypeAdapter[LobbyReply | ErrorReply] = TypeAdapter(
    Annotated[LobbyReply | ErrorReply, Field(discriminator="ok")]
)


@dataclass(eq=False)
class Replay:
    """One finished game, rebuilt."""

    table_id: str
    created: TableCreatedEvent
    seed: int
    batches: list[ReplayBatch]
    events: list[dict[str, Any]]
    """Every rules event as stored (JSON), in order."""
    bounds: list[int]
    """Per step, how many events come before it (``opolyx_rules.forking.step_bounds``)."""
    states: list[State]
    """The state at each step."""
    marks: list[TimelineMark]
    analytics: GameAnalytics
    finished_at: float
    by_autopilot: frozenset[int] = frozenset()
    """Indexes into `events` of what the autopilot played for an away player (the stored
    records' `autopilot` flag): the page marks them as the live log does."""
    summary: bytes = b""
    pages: OrderedDict[int, bytes] = field(default_factory=OrderedDict)

    @property
    def steps(self) -> int:
        return len(self.states)

    @property
    def final(self) -> State:
        return self.states[-1]

    @property
    def first_seat_drawn(self) -> bool:
        return self.created.forked_from is None

    def seats(self) -> list[ReplaySeat]:
        return [
            ReplaySeat(seat=s.seat, player_id=s.player_id, name=s.name, bot=s.bot, boosts=s.boosts)
            for s in self.created.seats
        ]

    def page(self, start: int) -> bytes:
        """The encoded `ReplayPage` of the steps from `start` (cached)."""
        if not 0 <= start < self.steps:
            raise GatewayError(REPLAY_BAD_STEP, f"the replay has steps 0 to {self.steps - 1}")
        start -= start % PAGE_SIZE
        cached = self.pages.get(start)
        if cached is not None:
            self.pages.move_to_end(start)
            return cached
        steps = []
        for step in range(start, min(start + PAGE_SIZE, self.steps)):
            mark = self.marks[step]
            after = self.bounds[step + 1] if step + 1 < len(self.bounds) else len(self.events)
            steps.append(
                ReplayStep(
                    step=step,
                    round=mark.round,
                    seat=mark.seat,
                    state=opolyx_rules.public_view(self.states[step]),
                    net_worth=[
                        opolyx_rules.net_worth(self.states[step], seat)
                        for seat in range(len(self.states[step].seats))
                    ],
                    events=[
                        {**self.events[i], "by_autopilot": True}
                        if i in self.by_autopilot
                        else self.events[i]
                        for i in range(self.bounds[step], after)
                    ],
                )
            )
        body = ReplayPage(table_id=self.table_id, start=start, steps=steps).model_dump_json()
        encoded = body.encode()
        self.pages[start] = encoded
        while len(self.pages) > PAGES_KEPT:
            self.pages.popitem(last=False)
        return encoded

    def file(self) -> ReplayFile:
        return ReplayFile(
            table_id=self.table_id,
            mode=self.created.mode,
            rules_version=self.created.rules_version,
            practice=self.created.practice,
            seats=self.seats(),
            seed_commitment=self.created.seed_commitment,
            seed=self.seed,
            seed_text=str(self.seed),
            first_seat_drawn=self.first_seat_drawn,
            initial=self.created.state.model_dump(mode="json"),
            batches=self.batches,
        )


def build_replay(table_id: str, stored: Sequence[dict[str, Any]]) -> Replay:
    """Rebuild a finished game from its stored events messages (`TableEvents` as JSON, in
    stream order). Raises `GatewayError` when they are not a whole finished game.

    The messages are read by key rather than validated as `TableEvents`: only the table
    role writes this stream, a 500-round game is about 6,000 messages and 24,000 events,
    and the typed validation of every event cost seconds (measured); the rules library's
    own parser still refuses any event it does not know, and the table's own two events
    are validated with their models."""
    created: TableCreatedEvent | None = None
    revealed: SeedRevealed | None = None
    batches: list[ReplayBatch] = []
    events_json: list[dict[str, Any]] = []
    by_autopilot: set[int] = set()
    finished_at = 0.0
    try:
        for message in stored:
            records = [record["event"] for record in message["events"]]
            if message["source"] == "table":
                for event in records:
                    if event["type"] == "table_created":
                        created = TableCreatedEvent.model_validate(event)
                    elif event["type"] == "seed_revealed":
                        revealed = SeedRevealed.model_validate(event)
                        finished_at = float(message["at"])
                continue
            command, at = message["command"], message["command_at"]
            if not isinstance(command, dict) or not isinstance(at, (int, float)):
                raise TypeError("a stored command without its command or time")
            # Built without validation (the fields are the stored ones, already JSON).
            batches.append(ReplayBatch.model_construct(command=command, at=at, events=records))
            by_autopilot.update(
                len(events_json) + i
                for i, record in enumerate(message["events"])
                if record.get("autopilot")
            )
            events_json.extend(records)
    except (KeyError, TypeError, ValueError) as exc:
        raise GatewayError(
            REPLAY_UNREADABLE, f"a stored message of {table_id} is unreadable: {exc!r}"
        ) from None
    if created is None:
        raise GatewayError(REPLAY_NOT_FOUND, f"no game {table_id} is stored")
    if revealed is None:
        raise GatewayError(
            REPLAY_NOT_FINISHED, "the game is not over: its replay opens when it ends"
        )
    try:
        initial = opolyx_rules.state_from_json(created.state.model_dump(mode="json"))
        rules_events: list[Event] = [opolyx_rules.event_from_json(e) for e in events_json]
    except (opolyx_rules.RulesError, KeyError, TypeError, ValueError) as exc:
        raise GatewayError(REPLAY_UNREADABLE, f"the game's events cannot be read: {exc}") from None
    bounds = step_bounds(rules_events, finished=True)
    states = [initial]
    for step in range(1, len(bounds)):
        states.append(
            opolyx_rules.replay(states[-1], rules_events[bounds[step - 1] : bounds[step]])
        )
    # Built without validation: the values are the rules' own ints and bools (validating
    # 2,000 small models measured as much as the whole rebuild).
    marks = [
        TimelineMark.model_construct(
            step=step,
            round=state.round,
            seat=state.current_seat,
            end=step == len(states) - 1 and state.finished,
        )
        for step, state in enumerate(states)
    ]
    analytics = GameAnalytics.model_validate(game_analytics(initial, rules_events))
    replay = Replay(
        table_id=table_id,
        created=created,
        seed=revealed.seed,
        batches=batches,
        events=events_json,
        bounds=bounds,
        states=states,
        marks=marks,
        analytics=analytics,
        finished_at=finished_at,
        by_autopilot=frozenset(by_autopilot),
    )
    final = replay.final
    replay.summary = (
        ReplaySummary(
            table_id=table_id,
            mode=created.mode,
            rules_version=created.rules_version,
            practice=created.practice,
            seats=replay.seats(),
            seed_commitment=created.seed_commitment,
            seed=revealed.seed,
            seed_text=str(revealed.seed),
            first_seat_drawn=replay.first_seat_drawn,
            rounds=final.round,
            winner=final.winner,
            placement=list(final.placement),
            started_at=created.started_at,
            finished_at=finished_at,
            steps=replay.steps,
            page_size=PAGE_SIZE,
            timeline=marks,
            analytics=analytics,
            forked_from=created.forked_from,
        )
        .model_dump_json()
        .encode()
    )
    return replay


_BUILDING = threading.Lock()


def build_quietly(table_id: str, stored: Sequence[dict[str, Any]]) -> Replay:
    """`build_replay` one at a time, with the cyclic garbage collector paused: the rebuild
    allocates some 100,000 small acyclic objects (events, states, models), and the full
    passes they trigger over a gateway's live objects doubled its time (measured: 1.25 s
    instead of 2.5 s for a 500-round game on a loaded machine). One at a time also bounds
    the CPU that replays take from the sockets."""
    with _BUILDING:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return build_replay(table_id, stored)
        finally:
            if enabled:
                gc.enable()


class Replays:
    """Built replays by table id: at most `kept`, least recently used dropped first; one
    build at a time per game however many ask for it at once."""

    def __init__(self, js: JetStreamContext, kept: int = REPLAYS_KEPT) -> None:
        self.js = js
        self.kept = kept
        self.built: OrderedDict[str, Replay] = OrderedDict()
        self._building: dict[str, asyncio.Future[Replay]] = {}

    async def get(self, table_id: str) -> Replay:
        replay = self.built.get(table_id)
        if replay is not None:
            self.built.move_to_end(table_id)
            return replay
        pending = self._building.get(table_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Replay] = asyncio.get_running_loop().create_future()
        self._building[table_id] = future
        try:
            stored = await self.read(table_id)
            # The rebuild is CPU work of a few hundred milliseconds: off the event loop,
            # so the sockets of players in running games are served meanwhile.
            replay = await asyncio.to_thread(build_quietly, table_id, stored)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failed build with no other waiter is not logged
            raise
        finally:
            self._building.pop(table_id, None)
        future.set_result(replay)
        self.built[table_id] = replay
        while len(self.built) > self.kept:
            self.built.popitem(last=False)
        return replay

    async def read(self, table_id: str) -> list[dict[str, Any]]:
        """Every stored events message of one table (`TableEvents` JSON), in order."""
        subject = subjects.table_events(table_id)
        try:
            last = await self.js.get_last_msg(subjects.TABLE_EVENTS_STREAM, subject)
        except NotFoundError:
            raise GatewayError(REPLAY_NOT_FOUND, f"no game {table_id} is stored") from None
        except Exception as exc:
            log.warning("replay_events_unreadable", table_id=table_id, error=repr(exc))
            raise GatewayError(UNAVAILABLE, "stored games cannot be read now; retry") from None
        last_seq = int(last.seq or 0)
        sub = await self.js.subscribe(
            subject,
            ordered_consumer=True,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
            stream=subjects.TABLE_EVENTS_STREAM,
            pending_msgs_limit=-1,
        )
        stored: list[dict[str, Any]] = []
        try:
            while len(stored) < MAX_BATCHES:
                try:
                    msg = await sub.next_msg(timeout=READ_TIMEOUT)
                except TimeoutError:
                    raise GatewayError(UNAVAILABLE, "reading the game took too long") from None
                try:
                    message = json.loads(msg.data)
                except ValueError:
                    raise GatewayError(
                        REPLAY_UNREADABLE, f"a stored message of {table_id}"
                    ) from None
                if not isinstance(message, dict):
                    raise GatewayError(REPLAY_UNREADABLE, f"a stored message of {table_id}")
                stored.append(message)
                if int(msg.metadata.sequence.stream) >= last_seq:
                    break
        finally:
            await sub.unsubscribe()
        return stored


# -- routes ----------------------------------------------------------------------------------

_TABLE_ID = Parameter(pattern=r"^[A-Za-z0-9_-]{1,128}$")
_JSON = "application/json"


def replays_of(state: AppState) -> Replays:
    """The app's replays, made on first use once the gateway is connected."""
    replays: Replays | None = getattr(state, "replays", None)
    if replays is None:
        gateway = getattr(state, "gateway", None)
        if gateway is None:
            raise GatewayError(UNAVAILABLE, "the gateway is still connecting; try again soon")
        replays = Replays(gateway.nc.jetstream())
        state.replays = replays
    return replays


@get("/api/replays/{table_id:str}", tags=["replays"], summary="A finished game's replay")
async def replay_summary(state: AppState, table_id: Annotated[str, _TABLE_ID]) -> Response[bytes]:
    """Seats, the seed commitment and the revealed seed, the timeline and the analytics."""
    replay = await replays_of(state).get(table_id)
    return Response(replay.summary, media_type=_JSON)


@get("/api/replays/{table_id:str}/steps", tags=["replays"], summary="States of a replay")
async def replay_steps(
    state: AppState,
    table_id: Annotated[str, _TABLE_ID],
    start: Annotated[int, Parameter(ge=0, le=10_000_000)] = 0,
) -> Response[bytes]:
    """The page of steps holding `start` (pages begin at multiples of the page size)."""
    replay = await replays_of(state).get(table_id)
    return Response(replay.page(start), media_type=_JSON)


@get("/api/replays/{table_id:str}/file", tags=["replays"], summary="The replay file")
async def replay_file(
    request: Request[Any, Any, Any], state: AppState, table_id: Annotated[str, _TABLE_ID]
) -> Response[bytes]:
    """The whole game for `opolyx-rules verify FILE` (docs/DICE.md)."""
    replay = await replays_of(state).get(table_id)
    body = replay.file().model_dump_json().encode()
    return Response(
        body,
        media_type=_JSON,
        headers={"content-disposition": f'attachment; filename="opolyx-{table_id}.json"'},
    )


def _identity(request: Request[Any, Any, Any], state: AppState) -> Identity:
    gateway = getattr(state, "gateway", None)
    if gateway is None:
        raise GatewayError(UNAVAILABLE, "the gateway is still connecting; try again soon")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError(AUTH_REQUIRED, "send Authorization: Bearer <session token>")
    identity: Identity = gateway.signer.verify(token.strip())
    return identity


def practice_command(replay: Replay, player_id: str, name: str, fork: ForkRequest) -> LobbyCommand:
    """The lobby command that starts a practice game from `fork.step` of `replay`: the
    player at the seat asked for, else their own seat in that game, else the seat to play."""
    if fork.step >= replay.steps:
        raise GatewayError(REPLAY_BAD_STEP, f"the replay has steps 0 to {replay.steps - 1}")
    mark = replay.marks[fork.step]
    if mark.end:
        raise GatewayError(REPLAY_BAD_STEP, "the game is over at this step; pick an earlier one")
    seats = replay.created.seats
    own = next((s.seat for s in seats if s.player_id == player_id), None)
    seat = fork.seat if fork.seat is not None else own if own is not None else mark.seat
    if seat >= len(seats) or replay.states[fork.step].seats[seat].out:
        raise GatewayError(REPLAY_BAD_STEP, f"seat {seat} is not in the game at this step")
    return LobbyCommand(
        type="practice",
        player_id=player_id,
        name=name,
        table_id=replay.table_id,
        step=fork.step,
        mode=replay.created.mode,
        seats=len(seats),
        seat=seat,
        public=False,
    )


@post("/api/replays/{table_id:str}/fork", tags=["replays"], summary="Play from here")
async def replay_fork(
    request: Request[Any, Any, Any],
    state: AppState,
    table_id: Annotated[str, _TABLE_ID],
    data: JSONBody[ForkRequest],
) -> ForkResult:
    """A private practice game against bots from a step of a finished game (no XP); the
    player is seated at its table (the game client shows it when it connects)."""
    identity = _identity(request, state)
    replay = await replays_of(state).get(table_id)
    command = practice_command(replay, identity.player_id, identity.name, data)
    gateway = state.gateway
    try:
        msg = await gateway.nc.request(
            subjects.LOBBY_CMD,
            command.model_dump_json(exclude_none=True).encode(),
            timeout=PRACTICE_TIMEOUT,
        )
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
        raise GatewayError(UNAVAILABLE, "the lobby did not answer; try again soon") from None
    try:
        reply = _LOBBY_REPLY.validate_json(msg.data)
    except ValidationError:
        raise GatewayError(UPSTREAM_BAD_REPLY, "the lobby sent an unreadable reply") from None
    if isinstance(reply, ErrorReply):
        raise GatewayError(reply.error.code, reply.error.message)
    if reply.room is None or reply.table_id is None:
        raise GatewayError(UNAVAILABLE, "the practice game is still starting; try again soon")
    assert command.seat is not None
    return ForkResult(room_id=reply.room.room_id, table_id=reply.table_id, seat=command.seat)


_PAST_GAMES_REPLY: TypeAdapter[PastGamesReply | ErrorReply] = TypeAdapter(
    Annotated[PastGamesReply | ErrorReply, Field(discriminator="ok")]
)


def replay_link(table_id: str) -> str:
    """The replay page of a game: the link target of the profile's past games."""
    return f"/replay.html?table={table_id}"


@get("/api/players/{player_id:str}/games", tags=["replays"], summary="A player's past games")
async def past_games(
    request: Request[Any, Any, Any],
    state: AppState,
    player_id: Annotated[str, _TABLE_ID],
    limit: Annotated[int, Parameter(ge=1, le=PAST_GAMES_LIMIT)] = 20,
) -> PastGames:
    """The player's finished games and those of the players they follow, newest first,
    each with its replay link (`/replay.html?table=<id>`)."""
    _identity(request, state)
    body = PastGamesRequest(player_id=player_id, limit=limit).model_dump_json().encode()
    try:
        msg = await state.gateway.nc.request(PAST_GAMES, body, timeout=5.0)
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
        raise GatewayError(UNAVAILABLE, "the progression service is not answering") from None
    try:
        reply = _PAST_GAMES_REPLY.validate_json(msg.data)
    except ValidationError:
        raise GatewayError(UPSTREAM_BAD_REPLY, "progression sent an unreadable reply") from None
    if isinstance(reply, ErrorReply):
        raise GatewayError(reply.error.code, reply.error.message)

    def linked(games: list[PastGame]) -> list[PastGame]:
        return [g.model_copy(update={"replay": replay_link(g.table_id)}) for g in games]

    return PastGames(
        player_id=reply.player_id, games=linked(reply.games), followed=linked(reply.followed)
    )


ROUTES = [replay_summary, replay_steps, replay_file, replay_fork, past_games]
