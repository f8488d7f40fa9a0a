"""Read and prepare a LittleFS image with littlefs-python, a second implementation of LittleFS.

An image is the simulator's flash file (a Path: LittleFS over the whole file) or, on
native_sim under Twister, the storage partition inside the firmware's flash file
(agent_host.testing.native_sim_device.FlashPartition: its bytes and the geometry the build's
littlefs uses there).
"""

from __future__ import annotations

from typing import Protocol

from agent_host.testing.native_sim_device import FlashPartition, LittleFsGeometry
from littlefs import LittleFS
from littlefs.context import UserContext
from littlefs.errors import LittleFSError

BLOCK_BYTES = 4096  # the geometry the simulator and the Zephyr fstab use
#: The simulator's volume (app/sim; the same as dts/agent-fstab.dtsi on a 4 KiB-page flash).
SIM_GEOMETRY = LittleFsGeometry(block_size=BLOCK_BYTES, read_size=16, prog_size=16,
                                cache_size=64, lookahead_size=32, block_cycles=512)


class Image(Protocol):
    """What holds a volume: its bytes, read and written whole."""

    def read_bytes(self) -> bytes: ...

    def write_bytes(self, data: bytes) -> int: ...


def geometry(image: Image) -> LittleFsGeometry:
    return image.littlefs if isinstance(image, FlashPartition) else SIM_GEOMETRY


def mount(image: Image) -> LittleFS:
    data = bytearray(image.read_bytes())
    g = geometry(image)
    return LittleFS(
        context=UserContext(buffer=data),
        block_size=g.block_size,
        block_count=len(data) // g.block_size,
        read_size=g.read_size,
        prog_size=g.prog_size,
        cache_size=g.cache_size,
        lookahead_size=g.lookahead_size,
        block_cycles=g.block_cycles,
    )


def read_file(image: Image, path: str) -> bytes:
    fs = mount(image)
    with fs.open(path, "rb") as f:
        return bytes(f.read())


def write_files(image: Image, files: dict[str, bytes]) -> None:
    """Create or replace files in a (stopped) device's image, making their directories."""
    fs = mount(image)
    for path, data in files.items():
        parent = path.rpartition("/")[0]
        if parent:
            fs.makedirs(parent, exist_ok=True)
        with fs.open(path, "wb") as f:
            f.write(data)
    fs.unmount()
    image.write_bytes(bytes(fs.context.buffer))


def exists(image: Image, path: str) -> bool:
    """Whether @path exists in the image (file or directory)."""
    try:
        mount(image).stat(path)
    except LittleFSError as err:
        if err.code == LittleFSError.Error.LFS_ERR_NOENT:
            return False
        raise
    return True



#: The first bytes of the simulator's settings file (app/src/port/posix/settings.c).
SIM_SETTINGS_MAGIC = b"AGST"


def zephyr_settings_records(data: bytes) -> list[tuple[str, bytes]]:
    """The records of a settings file written by Zephyr's file backend, oldest first.

    Each record is a 16-bit little-endian length and ``name=value`` of that length
    (subsys/settings/src/settings_line.c with CONFIG_SETTINGS_ENCODE_LEN, write-block size 1
    on a file); an empty value deletes the name. Records are appended, and superseded ones
    stay until the backend compacts the file.
    """
    records = []
    at = 0
    while at + 2 <= len(data):
        size = int.from_bytes(data[at:at + 2], "little")
        if size in (0, 0xFFFF) or at + 2 + size > len(data):
            break
        name, sep, value = data[at + 2:at + 2 + size].partition(b"=")
        if not sep:
            raise ValueError(f"settings record at {at} has no '=': {data[at:at + 2 + size]!r}")
        records.append((name.decode(errors="replace"), value))
        at += 2 + size
    return records
