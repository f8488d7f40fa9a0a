"""scripts/bench_json.py runs and prints its table (numbers are measured, never asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parents[1]


def test_bench_json_quick(sim_exe: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    build_dir = tmp_path_factory.mktemp("bench-json")
    result = subprocess.run(
        [sys.executable, str(REPO_DIR / "scripts" / "bench_json.py"), "--quick",
         "--build-dir", str(build_dir), "--sim-build-dir", str(sim_exe.parent)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| parser")]
    labels = [row[0].strip() for row in rows]
    assert [label.split()[0] for label in labels] == ["json_stream", "json_stream", "cJSON", "jsmn"]
    assert "payload in one chunk" in labels[0] and "64-byte chunks" in labels[1]
    # Every parser read the same corpus, all of it.
    parsed = {int(row[1]) for row in rows}
    assert len(parsed) == 1 and parsed.pop() > 100_000
    for row in rows:
        per_kib, peak, _whole, with_buffer = (cell.strip() for cell in row[2:])
        assert float(per_kib) > 0 and int(peak) > 0
        assert int(with_buffer) >= int(peak)
    # Only the peers need the payload whole in memory.
    assert [row[4].strip() for row in rows] == ["no", "no", "yes", "yes"]
    assert re.search(r"Corpus: \d+ payloads, largest \d+ bytes, each parsed 1 times", result.stdout)
