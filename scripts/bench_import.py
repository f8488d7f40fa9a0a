#!/usr/bin/env python3
"""Benchmark of the host import (`agent-host import`) over a serial line at 115200 baud.

The simulator's console is a pty; between it and the host sits a relay (a child process)
that passes each direction on at the rate of a UART at 115200 baud 8N1 (11520 bytes/s):
a byte is handed on only when the line would have finished sending it, so what has been
written never runs ahead of the rate, and the host's writes wait as they would for a UART
(the relay takes at most a UART FIFO's 16 bytes ahead). The host is agent_host's Device
with smpclient's serial transport, the one `agent-host import` uses, on the relay's pty.

A tool module of about 16 KiB (a manifest and an entry file) is imported into a fresh
simulator, once per window (requests, the head and the parts, on the way before the first
is answered: 1 is stop and wait). Reported, from the bytes the relay counted and the time the import took:

  (a) efficiency: payload bytes (manifest + body) / bytes the host put on the wire;
  (b) speed: payload bytes per second / 11520, the share of the raw UART rate.

The goal (issue 14) is (b) >= 70 %. Base64 in lines of 124 characters with 2 marker bytes
and a newline carries 93 bytes in 127, 73.2 % at most, before the SMP header, the CBOR map
and the answers. This measures; tests/test_bench_import.py checks it with a smaller module.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import tty
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "host"))

from agent_host.mgmt import Endpoint, open_device
from agent_host.module_dir import ModuleText
from agent_host.sim import build as build_sim
from agent_host.testing.sim_device import PROMPT, PtyConsole, SimDevice, terminate

BAUD = 115200
RATE = BAUD // 10
"""Bytes per second of 8N1: a start bit, 8 data bits, a stop bit."""
FIFO = 16
"""Bytes the relay takes from a sender before the line has sent them (a 16550's FIFO)."""
GOAL = 0.70
DEFAULT_SIZE = 16 * 1024


@dataclass(frozen=True)
class Result:
    """One import's measured figures."""

    window: int
    payload: int
    wire_up: int
    """Bytes the host put on the wire during the import (host to device)."""
    wire_down: int
    """Bytes the device sent back meanwhile (its answers and any console output)."""
    seconds: float
    parts: int
    state: str

    @property
    def efficiency(self) -> float:
        return self.payload / self.wire_up

    @property
    def speed(self) -> float:
        """Payload bytes per second as a share of the raw UART rate."""
        return self.payload / self.seconds / RATE


def tool_module(size: int) -> ModuleText:
    """A tool module of @size bytes in all: a manifest and a Lua entry file."""
    manifest = (b"name: bench\nkind: tool\ndescription: the import benchmark's payload\n"
                b"runtime: lua\nentry: bench.lua\nrisk: read\n")
    lines: list[bytes] = []
    length = 0
    while length < size - len(manifest):
        lines.append(f"local v{len(lines)} = {len(lines) * 7919 % 100003} -- "
                     f"{'x' * (len(lines) % 37)}\n".encode())
        length += len(lines[-1])
    body = b"".join(lines)[: size - len(manifest) - 1] + b"\n"
    return ModuleText("bench", "tool", manifest, body, "bench.lua")


def _pace(src: int, dst: int, count: Any, stop: Any, rate: float) -> None:
    """Copy @src to @dst as a line of @rate bytes/s would: a reader notes when each byte
    arrived; each FIFO-sized chunk is written when the line would have sent its last byte
    (sent back to back from its arrival or the previous chunk's end, whichever is later).
    The schedule is computed, not slept: a late wake-up never delays the following chunks,
    and nothing is written before its time."""
    import threading
    from collections import deque

    queue: deque[tuple[float, bytes]] = deque()
    ready = threading.Condition()

    def reader() -> None:
        while not stop.is_set():
            readable, _, _ = select.select([src], [], [], 0.05)
            if not readable:
                continue
            try:
                data = os.read(src, 4096)
            except OSError:
                data = b""
            with ready:
                queue.append((time.monotonic(), data))
                ready.notify()
            if not data:
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    free_at = 0.0
    while True:
        with ready:
            while not queue and not stop.is_set():
                ready.wait(0.05)
            if not queue:
                return
            arrived, data = queue.popleft()
            if len(data) > FIFO:
                queue.appendleft((arrived, data[FIFO:]))
                data = data[:FIFO]
        if not data:
            return
        free_at = max(arrived, free_at) + len(data) / rate
        while (wait := free_at - time.monotonic()) > 0:
            time.sleep(wait)
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(dst, view):]
            except OSError:
                return
        with count.get_lock():
            count.value += len(data)


def _relay(host_fd: int, device_fd: int, up: Any, down: Any, stop: Any, rate: float) -> None:
    import threading

    threads = [threading.Thread(target=_pace, args=(host_fd, device_fd, up, stop, rate)),
               threading.Thread(target=_pace, args=(device_fd, host_fd, down, stop, rate))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class PacedLine:
    """A pty for the host whose bytes reach @device_fd, and back, at @rate bytes/s."""

    def __init__(self, device_fd: int, rate: float = RATE) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        ctx = mp.get_context("fork")
        self.up = ctx.Value("q", 0)
        self.down = ctx.Value("q", 0)
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=_relay, args=(self.master, device_fd, self.up,
                                                       self.down, self._stop, rate), daemon=True)
        self._proc.start()

    def counts(self) -> tuple[int, int]:
        return int(self.up.value), int(self.down.value)

    def close(self) -> None:
        self._stop.set()
        self._proc.join(5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        os.close(self.master)
        os.close(self._slave)


async def _import(path: str, text: ModuleText, window: int, line: PacedLine
                  ) -> tuple[int, int, float, int, str]:
    async with open_device(Endpoint("serial", path), timeout=20.0) as device:
        up0, down0 = line.counts()
        start = time.monotonic()
        done = await device.import_text(text, window=window)
        seconds = time.monotonic() - start
        up1, down1 = line.counts()
    return up1 - up0, down1 - down0, seconds, done.parts, done.state


def measure(exe: Path, scratch: Path, text: ModuleText, window: int,
            rate: float = RATE) -> Result:
    """Import @text into a fresh simulator over a paced line; the measured figures."""
    dut = SimDevice(exe, scratch / f"flash-w{window}.bin", ["--modules="])
    dut.start()
    try:
        result = _measure_on(dut.fd, text, window, rate)
    finally:
        code = dut.stop()
    if code != 0:
        raise RuntimeError(f"the simulator exited with {code}: {dut.stderr_text()[-2000:]}")
    return result


def measure_qemu(elf: Path, text: ModuleText, window: int, rate: float = RATE) -> Result:
    """The same on the firmware: @elf (an mps2/an385 build) under QEMU, its UART on a pty."""
    proc = subprocess.Popen(["qemu-system-arm", "-machine", "mps2-an385", "-cpu", "cortex-m3",
                             "-nographic", "-monitor", "none", "-serial", "pty", "-kernel",
                             str(elf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        found = None
        while found is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("QEMU did not announce its serial pty")
            found = re.search(rb"(/dev/pts/\d+)", line)
        console = PtyConsole()
        console.fd = os.open(found.group(1).decode(), os.O_RDWR | os.O_NOCTTY)
        tty.setraw(console.fd)
        try:
            console.write(b"\r")
            console.read_until(PROMPT, 30)
            console.drain()
            return _measure_on(console.fd, text, window, rate)
        finally:
            os.close(console.fd)
    finally:
        terminate(proc, 10)


def _measure_on(device_fd: int, text: ModuleText, window: int, rate: float) -> Result:
    line = PacedLine(device_fd, rate)
    try:
        up, down, seconds, parts, state = asyncio.run(_import(line.path, text, window, line))
    finally:
        line.close()
    return Result(window, len(text.text), up, down, seconds, parts, state)


def report(results: list[Result]) -> str:
    rows = [("| window | payload B | host->device B | device->host B | parts | seconds "
             "| (a) payload/wire | (b) speed / 11520 B/s |"),
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        rows.append(f"| {r.window} | {r.payload} | {r.wire_up} | {r.wire_down} | {r.parts} "
                    f"| {r.seconds:.3f} | {r.efficiency:.1%} | {r.speed:.1%} |")
    best = max(results, key=lambda r: r.speed)
    rows.append("")
    rows.append(f"goal (b) >= {GOAL:.0%}: {'met' if best.speed >= GOAL else 'not met'} "
                f"(best {best.speed:.1%}, window {best.window})")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sim-build-dir", type=Path, default=REPO / "build" / "sim-asan",
                        help="the simulator's build directory (built when needed)")
    parser.add_argument("--qemu-mps2", type=Path, metavar="ELF",
                        help="measure the firmware instead: this mps2/an385 zephyr.elf under "
                             "qemu-system-arm")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE,
                        help=f"bytes of the module (default {DEFAULT_SIZE})")
    parser.add_argument("--window", type=int, action="append",
                        help="requests on the way at once (repeatable; default: 1 and 2)")
    args = parser.parse_args(argv)
    text = tool_module(args.size)
    windows = args.window or [1, 2]
    if args.qemu_mps2 is not None:
        results = [measure_qemu(args.qemu_mps2, text, w) for w in windows]
        where = f"the firmware ({args.qemu_mps2}) under QEMU over its serial pty"
    else:
        exe = args.sim_build_dir / "agent_sim"
        if not exe.is_file():
            exe = build_sim(args.sim_build_dir, sanitize=True, quiet=True)
        with tempfile.TemporaryDirectory(prefix="bench-import-") as scratch:
            results = [measure(exe, Path(scratch), text, w) for w in windows]
        where = "the simulator over its pty"
    print(f"Import of a {len(text.text)}-byte tool module at {BAUD} baud 8N1 ({RATE} B/s) "
          f"each way, into {where}:\n")
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
