"""`agent-host feed DIR...` / `west agent feed DIR...`: the feeder of imported host tools
(docs/modules.md "Host tools", docs/host-cli.md "feed").

It stays connected to the device over SMP and long-polls the agent group's feed command (13).
For each call it finds the module directory named by the call among the DIRs, checks the entry
file's SHA-256 against the digest the device recorded at import, runs the entry program
directly (an argv, no shell) with the declared arguments as this account, in the module
directory, until the device's deadline, and sends its exit status and its output (stdout and
stderr as written, at most the call's output bound) back with the result command (14).

Host tools are trusted programs: they run with this account's rights. The digest check only
makes sure the program run is the file that was imported.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from . import module_dir
from .errors import DeviceRefusedError, DeviceTimeoutError, TransportError
from .mgmt import messages as m
from .mgmt.device import Device, open_device
from .mgmt.transport import Endpoint

EXIT_CANNOT_RUN = 126
"""Exit status sent when the program was not run: digest mismatch, not executable."""
EXIT_NOT_FOUND = 127
"""Exit status sent when no module directory or no entry file was found."""
FEED_MARGIN = 5.0
"""Seconds a feed request may take beyond --timeout (the device holds it up to 5 s)."""
KILL_GRACE = 1.0
"""Seconds past the device's deadline before the program is killed (the device has stopped
waiting by then, so its late answer is dropped there)."""
RECONNECT_DELAY = 1.0
READ_CHUNK = 4096


@dataclass(frozen=True)
class Call:
    """One host tool call as the device sent it (m.FeedResponse, checked)."""

    id: int
    tool: str
    entry: str
    sha256: str
    args: tuple[str, ...]
    output_max: int
    timeout_ms: int


@dataclass(frozen=True)
class Outcome:
    """What goes back: the exit status (negative: the signal that ended the program), the
    output (at most output_max bytes) and whether more was written."""

    exit: int
    output: bytes
    truncated: bool = False


def call_of(answer: m.FeedResponse) -> Call | None:
    """The call in a feed answer; None for `{}`. A partial call is a TransportError."""
    fields = (answer.id, answer.tool, answer.entry, answer.sha256, answer.args,
              answer.output_max, answer.timeout_ms)
    if all(f is None for f in fields):
        return None
    if (answer.id is None or answer.tool is None or answer.entry is None
            or answer.sha256 is None or answer.args is None or answer.output_max is None
            or answer.timeout_ms is None):
        raise TransportError("feed: the device sent a call with fields missing "
                             "(docs/mgmt-group.md)")
    return Call(answer.id, answer.tool, answer.entry, answer.sha256, tuple(answer.args),
                answer.output_max, answer.timeout_ms)


def find_module(dirs: Sequence[Path], tool: str) -> Path | None:
    """The module directory of @tool: a DIR that is that module's directory (its manifest's
    name), or DIR/TOOL that is; the first in the order given."""
    for folder in dirs:
        for candidate in (folder, folder / tool):
            try:
                text = (candidate / "module.manifest").read_bytes()
            except OSError:
                continue
            if module_dir._keys(text).get("name") == tool:
                return candidate
    return None


def _failed(status: int, message: str) -> Outcome:
    return Outcome(status, f"agent-host feed: {message}\n".encode())


def check_entry(call: Call, dirs: Sequence[Path]) -> Path | Outcome:
    """The entry program to run, or the Outcome that refuses the call."""
    folder = find_module(dirs, call.tool)
    if folder is None:
        shown = ", ".join(str(d) for d in dirs)
        return _failed(EXIT_NOT_FOUND, f"no module directory of tool {call.tool} in {shown}")
    if call.entry in ("", ".", "..") or "/" in call.entry or "\\" in call.entry:
        return _failed(EXIT_CANNOT_RUN, f"entry {call.entry!r} is not a file name")
    entry = folder / call.entry
    try:
        data = entry.read_bytes()
    except OSError as err:
        return _failed(EXIT_NOT_FOUND, f"cannot read {entry}: {err.strerror or err}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != call.sha256:
        return _failed(EXIT_CANNOT_RUN, f"{entry}: SHA-256 {digest} is not the digest the "
                                        f"device recorded at import ({call.sha256}); not run")
    return entry


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    """Everything @stream yields until its end, kept up to @limit bytes; (kept, cut)."""
    kept = bytearray()
    cut = False
    while chunk := await stream.read(READ_CHUNK):
        room = limit - len(kept)
        if len(chunk) > room:
            cut = True
            chunk = chunk[:max(room, 0)]
        kept += chunk
    return bytes(kept), cut


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def run_call(call: Call, dirs: Sequence[Path], kill_after: float | None = None) -> Outcome:
    """Check and run @call's entry program; its Outcome. The program is killed (with the
    process group it leads) @kill_after seconds after the start (default: the device's
    remaining wait plus KILL_GRACE)."""
    checked = check_entry(call, dirs)
    if isinstance(checked, Outcome):
        return checked
    entry = checked
    wait = call.timeout_ms / 1000 + KILL_GRACE if kill_after is None else kill_after
    try:
        process = await asyncio.create_subprocess_exec(
            str(entry.resolve()), *call.args, cwd=str(entry.parent),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return _failed(EXIT_CANNOT_RUN, f"cannot run {entry}: {reason}")
    assert process.stdout is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    try:
        output, cut = await asyncio.wait_for(_read_bounded(process.stdout, call.output_max),
                                             wait)
        status = await asyncio.wait_for(process.wait(), max(deadline - loop.time(), 0.0))
    except asyncio.TimeoutError:
        _kill(process)
        await process.wait()
        return _failed(-signal.SIGKILL, f"{entry} killed after {wait:.1f} s")
    finally:
        if process.returncode is None:
            _kill(process)
            await process.wait()
    return Outcome(status, output, cut)


def fit_output(device: Device, call_id: int, outcome: Outcome) -> Outcome:
    """@outcome with its output cut to what one result request carries (truncated then)."""
    limit = device.transport.max_unencoded_size

    def size(n: int) -> int:
        return len(m.ResultWrite(id=call_id, exit=outcome.exit, output=b"\0" * n,
                                 truncated=True, sequence=0).BYTES)

    if size(len(outcome.output)) <= limit:
        return outcome
    room = max(limit - size(0), 0)
    while room > 0 and size(room) > limit:
        room -= 1
    return Outcome(outcome.exit, outcome.output[:room], True)


class StatusLine:
    """One line that says where the feeder stands: rewritten in place on a terminal, a new
    line only when it changes otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.shown = ""
        self.tty = self.stream.isatty()

    def show(self, text: str) -> None:
        if text == self.shown:
            return
        self.shown = text
        if self.tty:
            self.stream.write(f"\r\x1b[K{text}")
        else:
            self.stream.write(f"{text}\n")
        self.stream.flush()

    def log(self, text: str, out: TextIO | None = None) -> None:
        """A permanent line on stdout (each call), the status line shown again below it."""
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        target = out or sys.stdout
        target.write(f"{text}\n")
        target.flush()
        if self.tty and self.shown:
            self.stream.write(self.shown)
            self.stream.flush()


def _describe(call: Call, outcome: Outcome) -> str:
    args = " ".join(call.args)
    what = f"exit {outcome.exit}" if outcome.exit >= 0 else f"signal {-outcome.exit}"
    cut = ", truncated" if outcome.truncated else ""
    return f"call {call.id}: {call.tool} {args}".rstrip() + \
        f": {what}, {len(outcome.output)} bytes{cut}"


async def serve_device(device: Device, dirs: Sequence[Path], status: StatusLine,
                       where: str) -> None:
    """Poll and answer calls until the connection fails (TransportError, timeout)."""
    status.show(f"feed: connected to {where}; waiting for host tool calls")
    while True:
        answer: m.FeedResponse = await device.call(
            m.FeedRead(sequence=device._next_sequence()), "feed", device.timeout + FEED_MARGIN)
        call = call_of(answer)
        if call is None:
            continue
        outcome = fit_output(device, call.id, await run_call(call, dirs))
        request = m.ResultWrite(id=call.id, exit=outcome.exit, output=outcome.output,
                                truncated=outcome.truncated, sequence=device._next_sequence())
        try:
            await device.call(request, f"result {call.id}")
            status.log(_describe(call, outcome))
        except DeviceRefusedError as err:
            status.log(f"{_describe(call, outcome)}; not taken: {err.reason}")


async def serve(endpoint: Endpoint, dirs: Sequence[Path], timeout: float,
                status: StatusLine | None = None) -> int:
    """Feed @endpoint's host tool calls for ever; reconnects after a lost connection."""
    status = status or StatusLine()
    while True:
        try:
            async with open_device(endpoint, timeout) as device:
                await serve_device(device, dirs, status, str(endpoint))
        except (TransportError, DeviceTimeoutError) as err:
            status.show(f"feed: {err}; reconnecting")
        await asyncio.sleep(RECONNECT_DELAY)
