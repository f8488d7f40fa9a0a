"""The host build runs its scripts under the project's Python, not the first python3 on PATH.

A bare interpreter (a venv made --without-pip, so it has none of the project's packages)
stands for Debian's own /usr/bin/python3 or a pyenv shim first on PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A python3 with the standard library only: no pip, no kconfiglib."""
    root = tmp_path_factory.mktemp("bare")
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(root)
    python = root / "bin" / "python3"
    probe = subprocess.run([python, "-c", "import kconfiglib"], capture_output=True, check=False)
    assert probe.returncode != 0, "the bare interpreter must not have kconfiglib"
    return python


def path_with(python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_gen_config_names_the_interpreter_without_kconfiglib(bare_python: Path,
                                                            tmp_path: Path) -> None:
    result = subprocess.run(
        [bare_python, REPO / "scripts" / "gen_config.py", "--kconfig", REPO / "app" / "Kconfig",
         "--conf", REPO / "app" / "sim" / "sim.conf", "--out", tmp_path / "autoconf.h"],
        capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "kconfiglib" in result.stderr
    assert str(bare_python) in result.stderr
    assert not (tmp_path / "autoconf.h").exists()


def configure(build: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["cmake", "-S", REPO / "app" / "sim", "-B", build, *extra],
        capture_output=True, text=True, env=env, check=False)


def test_cmake_names_the_interpreter_a_script_failed_under(bare_python: Path,
                                                          tmp_path: Path) -> None:
    result = configure(tmp_path / "b", path_with(bare_python),
                       f"-DPython3_EXECUTABLE={bare_python}")
    assert result.returncode != 0
    assert f"scripts/gen_config.py failed under {bare_python}" in re.sub(
        r"\s+", " ", result.stderr)


def test_cmake_prefers_the_project_venv_over_path(bare_python: Path, tmp_path: Path) -> None:
    # A stand-in for .venv (AGENT_VENV_DIR defaults to the checkout's .venv): its bin/python
    # runs this test's interpreter, which has kconfiglib.
    venv_dir = tmp_path / "venv"
    (venv_dir / "bin").mkdir(parents=True)
    python = venv_dir / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    result = configure(tmp_path / "b", path_with(bare_python), f"-DAGENT_VENV_DIR={venv_dir}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Python for the build scripts: {python}" in result.stdout


def test_cmake_without_a_venv_takes_path_and_says_so(bare_python: Path, tmp_path: Path) -> None:
    """No venv: the build runs under what PATH gives and, lacking kconfiglib, fails naming it."""
    result = configure(tmp_path / "b", path_with(bare_python),
                       f"-DAGENT_VENV_DIR={tmp_path / 'none'}")
    assert result.returncode != 0
    chosen = re.search(r"Python for the build scripts: (\S+)", result.stdout)
    assert chosen is not None, result.stdout
    assert "scripts/gen_config.py failed under " + chosen[1] in re.sub(r"\s+", " ", result.stderr)
