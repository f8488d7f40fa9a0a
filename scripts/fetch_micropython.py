#!/usr/bin/env python3
"""Provide MicroPython's core C sources for the script runner (issue "Scripting").

The device runs MicroPython's own virtual machine and compiler, embedded through a small port
of this project (config header, HAL, qstr generation at build time). Where a checkout already
exists it is used as is: the ``MICROPYTHON_DIR`` environment variable, or a
``lib/micropython`` module of a west workspace. Otherwise the sources come from the PyPI sdist
of mpy-cross-v6-3, which carries MicroPython 1.23.0's ``py/`` and ``shared/`` folders under
``micropython/`` (the cross compiler is built from them). PyPI is used because the machines
that build this project reach package registries only. The sdist is pinned by version and
SHA-256.

Extracted, keeping their paths (the sources include each other as ``py/...``): all of
``py/`` (the core, its headers, and the generators ``makeqstrdefs.py``, ``makeqstrdata.py``,
``makeversionhdr.py``, ``makemoduledefs.py`` and ``make_root_pointers.py`` the build runs),
``shared/runtime/``, ``shared/readline/``, ``shared/timeutils/`` and
``extmod/modplatform.h``. MicroPython's licence (MIT) is the notice at the top of each file.

The directory settled on is printed as the last line of stdout, so CMake or a shell can
capture it with ``tail -n 1``. The download, check and extraction are scripts/pypi_sources.py.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pypi_sources

MPY_CROSS_VERSION = "1.1.1"
SDIST_NAME = f"mpy_cross_v6_3-{MPY_CROSS_VERSION}.tar.gz"
SDIST_SHA256 = "55414c358f5844c784e76d3b253cbd7af5f243ddd4c0b47a26d3875d628df300"
STAMP_NAME = ".mpy-cross-v6-3-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "micropython"
#: The folders of ``shared/`` an embedding may use; the rest (USB, networking, ...) is left.
SHARED_TAKEN = frozenset({"runtime", "readline", "timeutils"})


def has_micropython(path: Path) -> bool:
    """Tell whether ``path`` holds MicroPython's core (``py/vm.c`` and ``py/mpconfig.h``)."""
    return (path / "py" / "vm.c").is_file() and (path / "py" / "mpconfig.h").is_file()


def is_complete(path: Path) -> bool:
    """Tell whether an extraction left the core, its generators and the runtime helpers."""
    return has_micropython(path) and all((path / name).is_file() for name in (
        "py/makeqstrdefs.py", "py/makeqstrdata.py", "py/makeversionhdr.py",
        "shared/runtime/pyexec.c", "extmod/modplatform.h"))


def wanted_member(name: str) -> PurePosixPath | None:
    """Map an archive member to its path below the destination, or None to skip it.

    Files of ``<sdist>/micropython/py/``, of the SHARED_TAKEN folders of
    ``<sdist>/micropython/shared/`` and ``<sdist>/micropython/extmod/modplatform.h`` are
    taken with their path below ``micropython/``; nothing else.
    """
    parts = PurePosixPath(name).parts
    if len(parts) < 4 or parts[1] != "micropython":
        return None
    rel = PurePosixPath(*parts[2:])
    if any(part in ("", ".", "..") for part in rel.parts):
        return None
    if rel.parts[0] == "py" and len(rel.parts) == 2:
        return rel
    if rel.parts[0] == "shared" and len(rel.parts) == 3 and rel.parts[1] in SHARED_TAKEN:
        return rel
    if rel == PurePosixPath("extmod", "modplatform.h"):
        return rel
    return None


SOURCE = pypi_sources.PypiSource(
    tool="fetch_micropython",
    label="MicroPython",
    description="Provide MicroPython's core C sources for the script runner.",
    project="mpy-cross-v6-3",
    version=MPY_CROSS_VERSION,
    kind="sdist",
    archive_name=SDIST_NAME,
    sha256=SDIST_SHA256,
    stamp_name=STAMP_NAME,
    default_dest=DEFAULT_DEST,
    env_var="MICROPYTHON_DIR",
    env_missing="py/vm.c",
    west_module=PurePosixPath("lib", "micropython"),
    has_sources=has_micropython,
    is_complete=is_complete,
    wanted_member=wanted_member,
)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    return pypi_sources.main(SOURCE, argv)


if __name__ == "__main__":
    sys.exit(main())
