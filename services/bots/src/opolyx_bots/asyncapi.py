"""The bots' AsyncAPI document, from the worker's typed FastStream handlers (`make docs`)."""

from __future__ import annotations

from opolyx_bots.worker import document

__all__ = ["document"]
