"""Sign-in, tokens, key rotation, and the REST endpoints (against a real nats-server)."""

from __future__ import annotations

import pytest
from gateway_builders import RunningGateway, gateway_settings, serve_gateway
from opolyx_contracts.errors import ErrorBody
from opolyx_gateway.auth import AuthError, TokenSigner, validate_display_name


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("Alice", "Alice"), ("  Zoë  Ng ", "Zoë Ng"), ("d'Artagnan", "d'Artagnan"), ("محمد", "محمد")],
)
def test_valid_display_names_are_cleaned(raw: str, clean: str) -> None:
    assert validate_display_name(raw) == clean


@pytest.mark.parametrize(
    "raw", ["A", "x" * 21, "<script>", "bob\x00", "__init__", "-dash", "tab\tname\u200b", 42]
)
def test_bad_display_names_are_refused(raw: object) -> None:
    with pytest.raises(AuthError) as info:
        validate_display_name(raw)
    assert info.value.code == "auth/bad_name"


def test_tampered_and_expired_tokens_are_refused() -> None:
    signer = TokenSigner({"k1": "first-key-0123456789abcdef"}, "k1", ttl_seconds=60)
    token, identity = signer.issue("g-1", "Alice", now=1000)
    assert signer.verify(token, now=1010) == identity
    body, sig = token.split(".")
    forged_body = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    for bad in (f"{forged_body}.{sig}", f"{body}.{sig[:-1]}x", "nonsense", "", f"{body}."):
        with pytest.raises(AuthError) as info:
            signer.verify(bad, now=1010)
        assert info.value.code == "auth/invalid_token", bad
    with pytest.raises(AuthError) as info:
        signer.verify(token, now=1061)
    assert info.value.code == "auth/expired_token"


def test_rotation_accepts_old_key_until_it_is_removed() -> None:
    old = TokenSigner({"k1": "first-key-0123456789abcdef"}, "k1", ttl_seconds=60)
    token, _ = old.issue("g-1", "Alice")
    rotated = TokenSigner(
        {"k2": "second-key-0123456789abcdef", "k1": "first-key-0123456789abcdef"}, "k2", 60
    )
    assert rotated.verify(token).player_id == "g-1"
    new_token, _ = rotated.issue("g-2", "Bob")
    assert new_token != token and rotated.verify(new_token).player_id == "g-2"
    retired = TokenSigner({"k2": "second-key-0123456789abcdef"}, "k2", 60)
    with pytest.raises(AuthError):
        retired.verify(token)
    assert retired.verify(new_token).name == "Bob"
    # the same key id with another secret is a forgery, not a rotation
    impostor = TokenSigner({"k2": "someone-elses-key-0123456789"}, "k2", 60)
    with pytest.raises(AuthError):
        impostor.verify(new_token)


async def test_sign_in_returns_a_token_that_authenticates_rest(gateway: RunningGateway) -> None:
    token, player_id = await gateway.sign_in("  Zoë ")
    me = await gateway.http.get("/api/session", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.json()["player_id"] == player_id and me.json()["name"] == "Zoë"


async def test_sign_in_refuses_a_bad_name_with_a_clear_error(gateway: RunningGateway) -> None:
    response = await gateway.http.post("/api/session", json={"name": "<b>x</b>"})
    assert response.status_code == 400
    body = ErrorBody.model_validate(response.json())  # the contract's one error shape
    assert body.code == "auth/bad_name" and "letters" in body.message


async def test_rest_without_or_with_a_forged_token_is_refused(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    assert (await gateway.http.get("/api/rooms")).status_code == 401
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    response = await gateway.http.get("/api/rooms", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401
    assert response.json()["code"] == "auth/invalid_token"


async def test_rooms_come_from_the_lobby_for_the_tokens_player(
    gateway: RunningGateway, lobby: object
) -> None:
    token, player_id = await gateway.sign_in("Carol")
    response = await gateway.http.get("/api/rooms", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    assert response.json()["rooms"] == []
    assert lobby.received[-1]["player_id"] == player_id  # type: ignore[attr-defined]


async def test_rooms_without_a_lobby_is_a_503_not_a_crash(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in()
    response = await gateway.http.get("/api/rooms", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 503
    assert response.json()["code"] == "service/unavailable"


async def test_profile_names_a_player_who_signed_in(gateway: RunningGateway) -> None:
    token, _ = await gateway.sign_in("Dora")
    _, other = await gateway.sign_in("Ezra")
    auth = {"Authorization": f"Bearer {token}"}
    profile = await gateway.http.get(f"/api/players/{other}", headers=auth)
    assert profile.status_code == 200
    assert profile.json()["name"] == "Ezra"
    missing = await gateway.http.get("/api/players/g-nobody", headers=auth)
    assert missing.status_code == 404 and missing.json()["code"] == "player/not_found"


async def test_health_readiness_and_openapi(gateway: RunningGateway) -> None:
    assert (await gateway.http.get("/livez")).json() == {"status": "alive"}
    assert (await gateway.http.get("/readyz")).status_code == 200
    schema = (await gateway.http.get("/schema/openapi.json")).json()
    for path in ("/api/session", "/api/rooms", "/api/players/{player_id}", "/readyz"):
        assert path in schema["paths"], path
    board = (await gateway.http.get("/api/board")).json()
    assert len(board["squares"]) == 40 and board["squares"][39]["price"] == 4000


async def test_gateway_with_rotated_keys_accepts_tokens_of_the_old_key(nats_url: str) -> None:
    async with serve_gateway(gateway_settings(nats_url)) as first:
        token, player_id = await first.sign_in()
    rotated = gateway_settings(nats_url)
    rotated.gateway.signing_keys = {
        "k2": "second-key-0123456789abcdef",
        **rotated.gateway.signing_keys,
    }
    rotated.gateway.active_key_id = "k2"
    async with serve_gateway(rotated) as second:
        me = await second.http.get("/api/session", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["player_id"] == player_id


async def test_sign_ins_from_one_address_are_rate_limited(nats_url: str) -> None:
    async with serve_gateway(gateway_settings(nats_url, sign_ins_per_minute=2)) as gw:
        await gw.sign_in("One")
        await gw.sign_in("Two")
        response = await gw.http.post("/api/session", json={"name": "Three"})
        assert response.status_code == 429
        assert response.json()["code"] == "request/rate_limited"
