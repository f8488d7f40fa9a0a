"""`west agent` through real west, in a throwaway workspace around a copy of this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host.testing.sim_device import SimDevice

REPO = Path(__file__).resolve().parents[1]
WEST = Path(sys.executable).with_name("west")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if line]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("west-ws")
    manifest = top / "agent"  # the path west.yml gives `self`
    for name in tracked_files():
        dest = manifest / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, dest)
    # `west init -l` makes the workspace from the local manifest; no network is needed for it.
    subprocess.run([str(WEST), "init", "-l", str(manifest)], cwd=top, check=True,
                   capture_output=True)
    # west.yml imports Zephyr's own manifest, which `west update` would clone. Without a
    # network, a local git repository stands at zephyr/ with an empty manifest at the
    # manifest-rev ref west reads imports from; the extension does not depend on Zephyr.
    zephyr = top / "zephyr"
    zephyr.mkdir()
    (zephyr / "west.yml").write_text("manifest:\n  projects: []\n")
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost"]
    for step in (["init", "-q"], ["add", "west.yml"], ["commit", "-qm", "empty manifest"],
                 ["update-ref", "refs/heads/manifest-rev", "HEAD"]):
        subprocess.run(git + step, cwd=zephyr, check=True, capture_output=True)
    return top


def west(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    # The copy's host/ folder must serve, not an installed agent_host from this checkout.
    env["PYTHONPATH"] = ""
    return subprocess.run([str(WEST), *args], cwd=workspace, capture_output=True, text=True,
                          timeout=120, check=False, env=env)


def test_west_lists_the_extension(workspace: Path) -> None:
    result = west(workspace, "help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "agent: build the simulator, provision and test the agent device" in text


def test_west_agent_help(workspace: Path) -> None:
    result = west(workspace, "agent", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: west agent ")
    assert "sim" in result.stdout


def test_west_agent_bad_command(workspace: Path) -> None:
    result = west(workspace, "agent", "nonsense")
    assert result.returncode == 2
    assert "invalid choice: 'nonsense'" in result.stderr


def test_west_agent_sim_runs_the_simulator(workspace: Path, sim_exe: Path) -> None:
    # A real command end to end: west -> agent_host -> build (up to date) -> the simulator.
    result = west(workspace, "agent", "sim", "--build-dir", str(sim_exe.parent), "--",
                  "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("agent simulator ")


def test_west_agent_device_command_errors(workspace: Path) -> None:
    # A device command through west: its one-line error and its exit status (3: transport).
    result = west(workspace, "agent", "status", "--port", "/dev/agent-none")
    assert result.returncode == 3
    assert result.stderr == "west agent: cannot open serial /dev/agent-none: no such device\n"
    result = west(workspace, "agent", "config", "key", "sk-on-the-command-line")
    assert result.returncode == 2
    assert result.stderr.startswith("west agent: config key: the key is never taken from the "
                                    "command line")


@pytest.mark.sim_only("the simulator's pty as the serial port")
def test_west_agent_against_the_simulator(workspace: Path, dut: SimDevice) -> None:
    # west -> agent_host -> smpclient -> the simulator's pty -> the agent group, and back.
    result = west(workspace, "agent", "status", "--port", dut.pty_path)
    assert (result.returncode, result.stderr) == (0, ""), result
    assert "board: host_sim\n" in result.stdout and "key: not set\n" in result.stdout
    result = west(workspace, "agent", "tools", "--port", dut.pty_path)
    assert result.returncode == 0, result
    assert result.stdout.startswith("tool policy: confirm; ")
    result = west(workspace, "agent", "export", "9", "--port", dut.pty_path)
    assert result.returncode == 1
    assert result.stderr == ("west agent: export 9: slot must be a number from 1 to 3 "
                             "(ERANGE)\n")
