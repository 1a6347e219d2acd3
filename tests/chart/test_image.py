"""The image recipe without a Docker engine: the Dockerfile's build stage is replayed in a fresh
folder (its COPY lines, honouring .dockerignore; its ENV; its RUN lines, i.e. the install
script) and the environment it produces is checked: every entry point, from the lock file,
not editable, without dev tools. About 10-30 s on a warm uv cache (the packages come from
it; only the workspace's own wheels are built)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from .conftest import CHART, REPO, services_in_repository

DOCKERFILE = REPO / "Dockerfile"
UV = REPO / ".tools" / "bin" / "uv"


@dataclass
class Stage:
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [arg for kw, arg in self.instructions if kw == keyword]


def parse_dockerfile(text: str) -> list[Stage]:
    """The stages of a Dockerfile, each a list of (INSTRUCTION, arguments); continuation
    lines joined, comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, argument = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.search(r"\bAS\s+(\S+)$", argument, re.IGNORECASE)
            stages.append(Stage(match.group(1) if match else str(len(stages))))
        elif stages:
            stages[-1].instructions.append((keyword, argument.strip()))
    return stages


def env_assignments(argument: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in shlex.split(argument))


def ignore_patterns() -> list[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(relative: str, patterns: list[str]) -> bool:
    """Docker's rule for the patterns this repository uses: a path matches a pattern rooted at
    the context, and `**/x` matches x at any depth."""
    parts = relative.split("/")
    for pattern in patterns:
        if pattern.startswith("**/"):
            tail = pattern[3:]
            if any(fnmatch.fnmatch(part, tail) for part in parts):
                return True
        elif fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(parts[0], pattern):
            return True
    return False


def copy_into(sources: list[str], destination: str, workdir: Path) -> None:
    """Docker's COPY: a file lands at the destination (inside it when it ends in "/" or there
    are several sources); a directory's contents land in the destination."""
    patterns = ignore_patterns()
    into_directory = destination.endswith("/") or destination == "." or len(sources) > 1
    target = workdir / destination
    for source in sources:
        path = REPO / source
        assert not ignored(source, patterns), f"COPY {source} is excluded by .dockerignore"
        if path.is_file():
            out = target / path.name if into_directory else target
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, out)
            continue
        for file in path.rglob("*"):
            relative = file.relative_to(REPO).as_posix()
            if file.is_file() and not ignored(relative, patterns):
                out = target / file.relative_to(path)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, out)


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text())


@pytest.fixture(scope="module")
def built(stages: list[Stage], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build stage replayed in a fresh folder; returns the environment it installed."""
    build = stages[0]
    root = tmp_path_factory.mktemp("image")
    venv = root / "opt" / "opolyx"
    env = {**os.environ, "PATH": f"{UV.parent}:{os.environ['PATH']}"}
    workdir = root
    for keyword, argument in build.instructions:
        if keyword == "ENV":
            env.update(env_assignments(argument))
            # Where the image puts it, inside this test's folder; hard links from the uv
            # cache instead of copies only to save time (the same files either way).
            env["UV_PROJECT_ENVIRONMENT"] = str(venv)
            env["UV_LINK_MODE"] = "hardlink"
            if not Path(env.get("PYTHON", "python3")).exists():
                env["PYTHON"] = "python3"
        elif keyword == "WORKDIR":
            workdir = root / argument.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif keyword == "COPY":
            assert not argument.startswith("--from"), "the build stage copies from the repo only"
            *sources, destination = shlex.split(argument)
            copy_into(sources, destination, workdir)
        elif keyword == "RUN":
            command = re.sub(r"--mount=\S+\s*", "", argument).strip()
            if command.startswith("pip install"):
                continue  # installs uv itself; the test uses the repository's pinned uv
            result = subprocess.run(
                command,
                shell=True,
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert result.returncode == 0, f"RUN {command}\n{result.stdout}\n{result.stderr}"
    return venv


def _service_scripts() -> dict[str, str]:
    scripts: dict[str, str] = {}
    for service in services_in_repository():
        pyproject = REPO / "services" / service / "pyproject.toml"
        scripts.update(tomllib.loads(pyproject.read_text())["project"].get("scripts", {}))
    return scripts


def test_the_dockerfile_is_multi_stage_and_runs_as_the_charts_user(
    stages: list[Stage],
) -> None:
    assert [s.name for s in stages] == ["build", "runtime"]
    runtime = stages[1]
    (user,) = runtime.all("USER")
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    uid = values["podSecurityContext"]["runAsUser"]
    assert user == f"{uid}:{values['podSecurityContext']['runAsGroup']}" and uid != 0
    # The runtime stage takes only the installed environment from the build stage.
    (copied,) = runtime.all("COPY")
    build_env = env_assignments(stages[0].all("ENV")[0])
    assert copied == f"--from=build {build_env['UV_PROJECT_ENVIRONMENT']} /opt/opolyx"
    (cmd,) = runtime.all("CMD")
    assert json.loads(cmd)[0] in _service_scripts()


def test_the_install_steps_give_every_entry_point_from_the_lock(built: Path) -> None:
    for script in _service_scripts():
        assert (built / "bin" / script).exists(), f"{script} missing from the image"
    python = built / "bin" / "python"
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib, json, opolyx_table, opolyx_gateway, opolyx_progression;"
            "import opentelemetry.exporter.otlp.proto.http.trace_exporter;"
            "from pathlib import Path;"
            "gateway = Path(opolyx_gateway.__file__).parent;"
            "migrations = Path(opolyx_progression.__file__).parent / 'migrations';"
            "print(json.dumps({'table': opolyx_table.__file__,"
            " 'static': (gateway / 'static' / 'index.html').exists(),"
            " 'migrations': len(list((migrations / 'versions').glob('*.py'))),"
            " 'env_py': (migrations / 'env.py').exists(),"
            " 'testing': importlib.util.find_spec('opolyx_testing') is not None,"
            " 'pytest': importlib.util.find_spec('pytest') is not None}))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd="/",
    )
    found = json.loads(probe.stdout)
    # Installed as wheels inside the environment, not pointing back at the sources.
    assert found["table"].startswith(str(built))
    assert found["static"] and found["env_py"] and found["migrations"] >= 1
    assert not found["testing"] and not found["pytest"]


def test_an_installed_entry_point_runs(built: Path) -> None:
    result = subprocess.run(
        [str(built / "bin" / "opolyx-bots"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    assert "run a bot worker" in result.stdout
