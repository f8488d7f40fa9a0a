"""The simulator's own command line and its stdin/stdout console."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from flash_image import BLOCK_BYTES, mount

pytestmark = pytest.mark.sim_only("the simulator's own command line")


def run(exe: Path, *args: str, stdin: bytes = b"", timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, timeout=timeout,
                          check=False)


def test_help_and_version(sim_exe: Path) -> None:
    result = run(sim_exe, "--help")
    assert result.returncode == 0
    for option in (b"--flash=FILE", b"--flash_erase", b"--pty", b"--flash_size"):
        assert option in result.stdout
    assert run(sim_exe, "--version").stdout.startswith(b"agent simulator ")


def test_bad_options_exit_2(sim_exe: Path, tmp_path: Path) -> None:
    for args in (["--bogus"], ["--flash="], ["--flash_size=1000"], ["--flash_size=abc"]):
        result = run(sim_exe, *args, f"--flash={tmp_path / 'x.bin'}")
        assert result.returncode == 2, args
        assert result.stderr.startswith(b"error: ")


def test_stdin_stdout_console_and_new_image(sim_exe: Path, tmp_path: Path) -> None:
    image = tmp_path / "new.bin"
    result = run(sim_exe, f"--flash={image}", "--flash_size=65536",
                 stdin=b"agent config model from-stdin\ragent status\r")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert "*** Booting agent simulator" in out
    assert "model set to from-stdin" in out
    assert "model:     from-stdin" in out
    assert image.stat().st_size == 65536
    # A real LittleFS image: another implementation mounts it and finds the settings file.
    fs = mount(image)
    assert ".settings" in fs.listdir("/")
    assert fs.context.in_size // BLOCK_BYTES == 16


def test_piped_lines_after_the_hidden_key_prompt(sim_exe: Path, tmp_path: Path) -> None:
    image = tmp_path / "p.bin"
    result = run(sim_exe, f"--flash={image}",
                 stdin=b"agent config key\rsk-piped\ragent config model m\ragent status\r")
    out = result.stdout.decode()
    assert result.returncode == 0
    assert "key set" in out and "model set to m" in out and "key:       set" in out
    assert "sk-piped" not in out


def test_flash_erase_starts_over(sim_exe: Path, tmp_path: Path) -> None:
    image = tmp_path / "f.bin"
    run(sim_exe, f"--flash={image}", stdin=b"agent config model keep\r")
    kept = run(sim_exe, f"--flash={image}", stdin=b"agent status\r").stdout.decode()
    assert "model:     keep" in kept
    erased = run(sim_exe, f"--flash={image}", "--flash_erase", stdin=b"agent status\r")
    assert "model:     (not set)" in erased.stdout.decode()


def test_garbage_image_is_formatted(sim_exe: Path, tmp_path: Path) -> None:
    image = tmp_path / "junk.bin"
    image.write_bytes(b"\x00\x11" * (32 * BLOCK_BYTES // 2))
    result = run(sim_exe, f"--flash={image}", stdin=b"agent config user after\r")
    assert result.returncode == 0
    assert b"lfs: formatting" in result.stderr
    assert "user set to after" in result.stdout.decode()
