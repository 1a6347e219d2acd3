"""A player's websocket to the gateway, speaking the protocol's models
(`opolyx_contracts.gateway`): requests get their reply by id, pushes queue up in order.

    token, player_id = await sign_in(base_url, "Ada")
    socket = await GatewaySocket.open(ws_url, token)      # sends hello
    reply = await socket.request(TableWatch(id=socket.next_id(), type="table.watch", table=t))
    push = await socket.next_push(timeout=1.0)            # dict, or None

A socket that closes (the gateway died) fails every request still waiting with
`SocketClosed`; the caller opens a new one and resumes (``table.watch`` with ``since``).
Like the web client, it reads batched frames (``?batch=1``: a command's update and its
reply in one frame) unless opened with ``batched=False``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import Any

import httpx
import websockets
from opolyx_contracts.gateway import BATCH_QUERY, Hello
from pydantic import BaseModel

__all__ = ["GatewaySocket", "SocketClosed", "frame_messages", "sign_in"]


def frame_messages(frame: str | bytes) -> list[dict[str, Any]]:
    """The messages of one frame from the gateway, in order: one, or a batched frame's
    several (the contract's `ServerFrame`)."""
    data = json.loads(frame)
    return [m for m in (data if isinstance(data, list) else [data]) if isinstance(m, dict)]


class SocketClosed(ConnectionError):
    """The socket closed before the reply came: whether the request ran is unknown."""


async def sign_in(base_url: str, name: str) -> tuple[str, str]:
    """A guest session: (token, player id)."""
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as http:
        response = await http.post("/api/session", json={"name": name})
        response.raise_for_status()
        body = response.json()
        return str(body["token"]), str(body["player_id"])


class GatewaySocket:
    _ids = itertools.count(1)

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self.socket = socket
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiting: dict[str | int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(
        cls, url: str, token: str, timeout: float = 5.0, *, batched: bool = True
    ) -> GatewaySocket:
        """Connect and say hello (raises OSError, TimeoutError or SocketClosed when the
        gateway is away or not ready)."""
        if batched:
            url = f"{url}{'&' if '?' in url else '?'}{BATCH_QUERY}"
        try:
            connection = await websockets.connect(url, open_timeout=timeout)
        except websockets.InvalidHandshake as exc:  # e.g. HTTP 503 while it starts
            raise SocketClosed(f"no websocket: {exc}") from exc
        socket = cls(connection)
        try:
            reply = await socket.request(
                Hello(id=socket.next_id(), type="hello", token=token), timeout
            )
        except BaseException:
            await socket.close()
            raise
        if not reply.get("ok"):
            await socket.close()
            raise SocketClosed(f"hello refused: {reply}")
        return socket

    @classmethod
    def next_id(cls) -> int:
        return next(cls._ids)

    @property
    def closed(self) -> bool:
        return self._reader.done()

    async def request(self, message: BaseModel, timeout: float = 10.0) -> dict[str, Any]:
        """Send a client message (a model with an `id`); its reply as a dict."""
        msg_id = getattr(message, "id")  # noqa: B009 - every client message has one
        if self.closed:
            raise SocketClosed("the socket is closed")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        # Read the outcome even when nobody waits any more (a timed-out request).
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._waiting[msg_id] = future
        try:
            await self.socket.send(message.model_dump_json(exclude_none=True))
            return await asyncio.wait_for(future, timeout)
        except websockets.ConnectionClosed as exc:
            raise SocketClosed(str(exc)) from exc
        finally:
            self._waiting.pop(msg_id, None)

    async def next_push(self, timeout: float) -> dict[str, Any] | None:
        """The next push, or None when none came within `timeout` (or the socket closed)."""
        if self.closed and self.pushes.empty():
            return None
        try:
            return await asyncio.wait_for(self.pushes.get(), timeout)
        except TimeoutError:
            return None

    async def _read(self) -> None:
        try:
            async for text in self.socket:
                for message in frame_messages(text):
                    self._take(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(SocketClosed("the socket closed before the reply"))

    def _take(self, message: dict[str, Any]) -> None:
        if message.get("type") != "reply":
            self.pushes.put_nowait(message)
            return
        future = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
        if future is not None and not future.done():
            future.set_result(message)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.socket.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
