"""Where the web client's files are, for the tests that read the client's source (texts,
codes, constants, the content security policy): one spelling of the paths."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "src" / "opolyx_gateway" / "static"
STATIC_JS = STATIC / "js"
I18N = STATIC / "i18n"


def client_scripts() -> list[Path]:
    """Every JavaScript module of the client, in a stable order (never empty)."""
    scripts = sorted(STATIC_JS.rglob("*.js"))
    assert scripts, f"no client scripts under {STATIC_JS}"
    return scripts
