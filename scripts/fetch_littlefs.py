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
capture it with ``tail -n 1``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

LITTLEFS_PYTHON_VERSION = "0.19.0"
SDIST_NAME = f"littlefs_python-{LITTLEFS_PYTHON_VERSION}.tar.gz"
SDIST_SHA256 = "4ce8c6eeeb2703abaf8cb60f2dab624b17af42b13df3dbc6c42d4142bad79a59"
STAMP_NAME = ".littlefs-python-version"
REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_DIR / "build" / "third_party" / "littlefs"


class FetchError(Exception):
    """The littlefs sources could not be provided."""


def _log(message: str) -> None:
    print(f"fetch_littlefs: {message}", file=sys.stderr)


def existing_checkout() -> Path | None:
    """Return a littlefs checkout the environment already provides, if any.

    Returns:
        The directory holding ``lfs.c``, or None when neither ``LITTLEFS_DIR`` nor a west
        workspace provides one.

    Raises:
        FetchError: ``LITTLEFS_DIR`` is set but holds no ``lfs.c``; silently downloading
            another copy would hide the mistake.
    """
    env_dir = os.environ.get("LITTLEFS_DIR")
    if env_dir:
        path = Path(env_dir).resolve()
        if not (path / "lfs.c").is_file():
            raise FetchError(f"LITTLEFS_DIR={env_dir} has no lfs.c")
        return path
    zephyr_base = os.environ.get("ZEPHYR_BASE")
    if zephyr_base:
        path = (Path(zephyr_base) / ".." / "modules" / "fs" / "littlefs").resolve()
        if (path / "lfs.c").is_file():
            return path
    return None


def is_fetched(dest: Path) -> bool:
    """Tell whether ``dest`` already holds the pinned sources."""
    stamp = dest / STAMP_NAME
    if not (dest / "lfs.c").is_file() or not stamp.is_file():
        return False
    return stamp.read_text(encoding="utf-8").strip() == LITTLEFS_PYTHON_VERSION


def sha256_of(path: Path) -> str:
    """Return the hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_sdist(work_dir: Path) -> Path:
    """Download the pinned sdist with pip into ``work_dir``.

    Returns:
        The path of the downloaded archive.

    Raises:
        FetchError: pip failed or produced no archive of the expected name.
    """
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"littlefs-python=={LITTLEFS_PYTHON_VERSION}",
        "-d",
        str(work_dir),
    ]
    _log("downloading " + SDIST_NAME)
    # pip's progress goes to stderr so that stdout keeps only the final path.
    result = subprocess.run(command, stdout=sys.stderr, check=False)
    if result.returncode != 0:
        raise FetchError(f"pip download failed with exit code {result.returncode}")
    sdist = work_dir / SDIST_NAME
    if not sdist.is_file():
        raise FetchError(f"pip did not produce {SDIST_NAME}")
    return sdist


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


def extract(sdist: Path, dest: Path) -> None:
    """Extract the littlefs sources of ``sdist`` into ``dest``, the stamp written last.

    Members are written by name through ``extractfile`` rather than ``extractall``, so a
    crafted archive cannot place links or files outside ``dest``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / STAMP_NAME
    stamp.unlink(missing_ok=True)
    count = 0
    with tarfile.open(sdist, "r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            rel = wanted_member(member.name)
            if rel is None:
                continue
            source = archive.extractfile(member)
            if source is None:
                continue
            target = dest / Path(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            count += 1
    if not (dest / "lfs.c").is_file() or not (dest / "bd" / "lfs_emubd.c").is_file():
        raise FetchError(f"{SDIST_NAME} does not contain the expected littlefs sources")
    # The stamp marks a complete extraction; an interrupted run leaves none and is redone.
    stamp.write_text(LITTLEFS_PYTHON_VERSION + "\n", encoding="utf-8")
    _log(f"extracted {count} files into {dest}")


def fetch(dest: Path, sdist: Path | None) -> Path:
    """Provide the sources and return the directory that holds them."""
    checkout = existing_checkout()
    if checkout is not None:
        _log(f"using existing littlefs at {checkout}")
        return checkout
    dest = dest.resolve()
    if is_fetched(dest):
        return dest
    with tempfile.TemporaryDirectory(prefix="fetch_littlefs_") as tmp:
        archive = sdist if sdist is not None else download_sdist(Path(tmp))
        actual = sha256_of(archive)
        if actual != SDIST_SHA256:
            raise FetchError(f"{archive}: sha256 {actual}, expected {SDIST_SHA256}")
        extract(archive, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description="Provide the littlefs C sources for the host build."
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        help=f"where to extract the sources (default: {DEFAULT_DEST})",
    )
    parser.add_argument(
        "--sdist",
        type=Path,
        default=None,
        help=f"use this already downloaded {SDIST_NAME} instead of running pip",
    )
    args = parser.parse_args(argv)
    try:
        directory = fetch(args.dest, args.sdist)
    except (FetchError, OSError, tarfile.TarError) as err:
        _log(f"error: {err}")
        return 1
    print(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
