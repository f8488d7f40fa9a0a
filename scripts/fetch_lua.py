#!/usr/bin/env python3
"""Provide the Lua 5.4 interpreter's C sources for the script runner (issue "Scripting").

The device runs the reference Lua interpreter, not a reimplementation. Where a checkout
already exists it is used as is: the ``LUA_DIR`` environment variable, or a ``lib/lua``
module of a west workspace. Otherwise the sources come from the PyPI sdist of lupa, which
vendors the Lua repository under ``third-party/lua54/`` (lupa 2.8 carries Lua 5.4.8). PyPI
is used because the machines that build this project reach package registries only. The
sdist is pinned by version and SHA-256.

Only the core and the standard libraries are extracted: every ``l*.c`` and ``l*.h`` of
that folder except the stand-alone interpreter (``lua.c``), the one-file build
(``onelua.c``) and the test library (``ltests.c``, ``ltests.h``), which an embedding does
not compile. Lua's licence is the notice at the end of ``lua.h``, which is extracted.

The directory settled on is printed as the last line of stdout, so CMake or a shell can
capture it with ``tail -n 1``. The download, check and extraction are scripts/pypi_sources.py.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pypi_sources

LUPA_VERSION = "2.8"
SDIST_NAME = f"lupa-{LUPA_VERSION}.tar.gz"
SDIST_SHA256 = "d8022641b9ec8ecf2c5ecbe9f47e5a70e0b87c4b5ae921b92cb02a638e0acd08"
STAMP_NAME = ".lupa-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "lua"
#: The files of the Lua folder an embedding does not compile.
LEFT_OUT = frozenset({"lua.c", "onelua.c", "ltests.c", "ltests.h"})


def has_lua(path: Path) -> bool:
    """Tell whether ``path`` holds Lua's core (its ``lapi.c`` and ``lua.h``)."""
    return (path / "lapi.c").is_file() and (path / "lua.h").is_file()


def is_complete(path: Path) -> bool:
    """Tell whether an extraction left the core, the standard libraries and the config."""
    return has_lua(path) and all(
        (path / name).is_file() for name in ("lvm.c", "lstrlib.c", "linit.c", "luaconf.h"))


def wanted_member(name: str) -> PurePosixPath | None:
    """Map an archive member to its path below the destination, or None to skip it.

    Only the files directly in ``<sdist>/third-party/lua54/`` whose names start with ``l``
    and end in ``.c`` or ``.h`` are taken, less LEFT_OUT; the tests, the manual and the
    rest of lupa are not needed.
    """
    parts = PurePosixPath(name).parts
    if len(parts) != 4 or parts[1:3] != ("third-party", "lua54"):
        return None
    base = parts[3]
    if base in LEFT_OUT or not base.startswith("l") or PurePosixPath(base).suffix not in (
            ".c", ".h"):
        return None
    return PurePosixPath(base)


SOURCE = pypi_sources.PypiSource(
    tool="fetch_lua",
    label="Lua",
    description="Provide the Lua 5.4 C sources for the script runner.",
    project="lupa",
    version=LUPA_VERSION,
    kind="sdist",
    archive_name=SDIST_NAME,
    sha256=SDIST_SHA256,
    stamp_name=STAMP_NAME,
    default_dest=DEFAULT_DEST,
    env_var="LUA_DIR",
    env_missing="lapi.c",
    west_module=PurePosixPath("lib", "lua"),
    has_sources=has_lua,
    is_complete=is_complete,
    wanted_member=wanted_member,
)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    return pypi_sources.main(SOURCE, argv)


if __name__ == "__main__":
    sys.exit(main())
