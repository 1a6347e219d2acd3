"""Value types built on NamedTuple (cheap to create and copy) that still compare by type.

A NamedTuple compares as a plain tuple, so ``Pay(0) == Roll(0)`` and
``Build(0, 5) == Sell(0, 5)`` would hold, and ``Pay(0) in legal_commands(...)`` would be
true whenever ``Roll(0)`` is legal. ``compare_by_type`` makes a value of one type never
equal a value of another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _eq(self: tuple[Any, ...], other: object) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)


def _ne(self: tuple[Any, ...], other: object) -> bool:
    return not _eq(self, other)


def _hash(self: tuple[Any, ...]) -> int:
    return hash((type(self).__name__, *self))


def compare_by_type(classes: Iterable[type[Any]]) -> None:
    for cls in classes:
        setattr(cls, "__eq__", _eq)  # noqa: B010 - assigning a dunder on a class
        setattr(cls, "__ne__", _ne)  # noqa: B010
        setattr(cls, "__hash__", _hash)  # noqa: B010
