"""A session cannot be renewed for ever: every renewal carries the sign-in time, no token
of a session outlives `max_session_seconds` from it, and a renewal that would add nothing
is refused with ``auth/session_ended`` (the client then signs in again)."""

from __future__ import annotations

import pytest
from gateway_builders import gateway_settings, serve_gateway
from opolyx_gateway.auth import AuthError, TokenSigner
from opolyx_testing.nats_server import NatsServer

KEYS = {"k1": "first-key-0123456789abcdef"}


def test_renewals_keep_the_sign_in_time_and_stop_at_the_maximum() -> None:
    signer = TokenSigner(KEYS, "k1", ttl_seconds=100, max_session_seconds=250)
    token, first = signer.issue("g-1", "Alice", now=1000)
    assert (first.signed_in_at, first.expires_at) == (1000, 1100)
    renewed_token, renewed = signer.renew(signer.verify(token, now=1090), now=1090)
    assert (renewed.signed_in_at, renewed.expires_at) == (1000, 1190)
    # the next renewal is cut at the session's end, 1000 + 250
    last_token, last = signer.renew(signer.verify(renewed_token, now=1180), now=1180)
    assert (last.signed_in_at, last.expires_at) == (1000, 1250)
    with pytest.raises(AuthError) as info:
        signer.renew(signer.verify(last_token, now=1240), now=1240)
    assert info.value.code == "auth/session_ended"
    with pytest.raises(AuthError) as info:
        signer.verify(last_token, now=1250)
    assert info.value.code in ("auth/expired_token", "auth/session_ended")


def test_a_token_from_before_a_lower_maximum_ends_with_its_session() -> None:
    unlimited = TokenSigner(KEYS, "k1", ttl_seconds=10_000)
    token, _ = unlimited.issue("g-1", "Alice", now=1000)
    assert unlimited.renew(unlimited.verify(token, now=5000), now=5000)[1].signed_in_at == 1000
    limited = TokenSigner(KEYS, "k1", ttl_seconds=10_000, max_session_seconds=3000)
    with pytest.raises(AuthError) as info:
        limited.verify(token, now=4000)
    assert info.value.code == "auth/session_ended"


async def test_renew_over_http_refuses_past_the_maximum_session(nats_server: NatsServer) -> None:
    # A session as long as one token: the sign-in's token already lives to its end.
    settings = gateway_settings(
        nats_server.url_for("gateway"), token_ttl_seconds=60, max_session_seconds=60
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, _ = await gw.sign_in("Renata")
        client = await gw.client(token)
        refused = await gw.http.post("/api/session/renew", headers=_bearer(token))
        assert refused.status_code == 401, refused.text
        assert refused.json()["code"] == "auth/session_ended"
        # the socket keeps the token it has until that expires
        assert (await client.request("ping"))["ok"] is True


async def test_without_a_maximum_renewals_go_on(nats_server: NatsServer) -> None:
    settings = gateway_settings(
        nats_server.url_for("gateway"), token_ttl_seconds=60, max_session_seconds=0
    )
    async with serve_gateway(settings, nats_server.url) as gw:
        token, player = await gw.sign_in("Renata")
        for _ in range(3):
            renewed = await gw.http.post("/api/session/renew", headers=_bearer(token))
            assert renewed.status_code == 200, renewed.text
            token = renewed.json()["token"]
        assert renewed.json()["player_id"] == player


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
