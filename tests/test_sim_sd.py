"""The simulator's SD card option: a host folder mounted at /SD: (docs/simulator.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run(exe: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, timeout=30,
                          check=False)


def test_help_names_the_sd_option(sim_exe: Path) -> None:
    result = run(sim_exe, "--help")
    assert result.returncode == 0
    assert b"--sd=DIR" in result.stdout
    assert b"/SD:" in result.stdout


def test_empty_sd_option_exits_2(sim_exe: Path, tmp_path: Path) -> None:
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", "--sd=")
    assert result.returncode == 2
    assert result.stderr.decode() == "error: --sd needs a folder name\n"


def test_sd_folder_is_created_and_mounted(sim_exe: Path, tmp_path: Path) -> None:
    card = tmp_path / "card"
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", f"--sd={card}",
                 stdin=b"agent status\r")
    assert result.returncode == 0, result.stderr
    assert f"sd: {card} mounted at /SD:" in result.stdout.decode()
    assert card.is_dir()


def test_sd_that_is_a_file_is_refused(sim_exe: Path, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_bytes(b"x")
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", f"--sd={not_a_folder}")
    assert result.returncode == 1
    assert result.stderr.decode().endswith(
        f"error: cannot mount {not_a_folder} at /SD:: Not a directory\n")
