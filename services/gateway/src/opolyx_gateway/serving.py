"""The gateway's ASGI app as the server runs it: the Litestar app with the two wrappers
below it needs (`opolyx-gateway` and the tests serve the same thing).

- `with_channels` (ws.py): websockets talk to the server's own receive and send.
- `head_as_get`: HEAD is answered wherever GET is. Litestar answers HEAD only on routes
  declared for it (its static files are); every other GET route (the page at ``/``,
  ``/sw.js``, ``/js/constants.js``, the manifest, the API, the probes) answered 405, which
  uptime monitors and caches that check a URL with HEAD read as the URL being down.
"""

from __future__ import annotations

from typing import cast

from litestar import Litestar
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from opolyx_gateway.ws import with_channels

__all__ = ["head_as_get", "served"]


def served(app: Litestar) -> ASGIApp:
    return with_channels(head_as_get(app))


def head_as_get(app: ASGIApp) -> ASGIApp:
    """`app` answering a HEAD request as it answers GET, with the same status and headers
    (``content-length`` included: the size a GET's body has) and no body (RFC 9110, 9.3.2)."""

    async def app_with_head(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] != "HEAD":
            await app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # a part of the body: dropped
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app(cast(Scope, {**scope, "method": "GET"}), receive, headers_only)

    return app_with_head
