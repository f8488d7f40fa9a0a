"""SHA-256 of the storage tools (app/src/tools/sha256.c) against Python's hashlib.

tests/unit/sha256_dump (built with the simulator, ASan and UBSan) hashes length-prefixed
records from stdin, feeding them to sha256_update() in pieces of a chosen size; hashlib is the
reference. Inputs: random bytes of every length around the block and padding edges, and
larger random blobs from hypothesis.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="session")
def sha256_dump(sim_exe: Path) -> Path:
    exe = sim_exe.parent / "tests" / "unit" / "sha256_dump"
    assert exe.is_file(), f"{exe} was not built (tests/unit/CMakeLists.txt)"
    return exe


def run(exe: Path, blobs: list[bytes], chunk: int | None = None) -> list[str]:
    stdin = b"".join(b"%d\n" % len(blob) + blob for blob in blobs)
    args = [str(exe)] + (["--chunk", str(chunk)] if chunk else [])
    proc = subprocess.run(args, input=stdin, capture_output=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode().split()


@pytest.mark.parametrize("chunk", [None, 1, 3, 63, 64, 65, 4096])
def test_every_length_to_300(sha256_dump: Path, chunk: int | None) -> None:
    rng = random.Random(1805)
    blobs = [rng.randbytes(n) for n in range(301)]
    assert run(sha256_dump, blobs, chunk) == [hashlib.sha256(b).hexdigest() for b in blobs]


@settings(max_examples=30, deadline=None)
@given(blobs=st.lists(st.binary(max_size=20000), min_size=1, max_size=20),
       chunk=st.integers(min_value=1, max_value=5000))
def test_random_blobs(sha256_dump: Path, blobs: list[bytes], chunk: int) -> None:
    assert run(sha256_dump, blobs, chunk) == [hashlib.sha256(b).hexdigest() for b in blobs]


def test_large_blob(sha256_dump: Path) -> None:
    blob = random.Random(7).randbytes(3 * 1024 * 1024 + 17)
    assert run(sha256_dump, [blob], 4093) == [hashlib.sha256(blob).hexdigest()]
