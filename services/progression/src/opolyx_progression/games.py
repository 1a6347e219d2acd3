"""The GAMES consumer: a durable pull consumer shared by every progression instance.

At-least-once delivery plus a crediting transaction that is exactly-once by table id gives
exactly-once credit: a game redelivered (no ack in time, or a crash between the commit and
the ack) finds itself in `credited_games` and is only acknowledged. A message that does not
parse is logged and acknowledged (redelivering it would never help); anything transient
(NATS, the database, the events read) is negatively acknowledged with a delay and retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable

from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig
from opolyx_contracts.envelope import decode
from opolyx_contracts.errors import BAD_REQUEST, ContractError
from opolyx_contracts.subjects import (
    GAME_FINISHED,
    GAME_SEAT_OUT,
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
)
from opolyx_contracts.table import GameFinished, SeatOut
from opolyx_service.connection import create_stream_if_missing
from opolyx_service.logs import get_logger
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression.events import EventsUnavailable, read_game_events
from opolyx_progression.settings import ProgressionSection
from opolyx_progression.social import leave_game
from opolyx_progression.stats import GameStats, game_stats
from opolyx_progression.store import CreditStore

__all__ = ["GamesConsumer"]

log = get_logger("opolyx.progression.games")

MAX_GAMES_MESSAGE_BYTES = 1024 * 1024
"""NATS's own payload limit; a GAMES body is bounded by the table's contract well below it."""


class GamesConsumer:
    def __init__(
        self,
        js: JetStreamContext,
        engine: AsyncEngine,
        store: CreditStore,
        settings: ProgressionSection,
        on_credited: Callable[[], None] | None = None,
        *,
        replicas: int = 1,
    ) -> None:
        self.js = js
        self.replicas = replicas
        """Replicas of GAMES when this consumer has to create it (`jetstream.replicas`)."""
        self.engine = engine
        self.store = store
        self.settings = settings
        self.on_credited = on_credited
        """Called once games' credits are committed (the shared leaderboard top is dropped)."""
        self._sub: JetStreamContext.PullSubscription | None = None
        self.credited = 0
        """Games credited by this process (a redelivery does not count)."""

    async def subscribe(self) -> None:
        # GAMES is the table's; progression may start first
        await create_stream_if_missing(
            self.js, GAMES_STREAM, [GAMES_STREAM_SUBJECTS], replicas=self.replicas
        )
        self._sub = await self.js.pull_subscribe(
            GAMES_STREAM_SUBJECTS,
            durable=self.settings.games_durable,
            stream=GAMES_STREAM,
            config=ConsumerConfig(ack_wait=self.settings.games_ack_wait_seconds, max_deliver=-1),
        )

    async def close(self) -> None:
        if self._sub is not None:
            # Fetched but unread messages would keep the connection's drain waiting.
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def run(self, stop: asyncio.Event) -> None:
        assert self._sub is not None, "subscribe() first"
        while not stop.is_set():
            try:
                msgs = await self._sub.fetch(batch=self.settings.fetch_batch, timeout=1.0)
            except (NatsTimeoutError, TimeoutError):  # nothing to read within the second
                continue
            except Exception:
                log.exception("games_fetch_failed")
                await asyncio.sleep(1.0)
                continue
            await self.process(msgs)

    async def process(self, msgs: list[Msg]) -> None:
        """Apply one fetch: seats out one by one, finished games credited in one transaction,
        then acknowledge (a message that failed is negatively acknowledged, retried later)."""
        done: list[Msg] = []
        games: list[tuple[Msg, GameFinished]] = []
        for msg in msgs:
            try:
                if len(msg.data) > MAX_GAMES_MESSAGE_BYTES:
                    raise ContractError(BAD_REQUEST, f"a GAMES message of {len(msg.data)} bytes")
                if msg.subject == GAME_FINISHED:
                    games.append((msg, decode(GameFinished, msg.data)))
                    continue
                if msg.subject == GAME_SEAT_OUT:
                    out = decode(SeatOut, msg.data)
                    async with self.engine.begin() as conn:
                        await leave_game(conn, out.player_id, out.table_id)
            except ContractError as exc:
                # Redelivering a message that does not parse would never help.
                log.error(
                    "games_message_unreadable_dropped", subject=msg.subject, error=exc.message
                )
            except Exception:
                log.exception("games_message_failed_will_retry", subject=msg.subject)
                await _nak(msg)
                continue
            done.append(msg)
        if games:
            done.extend(await self._credit(games))
        if done:
            self._reached("committed_before_ack")
        for msg in done:
            with contextlib.suppress(Exception):  # unacked: redelivered, and credited once
                await msg.ack()

    async def _credit(self, games: list[tuple[Msg, GameFinished]]) -> list[Msg]:
        """Credit the games (events read first); the messages to acknowledge."""
        credited = await self.store.credited_among([g.table_id for _, g in games])
        ready: list[tuple[Msg, GameFinished, GameStats]] = []
        done: list[Msg] = []
        for msg, finished in games:
            if finished.table_id in credited:
                log.info("game_already_credited", table_id=finished.table_id)
                done.append(msg)
                continue
            try:
                batches = await read_game_events(
                    self.js,
                    finished.table_id,
                    finished.last_seq,
                    self.settings.events_timeout_seconds,
                )
            except EventsUnavailable as exc:
                log.warning("game_events_unavailable_will_retry", error=str(exc))
                await _nak(msg)
                continue
            ready.append((msg, finished, game_stats(batches, winner=finished.winner)))
        if not ready:
            return done
        try:
            outcomes = await self.store.credit_many([(f, s) for _, f, s in ready])
        except Exception:
            log.exception("games_credit_failed_will_retry", games=len(ready))
            for msg, _, _ in ready:
                await _nak(msg)
            return done
        if self.on_credited is not None and any(o is not None for o in outcomes):
            self.on_credited()
        for (msg, finished, _), outcome in zip(ready, outcomes, strict=True):
            done.append(msg)
            if outcome is None:
                log.info("game_already_credited", table_id=finished.table_id)
                continue
            self.credited += 1
            log.info(
                "game_credited",
                table_id=finished.table_id,
                reason=outcome.reason,
                rounds=finished.rounds,
                xp={c.player_id: c.xp for c in outcome.credits},
                flags=[f.kind for f in outcome.flags],
            )
        return done

    def _reached(self, step: str) -> None:
        """Fault injection for crash tests: stop this process dead at a named step."""
        if self.settings.fault_stop_at == step:
            log.warning("fault_stop", step=step, pid=os.getpid())
            os.kill(os.getpid(), signal.SIGSTOP)


async def _nak(msg: Msg) -> None:
    with contextlib.suppress(Exception):
        await msg.nak(delay=2.0)
