"""What the benchmarks read of the processes they start and of their samples, written once:
a process's CPU time and resident memory, the machine's busy time (Linux `/proc`), and a
percentile of a list of samples."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["cpu_seconds", "machine_busy_seconds", "percentile", "rss_bytes"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far; 0.0 once it is gone (a bench
    that reads a side's processes after a phase may find one already stopped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident memory of process `pid` (`VmRSS`); 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def machine_busy_seconds() -> float:
    """CPU time all cores of the machine have spent busy so far (`/proc/stat`)."""
    ticks = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle and iowait; the rest (guest is inside user) is busy
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def percentile(samples: Sequence[float], q: float) -> float:
    """The sample at rank `q` (0..1) of the sorted samples, no interpolation (`q=0.99`: the
    p99 of 1,000 samples is the 991st smallest); NaN for no samples."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")
