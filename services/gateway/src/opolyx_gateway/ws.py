"""One websocket per client: authenticate, validate, rate-limit, forward, push.

The first message must be ``hello`` with a session token; every message gets exactly one
reply; an unreadable or refused message gets an error reply and the socket stays open.
The identity sent to the services is the token's, never anything inside a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect
from opolyx_contracts.errors import BAD_REQUEST, MALFORMED_JSON
from opolyx_contracts.gateway import (
    GATEWAY_PROTOCOL,
    ChatPost,
    ChatUnwatch,
    ChatWatch,
    ClientMessage,
    Hello,
    LobbyRequest,
    Ping,
    TableCmd,
    TableUnwatch,
    TableWatch,
    client_message_adapter,
)
from pydantic import ValidationError

from opolyx_gateway.auth import AuthError, Identity
from opolyx_gateway.errors import GatewayError

if TYPE_CHECKING:
    from opolyx_gateway.app import Gateway

__all__ = ["ClientSession", "TokenBucket", "websocket_endpoint"]

log = logging.getLogger("opolyx.gateway.ws")

CLOSE_UNAUTHORIZED = 4401
CLOSE_TOO_SLOW = 4408
CLOSE_FLOODING = 1008


class TokenBucket:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:4]:
        # the first location item is the union tag (the message type): leave it out
        loc = ".".join(str(p) for p in err["loc"][1:])
        parts.append(f"{loc or 'message'}: {err['msg']}")
    return "; ".join(parts)


class ClientSession:
    """A connected websocket, as the hub sees it (a ``Sink``)."""

    def __init__(self, gateway: Gateway, socket: WebSocket[Any, Any, Any]) -> None:
        self.gw = gateway
        self.socket = socket
        self.identity: Identity | None = None
        self.out: asyncio.Queue[str] = asyncio.Queue(gateway.options.send_queue_size)
        self.closing: tuple[int, str] | None = None
        self.close_requested = asyncio.Event()
        self.bucket = TokenBucket(gateway.options.rate_per_second, gateway.options.rate_burst)
        self.refused_in_a_row = 0
        self.tables: set[str] = set()
        self.chat_rooms: set[str] = set()

    # -- Sink ---------------------------------------------------------------
    def push(self, message: dict[str, Any] | str) -> None:
        if self.closing is not None:
            return
        text = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        try:
            self.out.put_nowait(text)
        except asyncio.QueueFull:
            self.close(CLOSE_TOO_SLOW, "too slow to receive updates; reconnect to resume")

    def close(self, code: int, reason: str) -> None:
        if self.closing is None:
            self.closing = (code, reason)
            self.close_requested.set()

    def reply_ok(self, msg_id: object, data: dict[str, Any] | None = None) -> None:
        self.push({"type": "reply", "id": msg_id, "ok": True, "data": data or {}})

    def reply_error(self, msg_id: object, code: str, message: str) -> None:
        self.push(
            {
                "type": "reply",
                "id": msg_id,
                "ok": False,
                "error": {"code": code, "message": message},
            }
        )

    # -- lifecycle ------------------------------------------------------------
    async def run(self) -> None:
        await self.socket.accept()
        self.gw.sessions.add(self)
        sender = asyncio.create_task(self._send_loop())
        receiver = asyncio.create_task(self._receive_loop())
        closer = asyncio.create_task(self.close_requested.wait())
        try:
            await asyncio.wait({sender, receiver, closer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (receiver, closer):
                task.cancel()
            # let queued replies (an auth refusal, say) reach the client before closing
            if not sender.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._drain(), timeout=1.0)
                sender.cancel()
            self.gw.sessions.discard(self)
            self.gw.hub.lobby_sinks.discard(self)
            for table in list(self.tables):
                await self.gw.hub.unwatch(self, table)
            for room in list(self.chat_rooms):
                await self.gw.hub.unwatch_chat(self, room)
            code, reason = self.closing or (1000, "bye")
            with contextlib.suppress(Exception):
                await self.socket.close(code=code, reason=reason)

    async def _drain(self) -> None:
        while not self.out.empty():
            await asyncio.sleep(0.01)

    async def _send_loop(self) -> None:
        while True:
            text = await self.out.get()
            try:
                await self.socket.send_text(text)
            except (WebSocketDisconnect, RuntimeError, OSError):
                return

    async def _receive_loop(self) -> None:
        deadline = time.monotonic() + self.gw.options.auth_timeout_seconds
        while self.closing is None:
            try:
                if self.identity is None:
                    timeout = max(0.0, deadline - time.monotonic())
                    event = await asyncio.wait_for(self.socket.receive(), timeout)
                else:
                    event = await self.socket.receive()
            except TimeoutError:
                self.reply_error(None, "auth/required", "send hello with your session token first")
                self.close(CLOSE_UNAUTHORIZED, "not authenticated")
                return
            except (WebSocketDisconnect, RuntimeError, OSError):
                return
            if event["type"] == "websocket.disconnect":
                return
            text = event.get("text")
            raw = text if isinstance(text, str) else event.get("bytes")
            await self._handle_raw(raw if isinstance(raw, (str, bytes)) else b"")

    # -- messages -------------------------------------------------------------
    async def _handle_raw(self, raw: str | bytes) -> None:
        if not self.bucket.take():
            self.refused_in_a_row += 1
            if self.refused_in_a_row >= self.gw.options.rate_violations_before_close:
                self.close(CLOSE_FLOODING, "too many messages")
                return
            self.reply_error(
                _peek_id(raw),
                "request/rate_limited",
                "too many messages; slow down (the message was not processed)",
            )
            return
        self.refused_in_a_row = 0
        if len(raw) > self.gw.options.max_message_bytes:
            self.reply_error(
                _peek_id(raw),
                BAD_REQUEST,
                f"the message is larger than {self.gw.options.max_message_bytes} bytes",
            )
            return
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            self.reply_error(None, MALFORMED_JSON, "the message is not valid JSON")
            return
        if not isinstance(data, dict):
            self.reply_error(None, MALFORMED_JSON, "the message must be a JSON object")
            return
        msg_id = data.get("id") if isinstance(data.get("id"), (str, int)) else None
        try:
            message: ClientMessage = client_message_adapter.validate_python(data)
        except ValidationError as exc:
            kind = data.get("type")
            if msg_id is None:
                text = 'every message needs an "id" (text or number)'
            elif not isinstance(kind, str) or exc.errors()[0]["type"] == "union_tag_invalid":
                text = f"unknown message type {kind!r}"
            else:
                text = f"invalid {kind}: {_describe(exc)}"
            self.reply_error(msg_id, BAD_REQUEST, text)
            return
        started = time.perf_counter()
        try:
            data_out = await self._dispatch(message)
        except GatewayError as exc:
            self.reply_error(message.id, exc.code, exc.message)
        except AuthError as exc:
            self.reply_error(message.id, exc.code, exc.message)
            if self.identity is None:
                self.close(CLOSE_UNAUTHORIZED, exc.code)
        except Exception:
            log.exception("message %s failed", type(message).__name__)
            self.reply_error(message.id, "internal/error", "the gateway failed; try again")
        else:
            self.reply_ok(message.id, data_out)
        finally:
            self.gw.metrics.observe(message.type, time.perf_counter() - started)

    async def _dispatch(self, message: ClientMessage) -> dict[str, Any]:
        if isinstance(message, Hello):
            return self._hello(message)
        identity = self.identity
        if identity is None:
            raise AuthError("auth/required", "send hello with your session token first")
        hub, upstream = self.gw.hub, self.gw.upstream
        match message:
            case Ping():
                return {"now": time.time()}
            case LobbyRequest():
                return await upstream.lobby(message, identity.player_id, identity.name)
            case TableWatch():
                self.tables.add(message.table)
                try:
                    return await hub.watch(self, message.table, identity.player_id, message.since)
                except BaseException:
                    feed = hub.feeds.get(message.table)
                    if feed is None or self not in feed.watchers:
                        self.tables.discard(message.table)
                    raise
            case TableUnwatch():
                self.tables.discard(message.table)
                await hub.unwatch(self, message.table)
                return {}
            case TableCmd():
                command = dict(message.command)
                command["seat"] = await hub.seat_for_command(
                    message.table, identity.player_id, command
                )
                return await upstream.table_command(
                    message.table, identity.player_id, command, message.expected_version
                )
            case ChatWatch():
                self.chat_rooms.add(message.room)
                await hub.watch_chat(self, message.room)
                return {"room": message.room}
            case ChatUnwatch():
                self.chat_rooms.discard(message.room)
                await hub.unwatch_chat(self, message.room)
                return {}
            case ChatPost():
                return await upstream.chat_post(
                    message.room, identity.player_id, identity.name, message.text
                )
        raise GatewayError(BAD_REQUEST, "unsupported message")  # pragma: no cover

    def _hello(self, message: Hello) -> dict[str, Any]:
        identity = self.gw.signer.verify(message.token)
        if self.identity is not None and self.identity.player_id != identity.player_id:
            raise AuthError("auth/already_signed_in", "this socket already belongs to a player")
        self.identity = identity
        self.gw.hub.lobby_sinks.add(self)
        return {
            "protocol": GATEWAY_PROTOCOL,
            "player": {"id": identity.player_id, "name": identity.name},
            "expires_at": identity.expires_at,
        }


def _peek_id(raw: str | bytes) -> object:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, (str, int)) else None


@websocket("/ws")
async def websocket_endpoint(socket: WebSocket[Any, Any, Any]) -> None:
    gateway: Gateway = socket.app.state.gateway
    await ClientSession(gateway, socket).run()
