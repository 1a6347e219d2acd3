"""Chat configuration: the shared ``OPOLYX_*`` settings plus ``OPOLYX_CHAT__*``
(e.g. ``OPOLYX_CHAT__BLOCKED_WORDS='["word", "two words"]'``)."""

from __future__ import annotations

from opolyx_contracts.chat import MAX_HISTORY, MAX_TEXT_CHARS
from opolyx_service.operator import OperatorSettings
from opolyx_service.settings import ServiceSettings
from pydantic import BaseModel, Field

__all__ = ["ChatSection", "ChatSettings"]


class ChatSection(BaseModel):
    max_text_chars: int = Field(default=MAX_TEXT_CHARS, ge=1, le=MAX_TEXT_CHARS)
    """Longest text message, in characters."""
    rate_count: int = Field(default=5, ge=1, le=1000)
    """Messages a player may post within `rate_window_seconds` (every channel together)."""
    rate_window_seconds: float = Field(default=10.0, gt=0)
    duplicate_window_seconds: float = Field(default=30.0, ge=0)
    """The same text (or sticker) again in the same channel within this time is refused."""
    blocked_words: list[str] = Field(default_factory=list, max_length=10_000)
    """Words or phrases refused in messages (compared NFKC-normalised and case-folded)."""
    history_limit: int = Field(default=MAX_HISTORY, ge=1, le=MAX_HISTORY)
    """Messages kept per channel in stream CHAT."""
    history_max_age_seconds: float = Field(default=24 * 3600.0, gt=0)
    """Messages older than this leave the history."""
    report_context: int = Field(default=10, ge=0, le=MAX_HISTORY)
    """Messages before a reported one stored with the report."""
    max_in_flight: int = Field(default=512, ge=1, le=100_000)
    """Requests answered at once by one instance; more are refused with service/busy."""
    operator: OperatorSettings = Field(default_factory=OperatorSettings)


class ChatSettings(ServiceSettings):
    service_name: str = "chat"
    chat: ChatSection = Field(default_factory=ChatSection)
