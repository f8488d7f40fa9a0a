#!/usr/bin/env python3
"""Provide the zcbor C library sources for the host build (simulator and unit tests).

The agent's SMP management group encodes and decodes CBOR with zcbor, the library Zephyr's
MCUmgr uses; the host build compiles the same C library. Where a checkout already exists it
is used as is: the ``ZCBOR_DIR`` environment variable, or the zcbor module of a west
workspace (``$ZEPHYR_BASE/../modules/lib/zcbor``). Otherwise the sources come from the
zcbor wheel on PyPI, which carries the C library (``zcbor/src`` and ``zcbor/include``) next
to its code generator. PyPI is used because the machines that build this project reach
package registries only.

The version is the one Zephyr pins: Zephyr's west.yml pins the zcbor module at commit
9164bd18 ("0.9.1" plus two commits); 0.9.1 is the newest zcbor on PyPI and the release that
commit builds on. The wheel is pinned by version and SHA-256, and only the C sources, the
headers and the licence are extracted, into ``src/``, ``include/`` and ``LICENSE``.

The directory settled on is printed as the last line of stdout, so CMake or a shell can
capture it with ``tail -n 1``. The download, check and extraction are scripts/pypi_sources.py.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pypi_sources

ZCBOR_VERSION = "0.9.1"
WHEEL_NAME = f"zcbor-{ZCBOR_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "bc8bf4470f235c56d6276f162a5cd5417206335da21648ac2274f6417a18266e"
STAMP_NAME = ".zcbor-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "zcbor"
C_SOURCES = ("zcbor_common.c", "zcbor_decode.c", "zcbor_encode.c")


def has_sources(path: Path) -> bool:
    """Tell whether ``path`` holds zcbor's C library in its ``src``/``include`` layout."""
    return all((path / "src" / name).is_file() for name in C_SOURCES) and (
        path / "include" / "zcbor_common.h"
    ).is_file()


def wanted_member(name: str) -> PurePosixPath | None:
    """Map a wheel member to its path below the destination, or None to skip it.

    Taken: ``zcbor/src/*.c``, ``zcbor/include/*.h`` and the licence of the dist-info; the
    code generator and its metadata are not needed.
    """
    parts = PurePosixPath(name).parts
    if any(part in ("", ".", "..") for part in parts):
        return None
    if len(parts) == 3 and parts[0] == "zcbor" and parts[1] == "src" and parts[2].endswith(".c"):
        return PurePosixPath("src", parts[2])
    if (
        len(parts) == 3
        and parts[0] == "zcbor"
        and parts[1] == "include"
        and parts[2].endswith(".h")
    ):
        return PurePosixPath("include", parts[2])
    if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "LICENSE":
        return PurePosixPath("LICENSE")
    return None


SOURCE = pypi_sources.PypiSource(
    tool="fetch_zcbor",
    label="zcbor",
    description="Provide the zcbor C library sources for the host build.",
    project="zcbor",
    version=ZCBOR_VERSION,
    kind="wheel",
    archive_name=WHEEL_NAME,
    sha256=WHEEL_SHA256,
    stamp_name=STAMP_NAME,
    default_dest=DEFAULT_DEST,
    env_var="ZCBOR_DIR",
    env_missing="src/zcbor_*.c and include/",
    west_module=PurePosixPath("lib", "zcbor"),
    has_sources=has_sources,
    is_complete=has_sources,
    wanted_member=wanted_member,
)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    return pypi_sources.main(SOURCE, argv)


if __name__ == "__main__":
    sys.exit(main())
