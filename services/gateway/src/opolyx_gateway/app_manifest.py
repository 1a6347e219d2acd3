"""The installable app's web manifest, one per language, at ``/manifest.webmanifest``.

A manifest speaks one language, and the one a phone shows while installing the app is
whatever the page linked: the client links ``/manifest.webmanifest?lang=<code>`` for the
language it shows (static/js/i18n.js), so a German page installs with a German description
and an Arabic one with ``"dir": "rtl"``. The description is the catalogue's
``ui.meta.description`` (the page's own ``<meta name="description">``), so it is translated
where every other text is; the name is the brand and stays as it is.

Built once at start from the static directory's catalogues; an unknown or missing ``lang``
gets the English one, as the client falls back to English for a language it lacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from litestar import Response, get
from litestar.datastructures import State
from litestar.params import QueryParameter

__all__ = ["FALLBACK_LANGUAGE", "MANIFEST_PATH", "app_manifest_route", "app_manifests"]

MANIFEST_PATH = "/manifest.webmanifest"
FALLBACK_LANGUAGE = "en"
MEDIA_TYPE = "application/manifest+json"

BASE: dict[str, Any] = {
    "name": "opolyx",
    "short_name": "opolyx",
    # The same app whatever language it was installed in (the link's URL differs).
    "id": "/",
    "start_url": "/",
    "scope": "/",
    "display": "standalone",
    "background_color": "#f3efe4",
    "theme_color": "#14532d",
    "icons": [
        {"src": "/icons/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
        {"src": "/icons/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
        {
            "src": "/icons/icon-maskable-512.png",
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
        {"src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
    ],
}


def app_manifests(static_dir: Path) -> dict[str, str]:
    """Language code -> the manifest's JSON text, for every language the catalogues list."""
    catalogues = static_dir / "i18n"
    index = json.loads((catalogues / "index.json").read_text(encoding="utf-8"))
    manifests: dict[str, str] = {}
    for code, info in index["languages"].items():
        ui = json.loads((catalogues / code / "ui.json").read_text(encoding="utf-8"))
        manifest = {
            **BASE,
            "description": ui["meta"]["description"],
            "lang": code,
            "dir": info["dir"],
        }
        manifests[code] = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    return manifests


@get(MANIFEST_PATH, include_in_schema=False)
async def app_manifest_route(
    state: State, lang: Annotated[str | None, QueryParameter()] = None
) -> Response[str]:
    manifests: dict[str, str] = state.app_manifests
    text = manifests.get(lang or FALLBACK_LANGUAGE) or manifests[FALLBACK_LANGUAGE]
    # Checked on every visit like /sw.js: a deploy's new catalogue reaches installed apps.
    return Response(text, media_type=MEDIA_TYPE, headers={"Cache-Control": "no-cache"})
