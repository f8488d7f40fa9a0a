"""Read the simulator's flash image with littlefs-python, a second implementation of LittleFS."""

from __future__ import annotations

from pathlib import Path

from littlefs import LittleFS
from littlefs.context import UserContext

BLOCK_BYTES = 4096  # the geometry the simulator and the Zephyr fstab use


def mount(image: Path) -> LittleFS:
    data = bytearray(image.read_bytes())
    return LittleFS(
        context=UserContext(buffer=data),
        block_size=BLOCK_BYTES,
        block_count=len(data) // BLOCK_BYTES,
        read_size=16,
        prog_size=16,
        cache_size=64,
        lookahead_size=32,
        block_cycles=512,
    )


def read_file(image: Path, path: str) -> bytes:
    fs = mount(image)
    with fs.open(path, "rb") as f:
        return bytes(f.read())
