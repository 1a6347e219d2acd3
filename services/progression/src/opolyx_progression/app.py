"""The progression process: ``ProgressionApp(settings)`` wires the database and NATS.

- the database is migrated (Alembic) before anything else, SQLite or PostgreSQL;
- `opolyx.progression.<query>` (queue group ``progression``): request-reply, answered only
  to reply subjects under ``_INBOX.`` (``opolyx_service.replies.safe_reply_subject``: a
  responder must not be made to publish elsewhere). Plain nats-py rather than FastStream
  handlers: one dispatcher bounds the body size and checks the reply subject for every
  query (a request replying elsewhere is dropped unhandled); counted with
  `runtime.metrics.handled` and documented by `asyncapi.py`;
- a durable pull consumer on GAMES credits finished games (``games.py``);
- an operator HTTP endpoint lists alt-farming flags (``operator.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts.errors import REPLY_NOT_INBOX
from opolyx_service import flush_in_order
from opolyx_service.logs import get_logger
from opolyx_service.metrics import ServiceMetrics
from opolyx_service.operator import OperatorServer
from opolyx_service.replies import safe_reply_subject
from opolyx_service.runtime import ServiceRuntime, run_service
from sqlalchemy.ext.asyncio import AsyncEngine

from opolyx_progression.cards import SeedSource, random_seed
from opolyx_progression.database import open_database
from opolyx_progression.games import GamesConsumer
from opolyx_progression.integrity import FarmingRules
from opolyx_progression.operator import operator_server
from opolyx_progression.queries import Queries
from opolyx_progression.settings import ProgressionSettings
from opolyx_progression.store import CreditStore

__all__ = ["QUEUE", "ProgressionApp", "main", "serve"]

log = get_logger("opolyx.progression")

QUEUE = "progression"


class ProgressionApp:
    def __init__(
        self,
        settings: ProgressionSettings,
        new_seed: SeedSource = random_seed,
        metrics: ServiceMetrics | None = None,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.section = settings.progression
        self.new_seed = new_seed
        self.engine: AsyncEngine | None = None
        self.games: GamesConsumer | None = None
        self.queries: Queries | None = None
        self.operator: OperatorServer | None = None
        self._subs: list[Subscription] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._started = False

    @property
    def ready(self) -> bool:
        return self._started

    async def start(self, nc: Client) -> None:
        self.engine = engine = await open_database(self.section.resolved_database_url())
        farming = FarmingRules(
            min_games=self.section.farming.min_games,
            min_value=self.section.farming.min_value,
            window_games=self.section.farming.window_games,
        )
        store = CreditStore(engine, farming=farming, new_seed=self.new_seed)
        self.queries = queries = Queries(engine, self.section)
        js = nc.jetstream()
        self.games = games = GamesConsumer(
            js,
            engine,
            store,
            self.section,
            on_credited=queries.tops.invalidate,
            replicas=self.settings.jetstream.replicas,
        )
        await games.subscribe()

        async def on_request(msg: Msg) -> None:
            began = time.perf_counter()
            reply_to = safe_reply_subject(msg)
            if msg.reply and reply_to is None:  # dropped unhandled, as the skeleton's handlers
                outcome = REPLY_NOT_INBOX
            else:
                reply, outcome = await queries.answer(msg.subject, msg.data)
                if reply_to is not None:
                    await nc.publish(reply_to, reply)
            if self.metrics is not None:
                self.metrics.handled(msg.subject, outcome, time.perf_counter() - began)

        for subject in queries.subjects:
            self._subs.append(await nc.subscribe(subject, queue=QUEUE, cb=on_request))
        # The server has our subscriptions before we call ourselves ready.
        await flush_in_order(nc)
        if self.section.operator.port >= 0:
            self.operator = operator_server(engine, self.section.operator)
            await self.operator.start()
            log.info("operator_endpoint", port=self.operator.port)
        self._stop.clear()
        self._task = asyncio.create_task(games.run(self._stop))
        self._started = True

    async def stop(self) -> None:
        self._started = False
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 5.0)
            self._task = None
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs = []
        if self.games is not None:
            await self.games.close()
        if self.operator is not None:
            await self.operator.stop()
            self.operator = None
        if self.engine is not None:
            await self.engine.dispose()
            self.engine = None


async def serve(runtime: ServiceRuntime) -> None:
    assert isinstance(runtime.settings, ProgressionSettings)
    app = ProgressionApp(runtime.settings, metrics=runtime.metrics)
    # Registered before starting: until start() has finished, the check says "not ready".
    runtime.add_readiness_check("progression", lambda: app.ready)
    nc = await runtime.connect_nats()
    await app.start(nc)
    # Hooks run last-registered first: the app stops before the connection drains.
    runtime.on_shutdown(app.stop)
    log.info("progression_ready", instance=runtime.instance_id)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(ProgressionSettings(), serve)
