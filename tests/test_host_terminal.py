"""`agent-host shell`'s terminal over a pseudo terminal pair standing in for the serial port
(tests/e2e/test_host_mgmt.py runs it on the simulator's console)."""

from __future__ import annotations

import os
import select
import termios
import threading
import time
from collections.abc import Iterator

import pytest
from agent_host import cli, terminal
from agent_host.errors import TransportError


@pytest.fixture
def port() -> Iterator[tuple[int, str]]:
    """(the device side's fd, the port's path)."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    yield master, path
    os.close(slave)  # held open so that the device side reads no EIO before the port opens
    try:
        os.close(master)
    except OSError:
        pass


def read_for(fd: int, seconds: float) -> bytes:
    data = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def test_piped_input_goes_out_and_output_comes_back(port: tuple[int, str]) -> None:
    master, path = port
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.write(in_w, b"agent status\r")
    os.close(in_w)

    def device() -> None:
        got = b""
        while not got.endswith(b"\r"):
            got += os.read(master, 100)
        time.sleep(0.2)  # answers after a pause shorter than --idle
        os.write(master, b"got " + got.strip() + b"\r\nuart:~$ ")

    peer = threading.Thread(target=device)
    peer.start()
    started = time.monotonic()
    assert terminal.run(path, stdin_fd=in_r, stdout_fd=out_w, idle=0.5) == 0
    peer.join()
    os.close(out_w)
    assert read_for(out_r, 1) == b"got agent status\r\nuart:~$ "
    assert time.monotonic() - started >= 0.7  # the pause and the idle time
    os.close(in_r)
    os.close(out_r)


def test_ctrl_bracket_leaves_and_restores_the_terminal(port: tuple[int, str]) -> None:
    master, path = port
    kbd_master, kbd_slave = os.openpty()  # a terminal as stdin
    before = termios.tcgetattr(kbd_slave)
    out_r, out_w = os.pipe()
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(
        terminal.run(path, stdin_fd=kbd_slave, stdout_fd=out_w)))
    runner.start()
    time.sleep(0.3)
    assert termios.tcgetattr(kbd_slave)[3] & termios.ICANON == 0  # raw while connected
    os.write(kbd_master, b"help\t\x03")  # Tab and Ctrl-C go to the device as they are
    assert read_for(master, 0.5) == b"help\t\x03"
    os.write(master, b"device says hi")
    os.write(kbd_master, b"ab\x1dcd")  # Ctrl-]: "ab" is sent, the rest is not
    runner.join(5)
    assert result == [0]
    assert read_for(master, 0.3) == b"ab"
    os.close(out_w)
    assert read_for(out_r, 0.5) == b"device says hi"
    assert termios.tcgetattr(kbd_slave) == before
    for fd in (kbd_master, kbd_slave, out_r):
        os.close(fd)


def test_a_lost_port_is_a_transport_error(port: tuple[int, str]) -> None:
    master, path = port
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            terminal.run(path, stdin_fd=in_r, stdout_fd=out_w)
        except TransportError as err:
            errors.append(err)

    runner = threading.Thread(target=run)
    runner.start()
    time.sleep(0.3)
    os.close(master)  # the simulator exits
    runner.join(5)
    assert len(errors) == 1
    assert str(errors[0]).startswith(f"shell: connection to serial {path} lost")
    for fd in (in_r, in_w, out_r, out_w):
        os.close(fd)


def test_shell_on_a_missing_port(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["shell", "--port", "/dev/agent-none"]) == 3
    assert capsys.readouterr().err == ("agent-host: cannot open serial /dev/agent-none: no such "
                                       "device\n")
