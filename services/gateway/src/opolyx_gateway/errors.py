"""The gateway's one error type: becomes ``{"code", "message"}`` on the wire."""

from __future__ import annotations

__all__ = ["GatewayError"]


class GatewayError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def body(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}
