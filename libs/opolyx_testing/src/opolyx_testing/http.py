"""A minimal HTTP GET for probes and metrics of a service on a loopback port.

No HTTP client library: the health endpoint speaks HTTP/1.1 with `Connection: close`, and
a test must see exactly what a kubelet would (status line and body).
"""

from __future__ import annotations

import asyncio

__all__ = ["http_get", "metric_value"]


async def http_get(port: int, path: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """GET `path` on 127.0.0.1:`port`: (status, body). Raises OSError when nothing listens."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        # Connection: close, so the body ends where the stream does (uvicorn keeps alive).
        request = f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def metric_value(text: str, name: str, labels: str = "") -> float | None:
    """One sample of a Prometheus text page; `labels` as written, e.g. 'outcome="failed"'."""
    wanted = f"{name}{{{labels}}}" if labels else name
    for line in text.splitlines():
        sample, _, value = line.rpartition(" ")
        if sample == wanted:
            return float(value)
    return None
