"""The stream-path benchmark runs and reports (a measurement, not a timed test)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_stream_quick(tmp_path: Path) -> None:
    build = REPO / "build" / "bench"
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_stream.py"), "--quick", "--reps", "1",
         "--build-dir", str(build)], capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [x for x in result.stdout.splitlines() if x.startswith("| ") and "---" not in x]
    assert len(rows) == 4  # header, two fixtures, the 1 MiB event
    peaks = {int(x.rsplit("|", 2)[1]) for x in rows[1:]}
    # The 1 MiB event passes with no more stream memory than the small streams need.
    assert len(peaks) == 1
    assert re.search(r"fixture corpus: \d+ bytes, \d+ instructions per KiB", result.stdout)
