"""Write the web client's PNG icons (192, 512 and a maskable 512) from the geometry of
static/icon.svg, with a small PNG writer of its own (zlib only: no imaging library).

    python scripts/make_icons.py          # rewrite static/icons/*.png
    python scripts/make_icons.py --check  # exit 1 when a committed icon differs

The artwork, in the SVG's 64-unit square: a rounded square (corner radius 14) in the brand
green, a yellow diamond through (32,10) (54,32) (32,54) (10,32), a green dot of radius 8
in its middle. The maskable icon fills the whole square (the launcher cuts its own shape)
and keeps the diamond inside the central 80% safe zone. Edges are smoothed by sampling
each pixel 4x4 times.
"""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "services/gateway/src/opolyx_gateway/static/icons"
GREEN = (0x14, 0x53, 0x2D)
YELLOW = (0xF6, 0xD3, 0x2D)
SAMPLES = 4


def _inside_rounded_square(x: float, y: float, radius: float) -> bool:
    if not (0 <= x <= 64 and 0 <= y <= 64):
        return False
    cx = min(max(x, radius), 64 - radius)
    cy = min(max(y, radius), 64 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _colour(x: float, y: float, maskable: bool) -> tuple[int, int, int, int] | None:
    """The artwork's colour at (x, y) in SVG units, or None where it is transparent."""
    if not maskable and not _inside_rounded_square(x, y, 14):
        return None
    # the maskable icon draws the diamond 80% as large, so it sits in the safe zone
    scale = 0.8 if maskable else 1.0
    dx, dy = (x - 32) / scale, (y - 32) / scale
    if dx * dx + dy * dy <= 64:
        return (*GREEN, 255)
    if abs(dx) + abs(dy) <= 22:
        return (*YELLOW, 255)
    return (*GREEN, 255)


def render(size: int, maskable: bool = False) -> bytes:
    """RGBA rows of the icon at `size` x `size` pixels."""
    rows = bytearray()
    step = 64 / size / SAMPLES
    for py in range(size):
        rows.append(0)  # PNG filter type 0 (none) for this row
        for px in range(size):
            r = g = b = a = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    x = (px * SAMPLES + sx + 0.5) * step
                    y = (py * SAMPLES + sy + 0.5) * step
                    colour = _colour(x, y, maskable)
                    if colour is not None:
                        r += colour[0]
                        g += colour[1]
                        b += colour[2]
                        a += colour[3]
            n = SAMPLES * SAMPLES
            covered = a // 255
            if covered:
                rows += bytes((r // covered, g // covered, b // covered, a // n))
            else:
                rows += b"\0\0\0\0"
    return bytes(rows)


def png(size: int, rgba_rows: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rgba_rows, 9))
        + chunk(b"IEND", b"")
    )


TARGETS = {
    "icon-192.png": (192, False),
    "icon-512.png": (512, False),
    "icon-maskable-512.png": (512, True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the files")
    args = parser.parse_args()
    ICONS.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, (size, maskable) in TARGETS.items():
        data = png(size, render(size, maskable))
        path = ICONS / name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.write_bytes(data)
        print(f"wrote {path} ({len(data)} bytes)")
    if stale:
        print("out of date: " + ", ".join(stale) + " (run python scripts/make_icons.py)")
        sys.exit(1)


if __name__ == "__main__":
    main()
