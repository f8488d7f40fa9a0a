"""The simulator's --board FILE: the simulated board the hardware tools see (docs/simulated-board.md).

A board file with a mistake must stop the simulator at start with one line that names the
file and the line, so that nobody runs the tools against a board other than the one they wrote.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[1]
DEFAULT_BOARD = REPO_DIR / "app" / "sim" / "host_sim.board"

GOOD_BOARD = """\
# a board for this test
board model="Test board" caps=wifi
gpio name=BTN controller=gpio0 pin=3 policy=free mode=input level=0
wifi state=disconnected
"""


def run(exe: Path, *args: str, stdin: bytes = b"", timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, timeout=timeout,
                          check=False)


def test_bad_board_file_names_the_line(sim_exe: Path, tmp_path: Path) -> None:
    board = tmp_path / "bad.board"
    board.write_text("board\n# comment\ngpio name=X controller=gpio0 pin=1 policy=maybe mode=input level=1\n")
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", f"--board={board}")
    assert result.returncode == 2
    assert result.stderr.decode() == (
        f"error: board file {board}, line 3: gpio: unknown policy 'maybe' "
        "(one of: free, input_only, strapping, reserved)\n"
    )
    # Nothing started: no banner, no image.
    assert b"Booting" not in result.stdout
    assert not (tmp_path / "f.bin").exists()


def test_board_file_consistency_error(sim_exe: Path, tmp_path: Path) -> None:
    board = tmp_path / "nowifi.board"
    board.write_text("board\nwifi state=connected ssid=x ip=10.0.0.2\n")
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", "--board", str(board))
    assert result.returncode == 2
    assert result.stderr.decode() == (
        f"error: board file {board}, wifi, ap and nat lines need caps=...,wifi on the board line\n"
    )


def test_missing_and_empty_board_option(sim_exe: Path, tmp_path: Path) -> None:
    missing = tmp_path / "none.board"
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", f"--board={missing}")
    assert result.returncode == 2
    assert result.stderr.decode() == (
        f"error: board file {missing}, cannot open it: No such file or directory\n"
    )
    result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", "--board=")
    assert result.returncode == 2
    assert result.stderr.decode() == "error: --board needs a file name\n"


def test_help_names_the_option_and_its_default(sim_exe: Path) -> None:
    result = run(sim_exe, "--help")
    assert result.returncode == 0
    out = result.stdout.decode()
    assert "--board=FILE" in out
    assert str(DEFAULT_BOARD) in out


def test_good_board_and_default_board_start(sim_exe: Path, tmp_path: Path) -> None:
    board = tmp_path / "good.board"
    board.write_text(GOOD_BOARD)
    for extra in ([f"--board={board}"], []):
        result = run(sim_exe, f"--flash={tmp_path / 'f.bin'}", *extra, stdin=b"agent tools\r")
        assert result.returncode == 0, result.stderr
        out = result.stdout.decode()
        assert "*** Booting agent simulator" in out
        # The hardware tools are in the registry the model is offered from.
        for tool in ("system_status", "jobs_list", "hardware_describe", "gpio_list", "gpio_read",
                     "buses_list", "display_list", "network_status", "sensors_read"):
            assert f"\n{tool} " in out.replace("\r\n", "\n"), tool
