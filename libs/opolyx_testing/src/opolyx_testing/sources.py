"""The project's own Python source, for tests that check a rule across every service (every
error code is served, every metric goes through the named helpers)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["python_sources", "source_roots"]


def source_roots(repo: Path) -> list[Path]:
    """The `src` folder of every library and service of the checkout at `repo`."""
    return [*sorted(repo.glob("libs/*/src")), *sorted(repo.glob("services/*/src"))]


def python_sources(*roots: Path) -> list[Path]:
    """Every `.py` file under these folders, in a stable order."""
    return [path for root in roots for path in sorted(root.rglob("*.py"))]
