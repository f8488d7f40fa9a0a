"""The simulator as a device under test: started with its console on a pseudo terminal.

The interface follows the Twister pytest harness's `Shell` (``exec_command`` returns the
output lines of one command), so the same test bodies can drive a board under Twister.
:class:`PtyConsole` is the console part (a pty read byte by byte into a transcript); the
simulator (:class:`SimDevice`) and native_sim's firmware image under Twister
(:class:`.native_sim_device.NativeSimDevice`) are started behind it.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import termios
import time
import tty
from pathlib import Path
from typing import BinaryIO

from ..errors import DeviceError
from ..sim import command

PROMPT = b"uart:~$ "
_PTY_LINE = re.compile(rb"UART connected to pseudotty: (\S+)")


def echo_lines(lines: list[str], cmd: str, prompt: str) -> int:
    """How many of @lines are the shell's echo of @cmd (at least the first line).

    The first line holds the echo, after the prompt when the prompt is on it too; a shell
    that breaks a command wider than its terminal (Zephyr's) goes on with the rest of the
    echo at the start of the following lines.
    """
    if not lines:
        return 0
    first = lines[0]
    at = first.find(prompt)
    echo = first[at + len(prompt):] if at >= 0 else first
    count = 1
    while (echo != cmd and count < len(lines) and lines[count]
           and cmd.startswith(echo + lines[count])):
        echo += lines[count]
        count += 1
    return count if echo == cmd else 1


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """Stop @proc as a user would (SIGTERM), killing it after @timeout s; its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


class PtyConsole:
    """A device's console on the master side of a pseudo terminal, read byte by byte.

    Subclasses start the device and set ``fd``; everything read goes through
    :meth:`_receive` into ``transcript``.
    """

    #: Whether input typed in the same write right after a hidden entry ends reaches the
    #: shell. The simulator keeps it; the firmware loses it and says so.
    typed_ahead_kept = True

    def __init__(self, prompt: bytes = PROMPT) -> None:
        self.prompt = prompt
        self.fd = -1
        self.transcript = bytearray()  # every byte read from the console, for leak checks

    def _receive(self, chunk: bytes) -> None:
        """Take in @chunk as read from the console."""
        self.transcript += chunk

    def _read_some(self, timeout: float) -> bool:
        """Read what the console has within @timeout seconds; False when nothing came."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except OSError as err:
            raise DeviceError(f"console closed: {err}") from err
        if not chunk:
            raise DeviceError("console closed")
        self._receive(chunk)
        return True

    # -- console ---------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        os.write(self.fd, data)

    def drain(self, quiet: float = 0.3) -> bytes:
        """Read until the console has been silent for @quiet seconds."""
        begin = len(self.transcript)
        while self._read_some(quiet):
            pass
        return bytes(self.transcript[begin:])

    def read_until(self, pattern: bytes, timeout: float = 10.0, start: int | None = None) -> bytes:
        """Read until @pattern appears in the transcript after @start; return that part."""
        begin = len(self.transcript) if start is None else start
        deadline = time.monotonic() + timeout
        while pattern not in self.transcript[begin:]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                tail = bytes(self.transcript[begin:])[-400:]
                raise DeviceError(f"timed out waiting for {pattern!r}; got {tail!r}")
            self._read_some(remaining)
        return bytes(self.transcript[begin:])

    def read_until_any(self, patterns: list[bytes], timeout: float = 10.0,
                       start: int | None = None) -> tuple[bytes, bytes]:
        """Read until one of @patterns appears after @start.

        Returns (the pattern that appeared first in the transcript, the part read from @start
        up to and including it).
        """
        begin = len(self.transcript) if start is None else start
        deadline = time.monotonic() + timeout
        while True:
            tail = self.transcript[begin:]
            found = [(tail.find(p), p) for p in patterns if p in tail]
            if found:
                at, pattern = min(found)
                return pattern, bytes(tail[: at + len(pattern)])
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeviceError(f"timed out waiting for any of {patterns!r}; got "
                                  f"{bytes(tail)[-400:]!r}")
            self._read_some(remaining)

    def exec_command(self, cmd: str, timeout: float = 10.0) -> list[str]:
        """Type @cmd and Enter; return the output lines before the next prompt.

        The echo of what was typed is left out, also where the shell broke it over several
        lines; so are empty lines.
        """
        mark = len(self.transcript)
        self.write(cmd.encode() + b"\r")
        end = b"\r\n" + self.prompt
        out = self.read_until(end, timeout, start=mark)
        text = out[: out.rfind(end) + 2].decode(errors="replace")
        lines = text.split("\r\n")
        skip = echo_lines(lines, cmd, self.prompt.decode(errors="replace"))
        # The last line is empty: the prompt follows the last line break.
        return [line for line in lines[skip:] if line != ""]


class SimDevice(PtyConsole):
    """One simulator process, its pseudo terminal and everything it printed there."""

    #: Input typed in the same write right after a hidden entry ends reaches the shell (the
    #: POSIX port gives back what a bypass callback leaves). The firmware loses it and says so.
    typed_ahead_kept = True

    def __init__(self, exe: Path, flash: Path, extra_args: list[str] | None = None) -> None:
        super().__init__(PROMPT)
        self.exe = exe
        self.flash = flash
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen[bytes] | None = None
        self.pty_path = ""
        self._stderr_path = flash.with_suffix(".stderr")
        self._stderr: BinaryIO | None = None

    # -- life cycle ------------------------------------------------------------------------
    def start(self, timeout: float = 15.0) -> str:
        """Start the simulator, attach to its console and wait for the first prompt.

        Returns the boot output up to the prompt.
        """
        self._stderr = open(self._stderr_path, "ab")  # noqa: SIM115 - closed in stop()
        argv = command(self.exe, self.flash, pty=True, extra=self.extra_args)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._stderr,
                                     stdin=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self._read_stdout_line(timeout)
        match = _PTY_LINE.search(line)
        if match is None:
            raise DeviceError(f"simulator did not announce its pty: {line!r}")
        self.pty_path = match.group(1).decode()
        self.fd = os.open(self.pty_path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd, termios.TCSANOW)
        mark = len(self.transcript)
        # The banner was written before anyone was attached; ask for a fresh prompt.
        self.write(b"\r")
        self.read_until(PROMPT, timeout, start=mark)
        # The banner may have waited in the pty's buffer with its own prompt: let both in.
        self.drain()
        return self.transcript[mark:].decode(errors="replace")

    def _read_stdout_line(self, timeout: float) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        data = b""
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.proc.poll() is not None:
                break
            ready, _, _ = select.select([self.proc.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1)
                if not chunk:
                    break
                data += chunk
        return data

    def stop(self, timeout: float = 10.0) -> int:
        """Stop the simulator as a user would (SIGTERM); return its exit status."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        code = 0
        if self.proc is not None:
            code = terminate(self.proc, timeout)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        return code

    def stderr_text(self) -> str:
        return self._stderr_path.read_text(errors="replace") if self._stderr_path.exists() else ""
