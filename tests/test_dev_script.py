"""./dev, the README's entry point: a selected test run and the usage error.

The full run (every stage) is what .ci/run executes; here the selection mode is checked:
after the build it runs only the pytest tests named, with stage lines and durations, and
none of ctest, ruff or mypy.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_dev(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run([str(REPO / "dev"), *args], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=600, check=False)


def test_dev_test_with_arguments_runs_only_those_tests() -> None:
    result = run_dev("test", "tests/test_core_includes.py", "-k", "folders_say")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    stages = re.findall(r"^== (.*)$", out, re.MULTILINE)
    assert stages[0].startswith("setup") and stages[1].startswith("build")
    assert stages[2:] == ["pytest tests/test_core_includes.py -k folders_say"]
    assert re.search(r"^-- pytest tests/test_core_includes.py -k folders_say: \d+ s$", out,
                     re.MULTILINE)
    assert re.search(r"\b1 passed, \d+ deselected\b", out)
    assert "ctest" not in out and "ruff" not in out and "mypy" not in out


def test_dev_without_a_command_prints_usage() -> None:
    result = run_dev("nonsense")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: ./dev sim")
