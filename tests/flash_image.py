"""Read the simulator's flash image with littlefs-python, a second implementation of LittleFS."""

from __future__ import annotations

from pathlib import Path

from littlefs import LittleFS
from littlefs.context import UserContext
from littlefs.errors import LittleFSError

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


def write_files(image: Path, files: dict[str, bytes]) -> None:
    """Create or replace files in a (stopped) simulator's image, making their directories."""
    fs = mount(image)
    for path, data in files.items():
        parent = path.rpartition("/")[0]
        if parent:
            fs.makedirs(parent, exist_ok=True)
        with fs.open(path, "wb") as f:
            f.write(data)
    fs.unmount()
    image.write_bytes(bytes(fs.context.buffer))


def exists(image: Path, path: str) -> bool:
    """Whether @path exists in the image (file or directory)."""
    try:
        mount(image).stat(path)
    except LittleFSError as err:
        if err.code == LittleFSError.Error.LFS_ERR_NOENT:
            return False
        raise
    return True
