"""The lobby process: ``LobbyApp(settings)`` wires the behaviour (``service.Lobby``) to NATS.

- ``opolyx.lobby.cmd`` (queue group ``lobby``): request-reply, one instance answers each.
- a durable pull consumer on the GAMES stream frees players when their seat goes out or
  their game finishes; shared by every instance, at-least-once (releases are idempotent).
- a background task carries on starts left unfinished (by a crash, or a table service that
  did not answer) and fills rooms that waited with bots; it runs at once on start, so a
  restarted lobby resolves rooms stuck "starting" first thing.
"""

from __future__ import annotations

import asyncio
import contextlib

from faststream.nats.annotations import NatsMessage
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig
from opolyx_contracts.envelope import decode, encode, error_reply
from opolyx_contracts.errors import BAD_REQUEST, INTERNAL, UNAVAILABLE, ContractError
from opolyx_contracts.lobby import MAX_LOBBY_COMMAND_BYTES, LobbyCommand
from opolyx_contracts.subjects import GAMES_STREAM, GAMES_STREAM_SUBJECTS, LOBBY_CMD
from opolyx_service import flush_in_order
from opolyx_service.broker import create_broker
from opolyx_service.connection import create_stream_if_missing
from opolyx_service.logs import get_logger
from opolyx_service.runtime import ServiceRuntime, run_service
from opolyx_service.tasks import cancel_and_wait
from prometheus_client import CollectorRegistry

from opolyx_lobby.errors import LobbyError
from opolyx_lobby.service import Lobby
from opolyx_lobby.settings import LobbySettings
from opolyx_lobby.store import LobbyStore

__all__ = ["LobbyApp", "main", "serve"]

log = get_logger("opolyx.lobby")


class LobbyApp:
    def __init__(self, settings: LobbySettings, registry: CollectorRegistry | None = None) -> None:
        self.settings = settings
        self.registry = registry or CollectorRegistry()
        self.broker = create_broker(settings, self.registry)
        self.lobby: Lobby | None = None
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._games: JetStreamContext.PullSubscription | None = None
        self._store: LobbyStore | None = None
        #: set once the command subscription is known to the server (readiness)
        self._started = False

        @self.broker.subscriber(LOBBY_CMD, queue="lobby")
        async def on_command(message: NatsMessage) -> bytes:
            return await self.answer(message.body)

    @property
    def ready(self) -> bool:
        return self._started and self.broker.connection.is_connected

    async def answer(self, body: bytes) -> bytes:
        """Every request gets a reply: the result or {"code", "message"}; never a crash."""
        try:
            if self.lobby is None:
                raise ContractError(UNAVAILABLE, "the lobby is starting; retry in a moment")
            if len(body) > MAX_LOBBY_COMMAND_BYTES:
                raise ContractError(
                    BAD_REQUEST,
                    f"a lobby command has at most {MAX_LOBBY_COMMAND_BYTES} bytes,"
                    f" this one has {len(body)}",
                )
            cmd = decode(LobbyCommand, body)
            return encode(await self.lobby.handle(cmd))
        except (LobbyError, ContractError) as exc:
            return encode(error_reply(exc.code, exc.message))
        except Exception:
            log.exception("lobby_command_failed")
            return encode(error_reply(INTERNAL, "the lobby failed on this request; try again"))

    async def start(self) -> None:
        await self.broker.connect()
        nc = self.broker.connection
        js = nc.jetstream()
        replicas = self.settings.jetstream.replicas
        store = await LobbyStore.open(js, replicas=replicas)
        await store.index.start()
        self._store = store
        self.lobby = Lobby(nc, store, self.settings.lobby, registry=self.registry)
        # GAMES is the table's; the lobby may start first
        await create_stream_if_missing(js, GAMES_STREAM, [GAMES_STREAM_SUBJECTS], replicas=replicas)
        self._games = games = await js.pull_subscribe(
            GAMES_STREAM_SUBJECTS,
            durable=self.settings.lobby.games_durable,
            stream=GAMES_STREAM,
            config=ConsumerConfig(ack_wait=30, max_deliver=20),
        )
        await self.broker.start()
        # The server has our subscriptions before we call ourselves ready (else an early
        # publish is lost).
        await flush_in_order(nc)
        self._stop.clear()
        self._tasks = [
            asyncio.create_task(self.lobby.run_background(self._stop)),
            asyncio.create_task(self._consume_games(games, self.lobby)),
        ]
        self._started = True

    async def stop(self) -> None:
        self._started = False
        self._stop.set()
        for task in self._tasks:
            await cancel_and_wait(task)
        self._tasks = []
        if self._games is not None:
            # A pull subscription has no callback: messages fetched but not read would
            # keep the connection's drain waiting, so drop it first.
            with contextlib.suppress(Exception):
                await self._games.unsubscribe()
            self._games = None
        await self.broker.stop()
        if self._store is not None:
            await self._store.index.stop()
            self._store = None
        self.lobby = None

    async def _consume_games(self, sub: JetStreamContext.PullSubscription, lobby: Lobby) -> None:
        while not self._stop.is_set():
            try:
                msgs = await sub.fetch(batch=20, timeout=1.0)
            except (NatsTimeoutError, TimeoutError):  # nothing to read within the second
                continue
            except Exception:
                log.exception("games_fetch_failed")
                await asyncio.sleep(1.0)
                continue
            for msg in msgs:
                try:
                    await lobby.on_games_message(msg.subject, msg.data)
                    await msg.ack()
                except Exception:
                    log.exception("freeing_players_failed_will_retry", subject=msg.subject)
                    await msg.nak(delay=1.0)


async def serve(runtime: ServiceRuntime) -> None:
    assert isinstance(runtime.settings, LobbySettings)
    app = LobbyApp(runtime.settings, runtime.registry)
    # Registered before starting: until start() has finished, the check says "not ready".
    runtime.health.add_readiness_check("lobby", lambda: app.ready)
    await app.start()
    runtime.on_shutdown(app.stop)
    log.info("lobby_ready", instance=runtime.instance_id)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(LobbySettings(), serve)
