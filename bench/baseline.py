"""The code as it was before the current round of work, runnable beside today's in one run.

Benchmarks compare new code with the commit before the change, side by side and interleaved
(A B A B). The baseline is checked out once into a git worktree under `.cache/baseline/`, and
its packages run from this same virtual environment: `PYTHONPATH` puts the worktree's
`src` folders before the editable installs of today's code, so only the project's own code
differs between the two sides, never a dependency.

    from baseline import baseline_env
    env = baseline_env()  # environment for a subprocess that imports the old code
    subprocess.run([sys.executable, "-m", "opolyx_table.bench", ...], env=env)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["BASELINE_COMMIT", "baseline_env", "baseline_tree", "current_env"]

BASELINE_COMMIT = "82c6c84"
"""The last commit before the typed contract, thin table shell and faster rules work."""

REPO = Path(__file__).resolve().parent.parent


def baseline_tree(commit: str = BASELINE_COMMIT) -> Path:
    """A checkout of `commit` (made once, reused by later runs)."""
    tree = REPO / ".cache" / "baseline" / commit
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO, check=True)
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--force", str(tree), commit],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
    return tree


def baseline_env(commit: str = BASELINE_COMMIT) -> dict[str, str]:
    """The environment for a subprocess that runs the baseline's code."""
    tree = baseline_tree(commit)
    sources = sorted(str(p) for p in tree.glob("*/*/src") if p.is_dir())
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*sources, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["OPOLYX_BENCH_SIDE"] = f"baseline@{commit}"
    return env


def current_env() -> dict[str, str]:
    """The environment for a subprocess that runs today's code (the same shape as the other)."""
    env = dict(os.environ)
    env["OPOLYX_BENCH_SIDE"] = "current"
    return env
