import sys
from pathlib import Path

import pytest
from opolyx_testing import ServiceProcess


async def test_a_process_that_dies_at_start_reports_its_output(tmp_path: Path) -> None:
    process = ServiceProcess(
        [sys.executable, "-c", "print('boom at start'); raise SystemExit(3)"],
        env={},
        log_dir=tmp_path,
        name="dies",
    ).start()
    with pytest.raises(RuntimeError, match="boom at start"):
        await process.wait_ready(timeout=10)


async def test_kill_stops_a_running_process(tmp_path: Path) -> None:
    process = ServiceProcess(
        [sys.executable, "-c", "import time; time.sleep(60)"], env={}, log_dir=tmp_path
    ).start()
    assert process.running
    process.kill()
    assert not process.running
