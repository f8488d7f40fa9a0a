"""Provide C sources carried by a pinned PyPI archive, for the host build.

The shared logic of scripts/fetch_littlefs.py and scripts/fetch_zcbor.py. Each describes
its library with a :class:`PypiSource`: where an existing checkout may be (an environment
variable, a west workspace module), the pinned archive (an sdist, read as tar.gz, or a
wheel, read as zip; version and SHA-256), which archive members to take and where they go
(``wanted_member``), and how to tell that a directory holds the sources.

The flow (:func:`fetch`): an existing checkout is used as is; else a destination that
already holds the pinned version (its stamp file) is kept; else the archive is downloaded
with pip (or taken from the command line), its SHA-256 checked, the wanted members
extracted and the stamp written last. :func:`main` is the command line both scripts share:
the directory settled on is printed as the last line of stdout, everything else goes to
stderr.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

# An archive's files: each one's name and how to read it (None: it cannot be read).
_Files = Generator[tuple[str, Callable[[], bytes | None]], None, None]


class FetchError(Exception):
    """The sources could not be provided."""


@dataclass(frozen=True)
class PypiSource:
    """What one fetch script provides and from where.

    Attributes:
        tool: The script's name, prefixed to its log lines (``fetch_littlefs``).
        label: The library's name in messages (``littlefs``).
        description: The command line's description.
        project: The PyPI project (``littlefs-python``).
        version: The pinned version, also written to the stamp file.
        kind: ``sdist`` (a tar.gz, pip ``--no-binary``) or ``wheel`` (a zip, pip
            ``--only-binary``); also the name of the command-line option that passes an
            already downloaded archive.
        archive_name: The file name pip produces for the pinned version.
        sha256: The archive's pinned hex SHA-256.
        stamp_name: The stamp file written below the destination after a full extraction.
        default_dest: The destination when ``--dest`` is not given.
        env_var: The environment variable naming an existing checkout (``LITTLEFS_DIR``).
        env_missing: What an ``env_var`` directory lacks, for its error (``lfs.c``).
        west_module: The checkout below a west workspace's ``modules`` directory.
        has_sources: Whether a directory holds the sources (a checkout or a destination).
        is_complete: Whether an extraction left all that is needed.
        wanted_member: Map an archive member name to its path below the destination, or
            None to skip it.
    """

    tool: str
    label: str
    description: str
    project: str
    version: str
    kind: Literal["sdist", "wheel"]
    archive_name: str
    sha256: str
    stamp_name: str
    default_dest: Path
    env_var: str
    env_missing: str
    west_module: PurePosixPath
    has_sources: Callable[[Path], bool]
    is_complete: Callable[[Path], bool]
    wanted_member: Callable[[str], PurePosixPath | None]

    def log(self, message: str) -> None:
        """Write one line to stderr, prefixed with the script's name."""
        print(f"{self.tool}: {message}", file=sys.stderr)


def existing_checkout(source: PypiSource) -> Path | None:
    """Return a checkout of the sources the environment already provides, if any.

    Returns:
        The directory named by ``source.env_var``, else the west workspace's module
        (``$ZEPHYR_BASE/../modules/<west_module>``) when it holds the sources, else None.

    Raises:
        FetchError: ``source.env_var`` is set but the directory holds no sources; silently
            downloading another copy would hide the mistake.
    """
    env_dir = os.environ.get(source.env_var)
    if env_dir:
        path = Path(env_dir).resolve()
        if not source.has_sources(path):
            raise FetchError(f"{source.env_var}={env_dir} has no {source.env_missing}")
        return path
    zephyr_base = os.environ.get("ZEPHYR_BASE")
    if zephyr_base:
        path = (Path(zephyr_base) / ".." / "modules" / Path(*source.west_module.parts)).resolve()
        if source.has_sources(path):
            return path
    return None


def is_fetched(source: PypiSource, dest: Path) -> bool:
    """Tell whether ``dest`` already holds the pinned sources."""
    stamp = dest / source.stamp_name
    if not source.has_sources(dest) or not stamp.is_file():
        return False
    return stamp.read_text(encoding="utf-8").strip() == source.version


def sha256_of(path: Path) -> str:
    """Return the hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(source: PypiSource, work_dir: Path) -> Path:
    """Download the pinned archive with pip into ``work_dir``.

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
        # Only the pinned project itself: with ":all:" pip would also build the sdist's
        # build requirements (Cython) from source to read its metadata, for many minutes.
        "--only-binary" if source.kind == "wheel" else "--no-binary",
        source.project,
        f"{source.project}=={source.version}",
        "-d",
        str(work_dir),
    ]
    source.log("downloading " + source.archive_name)
    # pip's progress goes to stderr so that stdout keeps only the final path.
    result = subprocess.run(command, stdout=sys.stderr, check=False)
    if result.returncode != 0:
        raise FetchError(
            f"pip download under {sys.executable} failed with exit code {result.returncode}"
        )
    archive = work_dir / source.archive_name
    if not archive.is_file():
        raise FetchError(f"pip did not produce {source.archive_name}")
    return archive


def _tar_files(path: Path) -> _Files:
    """Yield the regular files of a tar.gz: their names and how to read them."""
    with tarfile.open(path, "r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue

            def read(member: tarfile.TarInfo = member) -> bytes | None:
                stream = archive.extractfile(member)
                return None if stream is None else stream.read()

            yield member.name, read


def _zip_files(path: Path) -> _Files:
    """Yield the files of a zip: their names and how to read them."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue

            def read(info: zipfile.ZipInfo = info) -> bytes | None:
                return archive.read(info)

            yield info.filename, read


def extract(source: PypiSource, archive: Path, dest: Path) -> None:
    """Extract the wanted members of ``archive`` into ``dest``, the stamp written last.

    Members are written by the name ``wanted_member`` gives them rather than through
    ``extractall``, so a crafted archive cannot place links or files outside ``dest``.

    Raises:
        FetchError: the archive lacks what ``is_complete`` asks for.
    """
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / source.stamp_name
    stamp.unlink(missing_ok=True)
    count = 0
    files = _zip_files(archive) if source.kind == "wheel" else _tar_files(archive)
    # closing() shuts the archive even when a write fails halfway through.
    with closing(files):
        for name, read in files:
            rel = source.wanted_member(name)
            if rel is None:
                continue
            data = read()
            if data is None:
                continue
            target = dest / Path(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            count += 1
    if not source.is_complete(dest):
        raise FetchError(
            f"{source.archive_name} does not contain the expected {source.label} sources"
        )
    # The stamp marks a complete extraction; an interrupted run leaves none and is redone.
    stamp.write_text(source.version + "\n", encoding="utf-8")
    source.log(f"extracted {count} files into {dest}")


def fetch(source: PypiSource, dest: Path, archive: Path | None) -> Path:
    """Provide the sources and return the directory that holds them.

    Args:
        source: The library to provide.
        dest: Where to extract the sources when no checkout exists.
        archive: An already downloaded archive to use instead of running pip, or None.
    """
    checkout = existing_checkout(source)
    if checkout is not None:
        source.log(f"using existing {source.label} at {checkout}")
        return checkout
    dest = dest.resolve()
    if is_fetched(source, dest):
        return dest
    # Build folders configured at the same time share one destination (the checkout's
    # build/third_party): one of them downloads and extracts, the others wait and reuse it.
    dest.parent.mkdir(parents=True, exist_ok=True)
    with (dest.parent / f".{dest.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_fetched(source, dest):
            return dest
        with tempfile.TemporaryDirectory(prefix=f"{source.tool}_") as tmp:
            path = archive if archive is not None else download(source, Path(tmp))
            actual = sha256_of(path)
            if actual != source.sha256:
                raise FetchError(f"{path}: sha256 {actual}, expected {source.sha256}")
            extract(source, path, dest)
    return dest


def build_parser(source: PypiSource) -> argparse.ArgumentParser:
    """Return the command line of a fetch script: ``--dest`` and ``--sdist``/``--wheel``."""
    parser = argparse.ArgumentParser(description=source.description)
    parser.add_argument(
        "--dest",
        type=Path,
        default=source.default_dest,
        help=f"where to extract the sources (default: {source.default_dest})",
    )
    parser.add_argument(
        f"--{source.kind}",
        dest="archive",
        metavar=source.kind.upper(),
        type=Path,
        default=None,
        help=f"use this already downloaded {source.archive_name} instead of running pip",
    )
    return parser


def main(source: PypiSource, argv: list[str] | None = None) -> int:
    """Command-line entry point of a fetch script.

    Returns:
        0 once the directory is printed as the last line of stdout, 1 on an error (logged).
    """
    args = build_parser(source).parse_args(argv)
    try:
        directory = fetch(source, args.dest, args.archive)
    except (FetchError, OSError, tarfile.TarError, zipfile.BadZipFile) as err:
        source.log(f"error: {err}")
        return 1
    print(directory)
    return 0
