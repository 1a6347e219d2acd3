"""The installable app's manifest speaks the page's language: the description is the
catalogue's, `lang` and `dir` say which, and every language the client offers has one."""

from __future__ import annotations

from gateway_builders import RunningGateway
from test_catalogues import catalogue, index


def languages() -> dict[str, dict[str, str]]:
    known: dict[str, dict[str, str]] = index()["languages"]
    return known


def description(code: str) -> str:
    """The page's description in `code`, as the client's loader reads the catalogues."""
    text = catalogue(code)["ui.meta.description"]
    assert isinstance(text, str)
    return text


async def test_each_language_installs_with_its_own_description(gateway: RunningGateway) -> None:
    english = (await gateway.http.get("/manifest.webmanifest")).json()
    seen = set()
    for code, info in languages().items():
        response = await gateway.http.get("/manifest.webmanifest", params={"lang": code})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/manifest+json")
        manifest = response.json()
        assert manifest["lang"] == code
        assert manifest["dir"] == info["dir"]
        assert manifest["description"] == description(code)
        seen.add(manifest["description"])
        # what makes it the same app does not change with the language
        for field in ("id", "name", "start_url", "scope", "display", "icons"):
            assert manifest[field] == english[field], (code, field)
    assert len(seen) == len(languages()), "a language shows another's description"
    assert english["lang"] == "en" and english["description"] == description("en")
    assert (await gateway.http.get("/manifest.webmanifest?lang=ar")).json()["dir"] == "rtl"
    # the English one is part of the installed app's shell (kept for offline starts)
    assert '"/manifest.webmanifest"' in (await gateway.http.get("/sw.js")).text


async def test_an_unknown_language_gets_the_english_manifest(gateway: RunningGateway) -> None:
    english = (await gateway.http.get("/manifest.webmanifest?lang=en")).text
    for lang in ("xx", "", "de-DE", "x" * 300):
        response = await gateway.http.get("/manifest.webmanifest", params={"lang": lang})
        assert response.status_code == 200, lang
        assert response.text == english, lang
