"""Guest identities and signed session tokens.

A token is ``<payload>.<signature>``, both base64url: the payload is JSON
``{"sub", "name", "iat", "exp", "kid", "sia"}`` and the signature is HMAC-SHA256 of the
payload text under the key named by ``kid``. Keys rotate by configuration: sign with the
active key, accept any configured key, drop a key to revoke what it signed.

``sia`` is when the player signed in. A renewal carries it over, so a session (a stolen
token included) cannot be renewed for ever: no token of a session expires later than
``sia`` + the maximum session lifetime, and renewing past it is refused with
``auth/session_ended`` (the client signs in again).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass

from opolyx_contracts.errors import ContractError
from opolyx_contracts.gateway import (
    AUTH_BAD_NAME,
    AUTH_EXPIRED_TOKEN,
    AUTH_INVALID_TOKEN,
    AUTH_SESSION_ENDED,
)

__all__ = [
    "AuthError",
    "Identity",
    "TokenSigner",
    "new_guest_id",
    "validate_display_name",
]

NAME_MIN = 2
NAME_MAX = 20
# Letters and digits of any script, single inner spaces, and a few marks players expect.
_NAME_RE = re.compile(r"^[\w][\w .'\-]*[\w.]$|^\w$", re.UNICODE)


class AuthError(ContractError):
    """A token or name that cannot be accepted; ``code`` is one of `AUTH_ERROR_CODES`."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a token says the player is. The only source of identity in the gateway."""

    player_id: str
    name: str
    expires_at: int
    signed_in_at: int = 0
    """When the player signed in (carried over by every renewal of the session)."""


def validate_display_name(raw: object) -> str:
    """The cleaned display name, or ``AuthError(AUTH_BAD_NAME)`` saying what is wrong."""
    if not isinstance(raw, str):
        raise AuthError(AUTH_BAD_NAME, "the display name must be text")
    name = unicodedata.normalize("NFC", " ".join(raw.split()))
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise AuthError(
            AUTH_BAD_NAME, f"the display name must be {NAME_MIN} to {NAME_MAX} characters long"
        )
    control = any(unicodedata.category(c).startswith("C") for c in name)
    if "_" in name or control or not _NAME_RE.match(name):
        raise AuthError(
            AUTH_BAD_NAME,
            "use letters, digits, spaces and . ' - only, starting with a letter or digit",
        )
    return name


def new_guest_id() -> str:
    """A fresh guest player id, safe as a NATS subject token."""
    return "g-" + secrets.token_hex(8)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _unb64(text: str) -> bytes:
    """Decode canonical unpadded base64url only: one text per byte string. The decoder alone
    accepts padding, stray characters and non-zero trailing bits, so a signature could be
    written many ways (``sig==`` passed as ``sig``); anything `_b64` would not produce is
    refused."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not canonical base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical base64url")
    return data


class TokenSigner:
    def __init__(
        self,
        keys: dict[str, str],
        active_key_id: str,
        ttl_seconds: int,
        max_session_seconds: int | None = None,
    ) -> None:
        if active_key_id not in keys:
            raise ValueError(f"active key {active_key_id!r} is not configured")
        self._keys = {kid: key.encode() for kid, key in keys.items()}
        self._active = active_key_id
        self._ttl = ttl_seconds
        self._max_session = max_session_seconds if max_session_seconds else None

    def issue(self, player_id: str, name: str, *, now: float | None = None) -> tuple[str, Identity]:
        """A token for a new session (a sign-in)."""
        issued = int(time.time() if now is None else now)
        return self._issue(player_id, name, issued, issued)

    def renew(self, identity: Identity, *, now: float | None = None) -> tuple[str, Identity]:
        """A fresh token for the session `identity` belongs to (verified by the caller),
        or ``AuthError(AUTH_SESSION_ENDED)`` once the session has lived its maximum."""
        issued = int(time.time() if now is None else now)
        if self._max_session is not None:
            ends = identity.signed_in_at + self._max_session
            # Past the end, or the token already lives to it: a renewal would add nothing
            # (and a client renewing ever closer to the end would ask again and again).
            if ends <= max(issued, identity.expires_at):
                raise AuthError(AUTH_SESSION_ENDED, "the session has ended; sign in again")
        return self._issue(identity.player_id, identity.name, issued, identity.signed_in_at)

    def _issue(
        self, player_id: str, name: str, issued: int, signed_in: int
    ) -> tuple[str, Identity]:
        expires = issued + self._ttl
        if self._max_session is not None:
            expires = min(expires, signed_in + self._max_session)
        identity = Identity(
            player_id=player_id, name=name, expires_at=expires, signed_in_at=signed_in
        )
        payload = json.dumps(
            {
                "sub": player_id,
                "name": name,
                "iat": issued,
                "exp": identity.expires_at,
                "kid": self._active,
                "sia": signed_in,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        body = _b64(payload)
        sig = hmac.new(self._keys[self._active], body.encode(), hashlib.sha256).digest()
        return f"{body}.{_b64(sig)}", identity

    def verify(self, token: object, *, now: float | None = None) -> Identity:
        """The identity in ``token``; ``AuthError`` if it is malformed, forged or expired."""
        if not isinstance(token, str) or token.count(".") != 1 or len(token) > 2048:
            raise AuthError(AUTH_INVALID_TOKEN, "the session token is malformed; sign in again")
        body, sig_text = token.split(".")
        try:
            payload = json.loads(_unb64(body))
            sig = _unb64(sig_text)
        except (ValueError, UnicodeDecodeError):
            raise AuthError(
                AUTH_INVALID_TOKEN, "the session token is malformed; sign in again"
            ) from None
        if not isinstance(payload, dict):
            raise AuthError(AUTH_INVALID_TOKEN, "the session token is malformed; sign in again")
        key = self._keys.get(str(payload.get("kid")))
        if key is None:
            raise AuthError(
                AUTH_INVALID_TOKEN, "the session token's key is no longer valid; sign in again"
            )
        expected = hmac.new(key, body.encode(), hashlib.sha256).digest()
        # `sig` was decoded from canonical text only, so comparing bytes compares the text
        if len(sig) != len(expected) or not hmac.compare_digest(expected, sig):
            raise AuthError(AUTH_INVALID_TOKEN, "the session token's signature does not match")
        sub, name, exp = payload.get("sub"), payload.get("name"), payload.get("exp")
        if not isinstance(sub, str) or not isinstance(name, str) or not isinstance(exp, int):
            raise AuthError(AUTH_INVALID_TOKEN, "the session token is malformed; sign in again")
        if exp <= (time.time() if now is None else now):
            raise AuthError(AUTH_EXPIRED_TOKEN, "the session token has expired; sign in again")
        # Tokens issued before `sia` existed: their session counts from their own issue.
        signed_in = payload.get("sia", payload.get("iat"))
        if not isinstance(signed_in, int) or isinstance(signed_in, bool):
            raise AuthError(AUTH_INVALID_TOKEN, "the session token is malformed; sign in again")
        if self._max_session is not None and signed_in + self._max_session <= (
            time.time() if now is None else now
        ):
            # A token issued before the maximum was lowered expires with its session.
            raise AuthError(AUTH_SESSION_ENDED, "the session has ended; sign in again")
        return Identity(player_id=sub, name=name, expires_at=exp, signed_in_at=signed_in)
