"""`shell`: an interactive terminal on the device console over a serial port (or the
simulator's pty).

On a terminal, the local side is put in raw mode, so every key (Tab, Ctrl-C, arrows) goes to
the device's shell, and Ctrl-] leaves. With stdin not a terminal (a pipe or a file), what it
holds is sent and the device's output is printed until it has been silent for `idle` seconds.
"""

from __future__ import annotations

import os
import select
import termios
import time
import tty
from typing import Any

from .errors import TransportError

ESCAPE = 0x1D
"""Ctrl-]: leaves the terminal (as telnet's escape character)."""


def _open(port: str, baudrate: int) -> Any:
    """Open @port raw, as pyserial sets a serial port up; returns the pyserial Serial."""
    if not os.path.exists(port):
        raise TransportError(f"cannot open serial {port}: no such device")
    import serial

    try:
        conn = serial.Serial(port, baudrate, timeout=0)
    except (serial.SerialException, OSError) as err:
        raise TransportError(f"cannot open serial {port}: {err}") from None
    return conn


def run(port: str, baudrate: int = 115200, stdin_fd: int = 0, stdout_fd: int = 1,
        idle: float = 0.5) -> int:
    """Connect stdin/stdout to the device console at @port until Ctrl-] (or, from a pipe, the end
    of input and @idle seconds of quiet). Returns 0; a lost port is a TransportError."""
    conn = _open(port, baudrate)
    fd: int = conn.fileno()
    interactive = os.isatty(stdin_fd)
    saved = termios.tcgetattr(stdin_fd) if interactive else None
    try:
        if interactive:
            os.write(2, f"connected to {port}; Ctrl-] leaves\r\n".encode())
            tty.setraw(stdin_fd, termios.TCSANOW)
        _pump(fd, port, stdin_fd, stdout_fd, interactive, idle)
    finally:
        if saved is not None:
            termios.tcsetattr(stdin_fd, termios.TCSADRAIN, saved)
            os.write(2, b"\r\n")
        conn.close()
    return 0


def _pump(fd: int, port: str, stdin_fd: int, stdout_fd: int, interactive: bool,
          idle: float) -> None:
    stdin_open = True
    quiet_since = time.monotonic()
    while True:
        watch = [fd, stdin_fd] if stdin_open else [fd]
        wait = None if stdin_open else max(0.0, idle - (time.monotonic() - quiet_since))
        if not stdin_open and wait == 0.0:
            return
        ready, _, _ = select.select(watch, [], [], wait)
        if fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError as err:
                raise TransportError(f"shell: connection to serial {port} lost "
                                     f"({err.strerror or err})") from None
            if not data:
                raise TransportError(f"shell: connection to serial {port} lost")
            os.write(stdout_fd, data)
            quiet_since = time.monotonic()
        if stdin_fd in ready:
            data = os.read(stdin_fd, 1024)
            if interactive and ESCAPE in data:
                _send(fd, port, data[: data.index(ESCAPE)])
                return
            if not data:
                if interactive:
                    return
                stdin_open = False
                quiet_since = time.monotonic()
                continue
            _send(fd, port, data)


def _send(fd: int, port: str, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError as err:
        raise TransportError(f"shell: connection to serial {port} lost "
                             f"({err.strerror or err})") from None
