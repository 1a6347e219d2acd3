"""Session tokens are accepted in their one canonical spelling only (a signature with
padding, stray or look-alike characters, or other trailing bits is another text)."""

from __future__ import annotations

import pytest
import websockets
from gateway_builders import KEYS, RunningGateway
from opolyx_gateway.auth import AuthError, TokenSigner


def _respelled(token: str) -> list[str]:
    """The same signature bytes written other ways the lenient decoder accepts."""
    body, sig = token.split(".")
    last = sig[-1]
    # 32 bytes are 43 characters: the last one carries 4 bits and 2 unused ones
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    same_bits = alphabet[alphabet.index(last) ^ 1]
    return [
        f"{body}.{sig}==",
        f"{body}.{sig}!!",
        f"{body}.{sig}=",
        f"{body}.{sig[:-1]}{same_bits}",
        f"{body}.{sig[:10]}\n{sig[10:]}",
        f"{body}.{sig.replace('-', '+').replace('_', '/')}"
        if ("-" in sig or "_" in sig)
        else f"{body}.{sig}====",
        f"{body}=.{sig}",
        f"{body}.{sig}A",
    ]


def test_a_signature_in_another_spelling_is_refused() -> None:
    signer = TokenSigner(KEYS, "k1", ttl_seconds=60)
    token, identity = signer.issue("g-1", "Alice", now=1000)
    assert signer.verify(token, now=1010) == identity
    for variant in _respelled(token):
        assert variant != token
        with pytest.raises(AuthError) as info:
            signer.verify(variant, now=1010)
        assert info.value.code == "auth/invalid_token", variant


async def test_a_padded_signature_is_refused_at_hello(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    for variant in (token + "==", token + "!!"):
        client = await gateway.client(hello=False)
        reply = await client.request("hello", token=variant)
        assert reply["ok"] is False and reply["error"]["code"] == "auth/invalid_token"
        with pytest.raises(websockets.ConnectionClosed):
            await client.receive()
    # and over REST
    response = await gateway.http.get(
        "/api/session", headers={"Authorization": f"Bearer {token}=="}
    )
    assert response.status_code == 401
    assert (
        await gateway.http.get("/api/session", headers={"Authorization": f"Bearer {token}"})
    ).status_code == 200
