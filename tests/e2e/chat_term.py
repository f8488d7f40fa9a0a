"""The full-screen chat over the simulator's pty, rendered by pyte, and the conversation files.

:class:`ChatTerm` sets the pty's size, feeds everything the device writes to a
`pyte.HistoryScreen` of that size (its history keeps the lines scrolled off the top of the
transcript's scroll region) and waits for the screen to reach a state. :func:`parse_conversation`
reads a conversation file by docs/conversation-format.md, checking every CRC, so a test can see
what the device stored independently of the device's reader.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import pyte
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Reply
from agent_host.testserver.plans import Api

ESC = b"\x1b"
CTRL_X = b"\x18"
PAGE_UP = b"\x1b[5~"
PAGE_DOWN = b"\x1b[6~"
BACKSPACE = b"\x7f"
API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
APIS: list[Api] = ["chat", "responses"]
SIZES = [(80, 24), (40, 12)]
SIZE_IDS = ["80x24", "40x12"]
NEW_BANNER = "New conversation. Enter sends, PgUp/PgDn scroll, Esc returns to the shell."
RESUMED_BANNER = "Resumed. Enter sends, PgUp/PgDn scroll, Esc returns to the shell."
CANCELLED = "(cancelled; nothing stored)"
NARROW_COLS = 60
HINT = "paged back: PgDn"
USER = "ada"
MODEL = "test-model"


def set_size(dev: SimDevice, cols: int, rows: int) -> None:
    """The pty's window size, which the chat reads when it opens."""
    fcntl.ioctl(dev.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def configure(dev: SimDevice, url: str, user: str = USER) -> None:
    """Endpoint (its path selects the protocol), model, no key, and the user name."""
    for command, want in [(f"agent config endpoint {url}", "endpoint set"),
                          (f"agent config model {MODEL}", f"model set to {MODEL}"),
                          ("agent config key clear", ""),
                          (f"agent config user {user}", "")]:
        out = dev.exec_command(command)
        assert out and out[0].startswith(want), (command, out)
        assert not any(x.startswith("agent: ") for x in out), (command, out)


def wrap(line: str, cols: int) -> list[str]:
    """A transcript line as the terminal shows it: cut every @cols code points."""
    if line == "":
        return [""]
    return [line[i:i + cols] for i in range(0, len(line), cols)]


def wrapped(lines: list[str], cols: int) -> list[str]:
    return [part.rstrip() for line in lines for part in wrap(line, cols)]


def status_text(cols: int, usage: tuple[int, int, int], right: str = "") -> str:
    """The status bar's text: counts at the left, @right at the right, the last column blank."""
    if cols < NARROW_COLS:
        left = f" I {usage[0]} O {usage[1]} T {usage[2]}"
    else:
        left = f" input {usage[0]}  output {usage[1]}  total {usage[2]}"
    width = cols - 1
    line = left.ljust(width)
    if right and len(left) + len(right) + 2 <= width:
        line = line[:width - len(right) - 1] + right + " "
    return line + " "


def stall_before_end(reply: Reply, api: Api, seconds: float = 30.0) -> Reply:
    """@reply sent up to (not including) its final frame, then held open: the text has
    streamed, the turn has not completed."""
    body = reply.body
    marker = b"response.completed" if api == "responses" else b'"finish_reason":"stop"'
    at = body.index(marker)
    start = body.rfind(b"\n\n", 0, at) + 2
    return reply.with_faults(stall_after=start, stall_seconds=seconds)


class ChatTerm:
    """The device's console as a terminal of a fixed size."""

    def __init__(self, dev: SimDevice, cols: int, rows: int) -> None:
        set_size(dev, cols, rows)
        self.dev = dev
        self.cols = cols
        self.rows = rows
        self.screen = pyte.HistoryScreen(cols, rows, history=5000)
        self.stream = pyte.ByteStream(self.screen)
        self.fed = len(dev.transcript)

    # -- reading -------------------------------------------------------------------------
    def feed(self) -> None:
        data = bytes(self.dev.transcript[self.fed:])
        self.fed += len(data)
        self.stream.feed(data)

    def _read(self, timeout: float) -> None:
        if select.select([self.dev.fd], [], [], max(timeout, 0.0))[0]:
            self.dev.transcript += os.read(self.dev.fd, 65536)

    def wait(self, pred: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
        """Read and render until @pred holds on the screen."""
        deadline = time.monotonic() + timeout
        while True:
            self.feed()
            if pred():
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.dump()}")
            self._read(min(remaining, 0.2))

    def settle(self, quiet: float = 0.3) -> None:
        """Read until the device has been silent for @quiet seconds, then render."""
        self.dev.drain(quiet)
        self.feed()

    # -- the screen ----------------------------------------------------------------------
    @property
    def display(self) -> list[str]:
        return list(self.screen.display)

    @property
    def transcript(self) -> list[str]:
        """Rows 1 .. R-2, right-stripped."""
        return [row.rstrip() for row in self.display[: self.rows - 2]]

    @property
    def input_line(self) -> str:
        return self.display[self.rows - 2]

    @property
    def status(self) -> str:
        return self.display[self.rows - 1]

    @property
    def history(self) -> list[str]:
        """The lines scrolled off the top of the scroll region, oldest first."""
        return ["".join(line[x].data for x in range(self.cols)).rstrip()
                for line in self.screen.history.top]

    def shown_lines(self) -> list[str]:
        """Everything the transcript region ever showed, in order: the history then the
        region, without the empty rows below the end."""
        rows = self.history + self.transcript
        while rows and rows[-1] == "":
            rows.pop()
        return rows

    def cell(self, row: int, col: int) -> pyte.screens.Char:
        """The character cell at 0-based @row, @col."""
        return self.screen.buffer[row][col]

    def find_row(self, prefix: str) -> int:
        """The 0-based index of the last transcript row that starts with @prefix."""
        hits = [i for i, row in enumerate(self.transcript) if row.startswith(prefix)]
        assert hits, f"no row starts with {prefix!r}:\n{self.dump()}"
        return hits[-1]

    def dump(self) -> str:
        return "\n".join(f"{i + 1:3}|{row}|" for i, row in enumerate(self.display))

    # -- states --------------------------------------------------------------------------
    def idle(self) -> bool:
        """The status bar says no request runs (and the view is not paged back)."""
        right = self.status.rstrip()
        return not right.endswith(("working", "confirm?", HINT))

    # -- actions -------------------------------------------------------------------------
    def open(self, command: str = "agent", banner: str = NEW_BANNER) -> None:
        """Type @command at the shell and wait for the chat's banner and input line."""
        want = wrapped([banner], self.cols)

        def shown() -> bool:
            rows = self.transcript
            return any(rows[i:i + len(want)] == want for i in range(len(rows)))

        self.dev.write(command.encode() + b"\r")
        # The banner comes last (after a replay): all its rows, not only the first.
        self.wait(lambda: shown() and self.input_line.startswith(f"{USER}> "),
                  f"the chat after {command!r}")

    def type(self, data: bytes) -> None:
        self.dev.write(data)

    def page_down_to_end(self, usage: tuple[int, int, int]) -> int:
        """Press Page Down until the view is at the end; return how many presses it took."""
        bars = [b"\x1b[7m" + status_text(self.cols, usage, right)[: self.cols - 1].encode()
                + b"\x1b[0m" for right in (HINT, "")]
        for presses in range(1, 1000):
            mark = len(self.dev.transcript)
            self.dev.write(PAGE_DOWN)
            which, _ = self.dev.read_until_any(bars, 10.0, start=mark)
            if which == bars[1]:
                self.feed()
                return presses
        raise AssertionError("Page Down never reached the end")

    def send(self, text: str, timeout: float = 30.0) -> None:
        """Type @text and Enter; wait for the request to start and to end."""
        mark = len(self.dev.transcript)
        self.dev.write(text.encode() + b"\r")
        self.dev.read_until(b"working \x1b[0m", timeout, start=mark)
        self.wait(self.idle, f"the end of the request {text!r}", timeout)

    def page(self, key: bytes, usage: tuple[int, int, int], right: str = "") -> None:
        """Press Page Up or Page Down; wait for the status bar it draws (@right: the hint or
        the state expected at its right) and render."""
        mark = len(self.dev.transcript)
        self.dev.write(key)
        bar = status_text(self.cols, usage, right)[: self.cols - 1]
        self.dev.read_until(b"\x1b[7m" + bar.encode() + b"\x1b[0m", 10.0, start=mark)
        self.feed()

    def leave(self) -> None:
        """Esc at an idle chat: back at the shell prompt."""
        mark = len(self.dev.transcript)
        self.dev.write(ESC)
        self.dev.read_until(PROMPT, 10.0, start=mark)
        self.settle(0.1)


# -- conversation files (docs/conversation-format.md) ---------------------------------------

REC_PROVIDER, REC_MODEL, REC_TITLE = 1, 2, 3
REC_USER, REC_ASSISTANT, REC_TOOL, REC_RESPONSE_ID, REC_USAGE = 16, 17, 18, 19, 20
REC_TOOL_ID = 21  # version 2: u16, the tool id of the tool record before it
VERSION = 2
HEADER_BYTES = 48
TRAILER_BYTES = 12


@dataclass
class Conversation:
    slot: int
    protocol: int
    conv_id: int
    sequence: int
    turns: int
    size: int
    records: list[tuple[int, bytes]] = field(default_factory=list)

    def texts(self, kind: int) -> list[str]:
        return [data.decode() for t, data in self.records if t == kind]


def parse_conversation(data: bytes) -> Conversation:
    """A conversation file, every check of the format's "Valid file" made (AssertionError)."""
    assert len(data) >= HEADER_BYTES + 3 * 8 + TRAILER_BYTES, len(data)
    head = data[:HEADER_BYTES]
    assert head[:4] == b"AGCV" and head[4] == VERSION and head[5] == HEADER_BYTES, head[:6]
    (crc,) = struct.unpack_from("<I", head, 44)
    assert crc == zlib.crc32(head[:44]), "header CRC"
    conv_id, sequence = struct.unpack_from("<II", head, 8)
    turns, count, size = struct.unpack_from("<III", head, 32)
    assert size == len(data), (size, len(data))
    conv = Conversation(head[6], head[7], conv_id, sequence, turns, size)
    pos = HEADER_BYTES
    end = len(data) - TRAILER_BYTES
    while pos < end:
        kind, flags, length = struct.unpack_from("<BBH", data, pos)
        assert flags == 0 and pos + 8 + length <= end, (pos, kind, length)
        (rcrc,) = struct.unpack_from("<I", data, pos + 4 + length)
        assert rcrc == zlib.crc32(data[pos:pos + 4 + length]), f"record CRC at {pos}"
        conv.records.append((kind, data[pos + 4:pos + 4 + length]))
        pos += 8 + length
    assert pos == end
    assert len(conv.records) == count
    assert [t for t, _ in conv.records[:3]] == [REC_PROVIDER, REC_MODEL, REC_TITLE]
    assert sum(1 for t, _ in conv.records if t == REC_USER) == turns
    magic, tsize, fcrc = struct.unpack_from("<4sII", data, end)
    assert magic == b"AGCE" and tsize == size, (magic, tsize)
    assert fcrc == zlib.crc32(data[:end + 8]), "file CRC"
    return conv
