"""The bot worker: answers decision requests from the ``bots`` queue group.

Stateless: each request carries the public state and the seat's legal commands; the
worker picks one with the seat's style (from the roster, by player id) and sends it to
the table as that seat, with the request's command id and expected version. If the worker
dies mid-decision the table asks again and another worker answers; a decision for a state
that has moved on is refused by the table (stale version) and simply dropped.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from faststream.nats.annotations import NatsMessage
from opolyx_contracts.envelope import decode, encode
from opolyx_contracts.errors import ContractError
from opolyx_contracts.game import parse_command
from opolyx_contracts.lobby import bot_persona
from opolyx_contracts.subjects import BOTS_DECIDE, BOTS_QUEUE
from opolyx_contracts.table import DecisionRequest, TableCommand
from opolyx_rules import RulesError, command_from_json, command_to_json, state_from_json
from opolyx_rules.commands import Command
from opolyx_rules.state import State
from opolyx_service.broker import create_broker
from opolyx_service.logs import get_logger
from opolyx_service.runtime import ServiceRuntime, run_service
from opolyx_service.settings import ServiceSettings
from prometheus_client import CollectorRegistry, Counter, Histogram
from pydantic import BaseModel, Field

from opolyx_bots.strategy import choose
from opolyx_bots.styles import get_style

__all__ = ["BotWorker", "BotsSettings", "decide_for_request", "main", "serve"]

log = get_logger("opolyx.bots")


class BotsSection(BaseModel):
    command_timeout_seconds: float = Field(default=5.0, gt=0)
    """How long the worker waits for the table to answer the command it sent."""


class BotsSettings(ServiceSettings):
    service_name: str = "bots"
    bots: BotsSection = Field(default_factory=BotsSection)


def decide_for_request(request: DecisionRequest, rng: random.Random) -> Command | None:
    """The command the seat's bot sends for this request (pure; no I/O)."""
    state: State = state_from_json(request.state.model_dump(mode="json"))
    legal = [
        command_from_json({"seat": request.seat, **c.model_dump(mode="json", exclude_none=True)})
        for c in request.legal
    ]
    persona = bot_persona(request.player_id)
    style = get_style(persona.style if persona else None)
    return choose(state, request.seat, legal, style, rng)


class BotWorker:
    def __init__(self, settings: BotsSettings, registry: CollectorRegistry | None = None) -> None:
        self.settings = settings
        registry = registry or CollectorRegistry()
        self.broker = create_broker(settings, registry)
        self.rng = random.Random()
        #: set once the queue subscription is known to the server (readiness)
        self._started = False
        self.decisions = Counter(
            "opolyx_bot_decisions", "Decisions sent, by outcome", ["outcome"], registry=registry
        )
        self.think_seconds = Histogram(
            "opolyx_bot_think_seconds", "Time to pick a command", registry=registry
        )

        @self.broker.subscriber(BOTS_DECIDE, queue=BOTS_QUEUE)
        async def on_decide(message: NatsMessage) -> None:
            await self.handle(message.body)

    @property
    def ready(self) -> bool:
        return self._started and bool(self.broker.connection.is_connected)

    async def handle(self, body: bytes) -> str:
        """Decide and send; returns the outcome (for metrics and tests). Never raises."""
        try:
            request = decode(DecisionRequest, body)
        except ContractError as exc:
            log.warning("decision_request_malformed", code=exc.code, error=exc.message)
            self.decisions.labels("malformed").inc()
            return "malformed"
        started = time.perf_counter()
        try:
            command = decide_for_request(request, self.rng)
        except (RulesError, KeyError, ValueError, TypeError) as exc:
            log.warning("decision_request_unusable", table=request.table_id, error=repr(exc))
            self.decisions.labels("unusable").inc()
            return "unusable"
        self.think_seconds.observe(time.perf_counter() - started)
        if command is None:
            self.decisions.labels("nothing").inc()
            return "nothing"
        outcome = await self._send(request, command_to_json(command))
        self.decisions.labels(outcome).inc()
        return outcome

    async def _send(self, request: DecisionRequest, command: dict[str, Any]) -> str:
        body = TableCommand(
            command_id=request.command_id,
            player_id=request.player_id,
            command=parse_command(command),
            expected_version=request.version,
        )
        try:
            reply = await self.broker.request(
                encode(body),
                request.command_subject,
                timeout=self.settings.bots.command_timeout_seconds,
            )
        except (TimeoutError, Exception) as exc:
            log.info("command_not_answered", table=request.table_id, error=type(exc).__name__)
            return "unanswered"
        answer = await reply.decode()
        if isinstance(answer, dict) and answer.get("ok"):
            return "accepted"
        error = answer.get("error") if isinstance(answer, dict) else None
        log.info(
            "command_refused",
            table=request.table_id,
            seat=request.seat,
            command=command.get("type"),
            error=error,
        )
        return "refused"

    async def start(self) -> None:
        await self.broker.start()
        # the server must know our queue subscription before we report ready
        await asyncio.sleep(0)
        await self.broker.connection.flush()
        await self.broker.connection.flush()
        self._started = True

    async def stop(self) -> None:
        self._started = False
        await self.broker.stop()


async def serve(runtime: ServiceRuntime) -> None:
    assert isinstance(runtime.settings, BotsSettings)
    worker = BotWorker(runtime.settings, runtime.registry)
    # Registered before starting: until start() has finished, the check says "not ready".
    runtime.health.add_readiness_check("nats", lambda: worker.ready)
    await worker.start()
    runtime.on_shutdown(worker.stop)
    log.info("bots_ready", instance=runtime.instance_id)
    await runtime.wait_for_shutdown()


def main() -> None:
    run_service(BotsSettings(), serve)
