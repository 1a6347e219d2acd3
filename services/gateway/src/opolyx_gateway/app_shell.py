"""The installable app's service worker, served at ``/sw.js`` with the shell it caches.

The worker's source is ``static/sw.js``; the gateway fills in two things when it starts:
the list of files that make up the app shell (every file of the static directory, the page
itself and what the gateway generates: ``/js/constants.js`` and ``/manifest.webmanifest``),
and the shell's version, a hash of all of them. A deploy that changes any file changes the
version, so the browser sees a new worker, installs it beside the running one and the page
offers to reload (static/js/pwa.js); the old cache is dropped when the new worker takes over.

``/sw.js`` is served with ``Cache-Control: no-cache`` (browsers then check it on every
visit) and ``Service-Worker-Allowed: /`` (its scope is the whole site).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from litestar import Response, get
from litestar.datastructures import State

__all__ = ["ServiceWorker", "service_worker", "service_worker_route"]

SOURCE = "sw.js"
VERSION_MARK = '"__SHELL_VERSION__"'
FILES_MARK = '["__SHELL_FILES__"]'
PAGE_URL = "/"
"""The page (index.html) under the address the app opens at."""
SKIPPED_SUFFIXES = (".map", ".md")


@dataclass(frozen=True)
class ServiceWorker:
    version: str
    urls: tuple[str, ...]
    text: str


def service_worker(static_dir: Path, generated: Mapping[str, str]) -> ServiceWorker:
    """The worker's text for the files now in ``static_dir`` and the gateway's `generated`
    responses (URL -> text) (read once, at start)."""
    digest = hashlib.sha256()
    urls = [PAGE_URL]
    for url, text in sorted(generated.items()):
        digest.update(url.encode() + b"\0" + text.encode() + b"\0")
        urls.append(url)
    for path in sorted(p for p in static_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(static_dir).as_posix()
        if relative == SOURCE or relative.endswith(SKIPPED_SUFFIXES) or "/." in f"/{relative}":
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
        urls.append(f"/{relative}")
    source = (static_dir / SOURCE).read_text(encoding="utf-8")
    digest.update(source.encode())
    version = digest.hexdigest()[:16]
    text = source.replace(VERSION_MARK, json.dumps(version)).replace(
        FILES_MARK, json.dumps(urls, separators=(",", ":"))
    )
    return ServiceWorker(version=version, urls=tuple(urls), text=text)


@get("/sw.js", include_in_schema=False)
async def service_worker_route(state: State) -> Response[str]:
    worker: ServiceWorker = state.service_worker
    return Response(
        worker.text,
        media_type="text/javascript; charset=utf-8",
        headers={
            "Cache-Control": "no-cache",
            "Service-Worker-Allowed": "/",
            "X-Opolyx-Shell-Version": worker.version,
        },
    )
