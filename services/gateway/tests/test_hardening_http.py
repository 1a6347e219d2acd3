"""Every HTTP response of the gateway carries the browser protections (a content security
policy without inline script, no framing, no sniffing, no referrer), and the page and its
scripts need nothing the policy forbids."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from client_files import client_scripts
from gateway_builders import RunningGateway
from opolyx_gateway.settings import GatewayOptions

PATHS = [
    ("/", 200),
    ("/index.html", 200),
    ("/app.css", 200),
    ("/js/net.js", 200),
    ("/js/constants.js", 200),
    ("/manifest.webmanifest?lang=ar", 200),
    ("/api/board", 200),
    ("/api/session", 401),  # an error of the API, as JSON
    ("/no/such/page", 404),
    ("/schema/openapi.json", 200),
    ("/readyz", 200),
    ("/metrics", 200),
]


def directives(policy: str) -> dict[str, list[str]]:
    parts = (p.split() for p in policy.split(";") if p.strip())
    return {name: values for name, *values in parts}


@pytest.mark.parametrize(("path", "status"), PATHS)
async def test_every_response_carries_the_security_headers(
    gateway: RunningGateway, path: str, status: int
) -> None:
    response = await gateway.http.get(path)
    assert response.status_code == status, response.text[:200]
    policy = directives(response.headers["content-security-policy"])
    assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]
    assert policy["default-src"] == ["'self'"] and policy["connect-src"] == ["'self'"]
    assert not any("unsafe" in v for values in policy.values() for v in values)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"


HEAD_PATHS = [*PATHS, ("/sw.js", 200), ("/manifest.webmanifest", 200)]
SAME_HEADERS = ("content-type", "cache-control", "content-security-policy")
CHANGING_BODIES = {"/metrics"}
"""Paths whose body may change between the GET and the HEAD (counters move)."""


@pytest.mark.parametrize(("path", "status"), HEAD_PATHS)
async def test_head_answers_as_get_does_without_the_body(
    gateway: RunningGateway, path: str, status: int
) -> None:
    get = await gateway.http.get(path)
    head = await gateway.http.head(path)
    assert (head.status_code, get.status_code) == (status, status), head.headers
    assert head.content == b""
    for name in SAME_HEADERS:
        assert head.headers.get(name) == get.headers.get(name), name
    if path not in CHANGING_BODIES:
        assert head.headers["content-length"] == str(len(get.content))


async def test_a_post_and_its_refusal_carry_them_too(gateway: RunningGateway) -> None:
    for body, status in (({"name": "Valid Name"}, 201), ({"name": "<x>"}, 400)):
        response = await gateway.http.post("/api/session", json=body)
        assert response.status_code == status
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"


class _InlineFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.found.append("inline <script>")
        if tag == "style":
            self.found.append("<style> element")
        self.found += [f"{tag} {n}=" for n in names if n == "style" or n.startswith("on")]
        if tag == "a" and any(v and v.startswith("javascript:") for _, v in attrs):
            self.found.append("javascript: link")


def test_the_page_and_scripts_need_nothing_the_policy_forbids() -> None:
    static = GatewayOptions().static_dir
    for page in static.glob("*.html"):
        finder = _InlineFinder()
        finder.feed(page.read_text())
        assert finder.found == [], page.name
    forbidden = re.compile(
        r"""setAttribute\(\s*["']style["']|\.innerHTML\s*=|\beval\(|new Function\(|"""
        r"""\bstyle\s*:\s*[`"']"""
    )
    for script in client_scripts():
        text = script.read_text()
        assert not forbidden.search(text), f"{script.name}: {forbidden.search(text)}"
