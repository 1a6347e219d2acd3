"""The chat process: ``ChatApp(settings)`` wires the behaviour (``service.Chat``) to NATS.

- every chat request subject (`service.REQUEST_SUBJECTS`, queue group ``chat``) through
  plain nats-py: a post is the hot path (one request per message said, at every table),
  and the skeleton's FastStream typed handler costs 1.7x a plain handler's round trip
  (libs/opolyx_service README, `bench/messaging.py`); answered only to reply subjects
  under ``_INBOX.`` (permissions.py: a responder must not be made to publish elsewhere);
- a watch on the lobby's `rooms` bucket (`directory.py`) says who is where;
- the reports endpoint for operators (`operator.py`).
"""

from __future__ import annotations

import asyncio
import contextlib

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from opolyx_contracts.envelope import encode, error_reply
from opolyx_contracts.errors import BUSY
from opolyx_service import flush_in_order
from opolyx_service.logs import get_logger
from opolyx_service.operator import OperatorServer
from opolyx_service.replies import safe_reply_subject
from opolyx_service.runtime import ServiceRuntime, run_service

from opolyx_chat.directory import RoomDirectory
from opolyx_chat.operator import operator_server
from opolyx_chat.service import REQUEST_SUBJECTS, Chat
from opolyx_chat.settings import ChatSettings
from opolyx_chat.store import ChatStore

__all__ = ["QUEUE", "ChatApp", "main", "serve"]

log = get_logger("opolyx.chat")

QUEUE = "chat"
BUSY_REPLY = encode(error_reply(BUSY, "chat is at its limit of requests in flight; retry"))


class ChatApp:
    def __init__(self, settings: ChatSettings) -> None:
        self.settings = settings
        self.section = settings.chat
        self.chat: Chat | None = None
        self.directory: RoomDirectory | None = None
        self.operator: OperatorServer | None = None
        self._subs: list[Subscription] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight = 0
        self._started = False

    @property
    def ready(self) -> bool:
        return self._started

    async def start(self, nc: Client) -> None:
        js = nc.jetstream()
        store = await ChatStore.open(js, self.section, replicas=self.settings.jetstream.replicas)
        self.directory = directory = RoomDirectory(js)
        await directory.start()
        self.chat = chat = Chat(store, directory, self.section)

        async def answer(msg: Msg) -> None:
            try:
                reply = await chat.answer(msg.subject, msg.data)
                if safe_reply_subject(msg) is not None:
                    await msg.respond(reply)
            finally:
                self._in_flight -= 1

        async def on_request(msg: Msg) -> None:
            # nats-py runs one callback at a time per subscription; a post waits for its
            # JetStream ack, so answering in line queued every post behind the one before
            # (p99 1.6 s at 600 posts/s in `bench.py`). Each request gets its own task, up
            # to a bound; past it the request is refused at once (service/busy).
            if self._in_flight >= self.section.max_in_flight:
                if safe_reply_subject(msg) is not None:
                    await msg.respond(BUSY_REPLY)
                return
            self._in_flight += 1
            task = asyncio.create_task(answer(msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        for subject in REQUEST_SUBJECTS:
            self._subs.append(await nc.subscribe(subject, queue=QUEUE, cb=on_request))
        # The server has our subscriptions before we call ourselves ready.
        await flush_in_order(nc)
        if self.section.operator.port >= 0:
            self.operator = operator_server(store, self.section.operator)
            await self.operator.start()
            log.info("operator_endpoint", port=self.operator.port)
        self._started = True

    async def stop(self) -> None:
        self._started = False
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs = []
        if self._tasks:  # let the requests taken finish (each is bounded by NATS timeouts)
            await asyncio.wait(set(self._tasks), timeout=5.0)
        if self.operator is not None:
            await self.operator.stop()
            self.operator = None
        if self.directory is not None:
            await self.directory.stop()
            self.directory = None
        self.chat = None


async def serve(runtime: ServiceRuntime) -> None:
    assert isinstance(runtime.settings, ChatSettings)
    app = ChatApp(runtime.settings)
    # Registered before starting: until start() has finished, the check says "not ready".
    runtime.add_readiness_check("chat", lambda: app.ready)
    nc = await runtime.connect_nats()
    await app.start(nc)
    # Hooks run last-registered first: the app stops before the connection drains.
    runtime.on_shutdown(app.stop)
    log.info("chat_ready", instance=runtime.instance_id)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(ChatSettings(), serve)
