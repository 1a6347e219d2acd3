"""The README's "How to write a service" example, run as written against a real NATS."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import nats
from opolyx_contracts.envelope import ErrorReply, decode
from opolyx_service import ServiceRuntime
from opolyx_service.asyncapi import document_subjects
from opolyx_testing import http_get

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example(tmp_path: Path) -> ModuleType:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks, "the README has no python example"
    path = tmp_path / "greeter_example.py"
    path.write_text(blocks[0])
    spec = importlib.util.spec_from_file_location("greeter_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


async def test_the_readme_service_serves_answers_errors_and_stops(
    tmp_path: Path, nats_url: str
) -> None:
    example = readme_example(tmp_path)
    settings = example.GreeterSettings(
        nats={"url": nats_url}, http={"port": 0}, greeter={"greeting": "welcome"}
    )
    runtime = ServiceRuntime(settings)
    async with runtime:
        serving = asyncio.create_task(runtime.run(example.serve))
        for _ in range(200):
            if runtime.serving:
                break
            await asyncio.sleep(0.02)
        status, body = await http_get(runtime.health.port, "/readyz")
        assert status == 200, body
        assert json.loads(body) == {
            "ready": True,
            "draining": False,
            "checks": {"started": True, "nats": True},
        }
        nc = await nats.connect(nats_url)
        try:
            reply = await nc.request(example.GREET, b'{"v": 1, "name": "Ada"}', timeout=5)
            assert json.loads(reply.data) == {"v": 1, "ok": True, "text": "welcome, Ada"}
            refused = await nc.request(example.GREET, b'{"v": 1, "name": "nobody"}', timeout=5)
            assert decode(ErrorReply, refused.data).error.code == "greeter/nobody"
            invalid = await nc.request(example.GREET, b'{"v": 1, "name": ""}', timeout=5)
            assert decode(ErrorReply, invalid.data).error.code == "request/invalid"
        finally:
            await nc.drain()
        runtime.request_shutdown()
        assert await serving == 0
    document = example.document()
    assert document_subjects(document)["receive"] == {example.GREET}
    assert "Greeting" in document["components"]["schemas"]  # the reply, from the annotation
