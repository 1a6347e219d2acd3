"""The bot worker: answers decision requests taken from a JetStream work queue.

Stateless: each request carries the public state and the seat's legal commands; the
worker picks one with the seat's style (from the roster, by player id) and sends it to
the table as that seat, with the request's command id and expected version.

The table publishes requests on `BOTS_DECIDE`; the work-queue stream `BOTS_DECISIONS`
keeps each one until a worker acks it, and every worker pulls from the one durable
consumer `BOTS_CONSUMER` (STACK.md trap 6), one message per short pull. A hung worker
(SIGSTOP) therefore takes nothing new: at most the one message of its last pull, which
the server hands to another worker after `ack_wait_seconds`. A request is acked once the
table has answered the command (accepted or refused: a refusal is final, e.g. a stale
version), nacked for redelivery when the table did not answer or answered that it did not
run it now (`service/busy`, `table/not_owner`: `errors.RETRY_LATER`), and terminated when
it cannot be used. The table's re-ask timer stays the safety net behind all of this.
"""

from __future__ import annotations

import random
import time
from typing import Any

from faststream.middlewares import AckPolicy
from faststream.nats import ConsumerConfig, JStream, PullSub
from faststream.nats.annotations import NatsMessage
from nats.js.api import AckPolicy as ConsumerAckPolicy
from nats.js.api import DeliverPolicy, RetentionPolicy, StorageType
from opolyx_contracts.envelope import ErrorReply, decode, encode, parse_json_object
from opolyx_contracts.errors import RETRY_LATER, ContractError
from opolyx_contracts.game import parse_command
from opolyx_contracts.lobby import bot_persona
from opolyx_contracts.subjects import (
    BOTS_CONSUMER,
    BOTS_DECIDE,
    BOTS_DECISIONS_STREAM,
    BOTS_QUEUE,
    GAME_FINISHED,
    TABLE_BOT_COMMANDS_ANY,
)
from opolyx_contracts.table import DecisionRequest, GameFinished, TableCommand
from opolyx_rules import RulesError, command_from_json, command_to_json, state_from_json
from opolyx_rules.commands import Command
from opolyx_rules.state import State
from opolyx_service.asyncapi import asyncapi_document
from opolyx_service.broker import create_broker, start_broker
from opolyx_service.logs import get_logger
from opolyx_service.metrics import counter, histogram
from opolyx_service.nats_auth import inbox_prefix
from opolyx_service.runtime import ServiceRuntime, run_service
from opolyx_service.settings import ServiceSettings
from prometheus_client import CollectorRegistry, Histogram
from pydantic import BaseModel, Field

from opolyx_bots.stickers import CHANCE, StickerPoster
from opolyx_bots.strategy import choose
from opolyx_bots.styles import get_style

__all__ = [
    "BotWorker",
    "BotsSettings",
    "decide_for_request",
    "decisions_stream",
    "document",
    "main",
    "serve",
]

log = get_logger("opolyx.bots")


class BotsSection(BaseModel):
    command_timeout_seconds: float = Field(default=1.5, gt=0)
    """How long the worker waits for the table to answer the command it sent; below
    `ack_wait_seconds`, so a slow answer does not also get the request redelivered."""
    ack_wait_seconds: float = Field(default=2.0, gt=0)
    """How long a pulled request stays with a worker that has not acked it (hung, killed)
    before the server gives it to another worker."""
    pull_timeout_seconds: float = Field(default=1.0, gt=0)
    """How long one pull waits for a request; a worker that stops pulling (SIGSTOP) is
    offered nothing once its last pull has expired."""
    max_deliver: int = Field(default=4, ge=1)
    """Deliveries of one request; after that the table's re-ask sends a new one."""
    retry_delay_seconds: float = Field(default=0.2, ge=0)
    """Delay before a request is delivered again whose command went unanswered, or was
    answered `service/busy` or `table/not_owner` (not run: `errors.RETRY_LATER`)."""
    queue_max_age_seconds: float = Field(default=60.0, gt=0)
    """A request older than this is dropped from the queue (its table has asked again)."""
    queue_max_messages: int = Field(default=100_000, gt=0)
    """The queue's bound when no worker is running (oldest dropped first)."""
    sticker_chance: float = Field(default=CHANCE, ge=0, le=1)
    """How often a moment (a good auction, a bankruptcy, the end of a game) gets a bot's
    sticker in the table's chat; 0 turns bot stickers off everywhere."""


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


def decisions_stream(section: BotsSection, replicas: int = 1) -> JStream:
    """The work queue of decision requests: each kept until one worker acks it, bounded in
    age and count (a request nobody took is superseded by the table's re-ask); `replicas`
    is the service's `jetstream.replicas`."""
    return JStream(
        BOTS_DECISIONS_STREAM,
        subjects=[BOTS_DECIDE],
        retention=RetentionPolicy.WORK_QUEUE,
        storage=StorageType.FILE,  # its consumer must outlive a NATS restart
        max_age=section.queue_max_age_seconds,
        max_msgs=section.queue_max_messages,
        max_msg_size=-1,
        num_replicas=replicas,
    )


class BotWorker:
    """The bots' handlers on a FastStream broker (typed: the AsyncAPI document shows them)."""

    def __init__(self, settings: BotsSettings, registry: CollectorRegistry | None = None) -> None:
        self.settings = settings
        registry = registry or CollectorRegistry()
        self.broker = broker = create_broker(settings, registry)
        self.rng = random.Random()
        self.stickers = StickerPoster(
            lambda body, subject, timeout: broker.request(body, subject, timeout=timeout), self.rng
        )
        self.stickers.moments.chance = settings.bots.sticker_chance
        self.decisions = counter(
            registry, "opolyx_bot_decisions", "Decisions sent, by outcome", ("outcome",)
        )
        self.think_seconds = histogram(
            registry,
            "opolyx_bot_think_seconds",
            "Time to pick a command",
            buckets=Histogram.DEFAULT_BUCKETS,
        )
        # Documentation of what the worker sends (the subject is the request's own).
        broker.publisher(
            TABLE_BOT_COMMANDS_ANY,
            schema=TableCommand,
            title=f"{TABLE_BOT_COMMANDS_ANY}:send",
            description="The chosen command, sent to the request's `command_subject` (the "
            "table's bots subject, the only one this role may send commands on) as the "
            "seat's player, with the request's command id and version; the table answers "
            "`CommandAccepted` or an error reply, and takes it only for a bot seat or a "
            "seat on autopilot.",
        )

        section = settings.bots

        @broker.subscriber(
            BOTS_DECIDE,
            stream=decisions_stream(section, settings.jetstream.replicas),
            durable=BOTS_CONSUMER,
            config=ConsumerConfig(
                ack_policy=ConsumerAckPolicy.EXPLICIT,
                ack_wait=section.ack_wait_seconds,
                max_deliver=section.max_deliver,
                deliver_policy=DeliverPolicy.ALL,
            ),
            pull_sub=PullSub(batch_size=1, timeout=section.pull_timeout_seconds),
            # The role may subscribe only under its own inbox (docs/NATS_PERMISSIONS.md).
            inbox_prefix=f"{inbox_prefix(settings.nats)}.".encode(),
            ack_policy=AckPolicy.REJECT_ON_ERROR,
            title=BOTS_DECIDE,
            description="A bot seat must act: one worker pulls the request from the work "
            f"queue `{BOTS_DECISIONS_STREAM}` (durable consumer `{BOTS_CONSUMER}`), picks a "
            "legal command with the seat's style and sends it to the table; acked once the "
            "table answered, redelivered when it did not or answered that it did not run "
            "the command (`service/busy`, `table/not_owner`). A malformed request is refused "
            "by validation and dropped; the table asks again.",
        )
        async def on_decide(request: DecisionRequest, message: NatsMessage) -> None:
            outcome = await self.handle(request)
            if outcome in ("unanswered", "retry"):
                await message.nack(delay=section.retry_delay_seconds)

        @broker.subscriber(
            GAME_FINISHED,
            queue=BOTS_QUEUE,  # one worker per finished game
            # The table publishes it to GAMES: the reply subject is the table's stream ack,
            # which only JetStream answers.
            no_reply=True,
            title=f"{GAME_FINISHED}:bots",
            description="A game ended (heard live, one worker of the queue group per game; "
            "no GAMES consumer: a sticker replayed after an outage is not wanted): now and "
            "then one of its roster bots posts its end-of-game sticker (`stickers.py`).",
        )
        async def on_game_finished(game: GameFinished) -> None:
            self.stickers.game_finished(game)

    async def handle(self, request: DecisionRequest) -> str:
        """Decide and send; returns the outcome (for metrics and tests). Never raises."""
        if bot_persona(request.player_id) is not None:  # not for a human seat on autopilot
            self.stickers.seen(request)  # now and then a sticker in the table's chat
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
        except Exception as exc:  # no responders, timeout, disconnected: the table re-asks
            log.info("command_not_answered", table=request.table_id, error=type(exc).__name__)
            return "unanswered"
        try:
            answer = parse_json_object(reply.body)
            if answer.get("ok") is True:
                return "accepted"
            error = decode(ErrorReply, answer).error
        except ContractError as exc:
            log.warning("command_reply_malformed", table=request.table_id, error=exc.message)
            return "refused"
        if error.code in RETRY_LATER:
            # Nothing ran (an instance at its bound, or a table moving): the same command
            # id again after `retry_delay_seconds`, not a 3 s wait for the table's re-ask.
            return "retry"
        log.info(
            "command_refused",
            table=request.table_id,
            seat=request.seat,
            command=command.get("type"),
            code=error.code,
            error=error.message,
        )
        return "refused"

    async def start(self) -> None:
        """Outside a runtime (tests): wait for NATS and start the handlers."""
        await start_broker(self.broker)

    async def stop(self) -> None:
        await self.broker.stop()


async def serve(runtime: ServiceRuntime) -> None:
    assert isinstance(runtime.settings, BotsSettings)
    worker = BotWorker(runtime.settings, runtime.registry)
    await runtime.start_broker(worker.broker)
    log.info("bots_ready", instance=runtime.instance_id)
    await runtime.wait_for_shutdown()


def document() -> dict[str, Any]:
    """The worker's AsyncAPI document, from its typed handlers."""
    worker = BotWorker(BotsSettings())
    return asyncapi_document(
        worker.broker,
        title="opolyx bots",
        description="Stateless bot workers in the `bots` queue group: each decision request "
        "gets one legal command, sent to the table as the bot seat's player.",
    )


def main() -> None:
    run_service(BotsSettings(), serve)
