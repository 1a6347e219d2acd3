"""The benchmarks' measurements, on this process and on a child process."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

from opolyx_testing.measuring import cpu_seconds, machine_busy_seconds, percentile, rss_bytes


def _busy(seconds_of_cpu: float) -> None:
    end = time.process_time() + seconds_of_cpu
    while time.process_time() < end:
        pass


def test_cpu_seconds_counts_this_process_work_as_the_kernel_does() -> None:
    before, own_before = cpu_seconds(os.getpid()), time.process_time()
    _busy(0.3)
    spent, own_spent = cpu_seconds(os.getpid()) - before, time.process_time() - own_before
    # /proc counts user and system time apart, each in whole clock ticks (1/100 s here): a
    # difference of two readings is within a few ticks of the process's own count.
    assert abs(spent - own_spent) <= 3 / os.sysconf("SC_CLK_TCK")


def test_machine_busy_seconds_grow_by_at_least_this_process_work() -> None:
    before = machine_busy_seconds()
    _busy(0.3)
    assert machine_busy_seconds() - before >= 0.3 - 3 / os.sysconf("SC_CLK_TCK")


def _waiting_python(code: str) -> subprocess.Popen[bytes]:
    """A Python process that runs `code`, says so on stdout, then waits until its stdin
    closes; returned once it has said so."""
    process = subprocess.Popen(
        [sys.executable, "-c", f"import sys; {code}; print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    return process


def test_rss_bytes_sees_memory_a_process_touches() -> None:
    # Read once both have finished `code`: polling until the RSS passed 64 MiB read it
    # while the 64 MiB were still being filled (59.8 MB apart under load).
    holding, bare = _waiting_python('b = b"x" * (64 << 20)'), _waiting_python("pass")
    try:
        assert rss_bytes(holding.pid) - rss_bytes(bare.pid) >= 60 << 20
    finally:
        holding.communicate(b"")
        bare.communicate(b"")
    # Gone (and reaped): read as nothing, not an error.
    assert (cpu_seconds(holding.pid), rss_bytes(holding.pid)) == (0.0, 0)


def test_percentile_is_the_sample_at_that_rank() -> None:
    samples = [float(n) for n in range(100, 0, -1)]  # unsorted on purpose
    assert percentile(samples, 0.0) == 1.0
    assert percentile(samples, 0.5) == 51.0
    assert percentile(samples, 0.99) == 100.0
    assert percentile(samples, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    assert math.isnan(percentile([], 0.5))
