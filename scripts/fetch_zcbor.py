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
capture it with ``tail -n 1``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

ZCBOR_VERSION = "0.9.1"
WHEEL_NAME = f"zcbor-{ZCBOR_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "bc8bf4470f235c56d6276f162a5cd5417206335da21648ac2274f6417a18266e"
STAMP_NAME = ".zcbor-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "zcbor"
C_SOURCES = ("zcbor_common.c", "zcbor_decode.c", "zcbor_encode.c")


class FetchError(Exception):
    """The zcbor sources could not be provided."""


def _log(message: str) -> None:
    print(f"fetch_zcbor: {message}", file=sys.stderr)


def has_sources(path: Path) -> bool:
    """Tell whether ``path`` holds zcbor's C library in its ``src``/``include`` layout."""
    return all((path / "src" / name).is_file() for name in C_SOURCES) and (
        path / "include" / "zcbor_common.h"
    ).is_file()


def existing_checkout() -> Path | None:
    """Return a zcbor checkout the environment already provides, if any.

    Raises:
        FetchError: ``ZCBOR_DIR`` is set but holds no zcbor sources.
    """
    env_dir = os.environ.get("ZCBOR_DIR")
    if env_dir:
        path = Path(env_dir).resolve()
        if not has_sources(path):
            raise FetchError(f"ZCBOR_DIR={env_dir} has no src/zcbor_*.c and include/")
        return path
    zephyr_base = os.environ.get("ZEPHYR_BASE")
    if zephyr_base:
        path = (Path(zephyr_base) / ".." / "modules" / "lib" / "zcbor").resolve()
        if has_sources(path):
            return path
    return None


def is_fetched(dest: Path) -> bool:
    """Tell whether ``dest`` already holds the pinned sources."""
    stamp = dest / STAMP_NAME
    if not has_sources(dest) or not stamp.is_file():
        return False
    return stamp.read_text(encoding="utf-8").strip() == ZCBOR_VERSION


def sha256_of(path: Path) -> str:
    """Return the hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_wheel(work_dir: Path) -> Path:
    """Download the pinned wheel with pip into ``work_dir`` and return its path."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        f"zcbor=={ZCBOR_VERSION}",
        "-d",
        str(work_dir),
    ]
    _log("downloading " + WHEEL_NAME)
    result = subprocess.run(command, stdout=sys.stderr, check=False)
    if result.returncode != 0:
        raise FetchError(f"pip download failed with exit code {result.returncode}")
    wheel = work_dir / WHEEL_NAME
    if not wheel.is_file():
        raise FetchError(f"pip did not produce {WHEEL_NAME}")
    return wheel


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


def extract(wheel: Path, dest: Path) -> None:
    """Extract the C library of ``wheel`` into ``dest``, the stamp written last.

    Members are written by name, so a crafted archive cannot place files outside ``dest``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / STAMP_NAME
    stamp.unlink(missing_ok=True)
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            rel = wanted_member(info.filename)
            if rel is None:
                continue
            target = dest / Path(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            count += 1
    if not has_sources(dest):
        raise FetchError(f"{WHEEL_NAME} does not contain the expected zcbor sources")
    stamp.write_text(ZCBOR_VERSION + "\n", encoding="utf-8")
    _log(f"extracted {count} files into {dest}")


def fetch(dest: Path, wheel: Path | None) -> Path:
    """Provide the sources and return the directory that holds them."""
    checkout = existing_checkout()
    if checkout is not None:
        _log(f"using existing zcbor at {checkout}")
        return checkout
    dest = dest.resolve()
    if is_fetched(dest):
        return dest
    with tempfile.TemporaryDirectory(prefix="fetch_zcbor_") as tmp:
        archive = wheel if wheel is not None else download_wheel(Path(tmp))
        actual = sha256_of(archive)
        if actual != WHEEL_SHA256:
            raise FetchError(f"{archive}: sha256 {actual}, expected {WHEEL_SHA256}")
        extract(archive, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description="Provide the zcbor C library sources for the host build."
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        help=f"where to extract the sources (default: {DEFAULT_DEST})",
    )
    parser.add_argument(
        "--wheel",
        type=Path,
        default=None,
        help=f"use this already downloaded {WHEEL_NAME} instead of running pip",
    )
    args = parser.parse_args(argv)
    try:
        directory = fetch(args.dest, args.wheel)
    except (FetchError, OSError, zipfile.BadZipFile) as err:
        _log(f"error: {err}")
        return 1
    print(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
