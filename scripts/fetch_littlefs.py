#!/usr/bin/env python3
"""Provide the littlefs C sources for the host build (simulator and unit tests).

The host build compiles the real littlefs, not a model of it. Where a checkout already
exists it is used as is: the ``LITTLEFS_DIR`` environment variable, or the littlefs module
of a west workspace (``$ZEPHYR_BASE/../modules/fs/littlefs``). Otherwise the sources come
from the PyPI sdist of littlefs-python, which vendors littlefs (0.19.0 carries littlefs
v2.11). PyPI is used because the machines that build this project reach package
registries only. The sdist is pinned by version and SHA-256, and only the C library, its
block devices and its licence are extracted.

The directory settled on is printed as the last line of stdout, so CMake or a shell can
capture it with ``tail -n 1``. The download, check and extraction are scripts/pypi_sources.py.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pypi_sources

LITTLEFS_PYTHON_VERSION = "0.19.0"
SDIST_NAME = f"littlefs_python-{LITTLEFS_PYTHON_VERSION}.tar.gz"
SDIST_SHA256 = "4ce8c6eeeb2703abaf8cb60f2dab624b17af42b13df3dbc6c42d4142bad79a59"
STAMP_NAME = ".littlefs-python-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "littlefs"


def has_lfs(path: Path) -> bool:
    """Tell whether ``path`` holds littlefs (its ``lfs.c``)."""
    return (path / "lfs.c").is_file()


def is_complete(path: Path) -> bool:
    """Tell whether an extraction left littlefs and its emulated block device."""
    return has_lfs(path) and (path / "bd" / "lfs_emubd.c").is_file()


def wanted_member(name: str) -> PurePosixPath | None:
    """Map an archive member to its path below the destination, or None to skip it.

    Only ``littlefs/lfs*.c|h``, ``littlefs/bd/*`` and ``littlefs/LICENSE.md`` are taken;
    the tests, scripts and Python bindings of the sdist are not needed.
    """
    parts = PurePosixPath(name).parts
    if len(parts) < 3 or parts[1] != "littlefs":
        return None
    rel = PurePosixPath(*parts[2:])
    if any(part in ("", ".", "..") for part in rel.parts):
        return None
    if len(rel.parts) == 1:
        if rel.name == "LICENSE.md":
            return rel
        if rel.name.startswith("lfs") and rel.suffix in (".c", ".h"):
            return rel
        return None
    if len(rel.parts) == 2 and rel.parts[0] == "bd":
        return rel
    return None


SOURCE = pypi_sources.PypiSource(
    tool="fetch_littlefs",
    label="littlefs",
    description="Provide the littlefs C sources for the host build.",
    project="littlefs-python",
    version=LITTLEFS_PYTHON_VERSION,
    kind="sdist",
    archive_name=SDIST_NAME,
    sha256=SDIST_SHA256,
    stamp_name=STAMP_NAME,
    default_dest=DEFAULT_DEST,
    env_var="LITTLEFS_DIR",
    env_missing="lfs.c",
    west_module=PurePosixPath("fs", "littlefs"),
    has_sources=has_lfs,
    is_complete=is_complete,
    wanted_member=wanted_member,
)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    return pypi_sources.main(SOURCE, argv)


if __name__ == "__main__":
    sys.exit(main())
