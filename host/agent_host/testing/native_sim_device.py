"""native_sim's firmware image under Twister, driven byte by byte on a pseudo terminal.

Twister's pytest harness would run ``zephyr.exe`` on pipes and queue its output line by line
(twister_harness.device.binary_adapter), which cannot wait for text that does not end its
line (the hidden key prompt, ``Allow once? [y/N] ``) and drops empty lines. On native_sim the
fixtures therefore launch the image themselves: ``<build>/zephyr/zephyr.exe
--flash=<build>/agent-flash.bin`` with its stdin and stdout on a pty (the scenarios build it
with CONFIG_UART_NATIVE_PTY_0_ON_STDINOUT=y, so the shell is on stdin/stdout) and read that
pty as the simulator's (:class:`.sim_device.PtyConsole`). Twister still runs pytest and
collects its report; the harness's DeviceAdapter only gives the build directory.

native_sim's flash is a file on the host too, so the tests can read and prepare the agent's
LittleFS volume: :class:`FlashPartition` is the storage partition inside that file, with the
geometry Zephyr's littlefs uses there, both read from the build's devicetree
(``<build>/zephyr/zephyr.dts``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..errors import DeviceError
from .sim_device import PROMPT, PtyConsole, terminate
from .twister_device import SimOnlyError, TwisterDevices

#: native_sim's flash image in the scenario's build directory (native_sim's default is
#: flash.bin in the working directory).
FLASH_IMAGE = "agent-flash.bin"

# Escape sequences: CSI (colours, cursor moves, erase) and the two-byte ones such as ESC 7 /
# ESC 8 (save and restore the cursor). The Zephyr shell draws its prompt and line editing
# with them.
_ESCAPES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|[0-Z\\-~])")
# The start of one that a read cut off: ESC, or ESC [ and parameters without the final byte.
_CUT_ESCAPE = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*)?")


@dataclass(frozen=True)
class LittleFsGeometry:
    """What a LittleFS volume was formatted with (littlefs's lfs_config).

    Attributes:
        block_size: Bytes per block.
        read_size: Smallest read.
        prog_size: Smallest program (write).
        cache_size: Read and program cache.
        lookahead_size: Lookahead buffer.
        block_cycles: Erase cycles before a metadata block moves.
    """

    block_size: int
    read_size: int
    prog_size: int
    cache_size: int
    lookahead_size: int
    block_cycles: int


@dataclass(frozen=True)
class FlashPartition:
    """A partition of a flash image file, read and written as bytes of its own.

    Attributes:
        path: The image file.
        offset: Where the partition starts in the file.
        size: Its size in bytes.
        littlefs: The geometry of the LittleFS volume on it.
    """

    path: Path
    offset: int
    size: int
    littlefs: LittleFsGeometry

    def read_bytes(self) -> bytes:
        """The partition's bytes (the device must be stopped)."""
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read(self.size)
        if len(data) != self.size:
            raise DeviceError(f"{self.path} ends inside the partition at {self.offset:#x} "
                              f"(+{self.size:#x})")
        return data

    def write_bytes(self, data: bytes) -> int:
        """Replace the partition's bytes with @data, which must fill it exactly."""
        if len(data) != self.size:
            raise ValueError(f"{len(data)} bytes for a partition of {self.size}")
        with self.path.open("r+b") as f:
            f.seek(self.offset)
            f.write(data)
        return len(data)


@dataclass
class _DtsNode:
    name: str
    labels: list[str]
    parent: _DtsNode | None
    props: dict[str, str] = field(default_factory=dict)


_DTS_NODE = re.compile(r"^\s*((?:[A-Za-z_]\w*:\s*)*)([^\s{}=;]+)\s*\{\s*(?://.*|/\*.*)?$")
_DTS_PROP = re.compile(r"^\s*([^\s=;{}]+)\s*=\s*(.*?);")
_DTS_END = re.compile(r"^\s*\};")


def _dts_nodes(text: str) -> list[_DtsNode]:
    """The nodes of a devicetree source as Zephyr writes its zephyr.dts (one node or
    property per line), with their labels and properties (values as written)."""
    nodes: list[_DtsNode] = []
    stack: list[_DtsNode] = []
    for line in text.splitlines():
        if m := _DTS_NODE.match(line):
            labels = [x.strip() for x in m.group(1).split(":") if x.strip()]
            node = _DtsNode(m.group(2), labels, stack[-1] if stack else None)
            nodes.append(node)
            stack.append(node)
        elif _DTS_END.match(line):
            if stack:
                stack.pop()
        elif (m := _DTS_PROP.match(line)) and stack:
            stack[-1].props[m.group(1)] = m.group(2).strip()
    return nodes


def _cells(value: str, what: str) -> list[int]:
    m = re.fullmatch(r"<\s*([^<>]*)>", value.strip())
    if m is None:
        raise DeviceError(f"{what}: {value!r} is not a list of cells")
    return [int(x, 0) for x in m.group(1).split()]


def _reference(value: str) -> str | None:
    """The label a single-phandle property such as ``< &storage_partition >`` refers to."""
    m = re.fullmatch(r"<\s*&([A-Za-z_]\w*)\s*>", value.strip())
    return m.group(1) if m else None


def storage_partition(build_dir: Path, image: Path, label: str = "storage_partition"
                      ) -> FlashPartition:
    """The partition labelled @label in native_sim's flash image @image, with the geometry of
    the LittleFS fstab entry on it, as the build at @build_dir has them.

    The partition's ``reg`` is its offset and size in the flash (native_sim's image file is
    that flash from offset 0). Zephyr's littlefs takes as block size the largest erase page of
    the flash (subsys/fs/littlefs_fs.c, get_block_size()), which on the simulated flash is the
    flash node's ``erase-block-size``; the other sizes are the fstab node's properties.

    Raises:
        DeviceError: The devicetree has no such partition, or no LittleFS entry on it.
    """
    dts = build_dir / "zephyr" / "zephyr.dts"
    nodes = _dts_nodes(dts.read_text())
    part = next((n for n in nodes if label in n.labels), None)
    if part is None or "reg" not in part.props:
        raise DeviceError(f"{dts}: no partition labelled {label}")
    reg = _cells(part.props["reg"], f"{label} reg")
    if len(reg) != 2:
        raise DeviceError(f"{dts}: {label} reg {reg} is not one offset and one size")
    flash = part.parent.parent if part.parent is not None else None  # flash@0 / partitions
    if flash is None or "erase-block-size" not in flash.props:
        raise DeviceError(f"{dts}: the flash of {label} has no erase-block-size")
    erase_block = _cells(flash.props["erase-block-size"], "erase-block-size")[0]
    fstab = next((n for n in nodes if n.props.get("compatible") == '"zephyr,fstab,littlefs"'
                  and _reference(n.props.get("partition", "")) == label), None)
    if fstab is None:
        raise DeviceError(f"{dts}: no zephyr,fstab,littlefs entry on {label}")
    sizes = {}
    for name in ("read-size", "prog-size", "cache-size", "lookahead-size", "block-cycles"):
        if name not in fstab.props:
            raise DeviceError(f"{dts}: the fstab entry {fstab.name} has no {name}")
        sizes[name] = _cells(fstab.props[name], name)[0]
    geometry = LittleFsGeometry(erase_block, sizes["read-size"], sizes["prog-size"],
                                sizes["cache-size"], sizes["lookahead-size"],
                                sizes["block-cycles"])
    return FlashPartition(image, reg[0], reg[1], geometry)


class NativeSimDevice(PtyConsole):
    """One run of native_sim's ``zephyr.exe`` with its console (stdin/stdout) on a pty.

    The transcript holds what the console printed without its escape sequences (the Zephyr
    shell colours its prompt); line ends stay as they came.

    Args:
        argv: The command line.
        cwd: Its working directory (the build directory, as the harness runs it).
        prompt: The shell prompt (CONFIG_SHELL_PROMPT_UART of the build).
        log: A file to append the console output to (the harness's handler.log), or None.
        stderr_path: Where the image's stderr goes.
        poke_after: Seconds of silence while waiting for the first prompt after which Enter
            is typed.
    """

    #: Zephyr's shell hands bypass input over in chunks and drops what a callback leaves of
    #: one: the port discards the rest of that line and prints a notice
    #: (app/src/port/zephyr/console.c).
    typed_ahead_kept = False

    def __init__(self, argv: list[str], cwd: Path, prompt: bytes = PROMPT,
                 log: Path | None = None, stderr_path: Path | None = None,
                 poke_after: float = 5.0) -> None:
        super().__init__(prompt)
        self.argv = list(argv)
        self.cwd = cwd
        self.log_path = log
        self.stderr_path = stderr_path or cwd / "agent-stderr.log"
        self.poke_after = poke_after
        self.proc: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self._cut = b""  # the start of an escape sequence the last read cut off
        self._log: BinaryIO | None = None
        self._stderr: BinaryIO | None = None

    # -- life cycle ------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> str:
        """Launch the image on a new pty and wait for its shell prompt; return the boot output.
        """
        master, slave = os.openpty()
        # Raw: no echo and no line-end translation by the pty, the bytes as the UART sends
        # them (native_sim's stdin is read without changing the terminal's mode).
        tty.setraw(slave)
        self._stderr = self.stderr_path.open("wb")
        if self.log_path is not None:
            self._log = self.log_path.open("ab")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=slave, stdout=slave,
                                         stderr=self._stderr, cwd=self.cwd,
                                         start_new_session=True)
        except OSError as err:
            os.close(master)
            raise DeviceError(f"cannot run {self.argv[0]}: {err}") from err
        finally:
            os.close(slave)
        self.fd = master
        return self.wait_for_prompt(timeout)

    def wait_for_prompt(self, timeout: float = 30.0) -> str:
        """Wait for the shell prompt; type Enter after ``poke_after`` seconds of silence.

        The pty is open before the image starts, so the boot prompt is normally read as it is
        printed and nothing is typed.
        """
        mark = len(self.transcript)
        deadline = time.monotonic() + timeout
        while self.prompt not in self.transcript[mark:]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                tail = bytes(self.transcript[mark:])[-400:]
                raise DeviceError(f"no shell prompt {self.prompt!r} within {timeout} s; got "
                                  f"{tail!r}; stderr: {self.stderr_text()[-400:]!r}")
            if not self._read_some(min(remaining, self.poke_after)):
                # CR, not LF: Zephyr's shell takes an LF that follows a CR as the second
                # half of CR LF and ignores it (subsys/shell/shell.c, process_nl).
                self.write(b"\r")
        self.drain()
        return self.transcript[mark:].decode(errors="replace")

    def stop(self, timeout: float = 10.0) -> int:
        """Stop the image (SIGTERM, native_sim exits cleanly on it); return its exit status."""
        code = self.returncode if self.returncode is not None else 0
        if self.proc is not None:
            code = terminate(self.proc, timeout)
            self.returncode = code
            self.proc = None
        if self.fd >= 0:
            try:
                while self._read_some(0):
                    pass
            except DeviceError:
                pass  # the pty reports EIO once the image has closed its side
            os.close(self.fd)
            self.fd = -1
        for f in (self._log, self._stderr):
            if f is not None:
                f.close()
        self._log = self._stderr = None
        return code

    def stderr_text(self) -> str:
        """What the image wrote to stderr (native_sim's warnings and errors)."""
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    # -- console ---------------------------------------------------------------------------
    def _receive(self, chunk: bytes) -> None:
        data = self._cut + chunk
        self._cut = b""
        at = data.rfind(b"\x1b")
        if at >= 0 and _CUT_ESCAPE.fullmatch(data, at):
            data, self._cut = data[:at], data[at:]
        text = _ESCAPES.sub(b"", data)
        self.transcript += text
        if self._log is not None:
            self._log.write(text)
            self._log.flush()


class NativeSimDevices(TwisterDevices[NativeSimDevice]):
    """The conftest's device factory on native_sim under Twister.

    As the simulator's factory, each factory (one per test) starts its devices on one flash
    image that is new for the test: the image file is removed when the factory is made and
    native_sim makes an erased one at the first start; later starts and restarts keep it.

    Args:
        build_dir: The scenario's build directory (the harness's ``app_build_dir``).
        prompt: The shell prompt.
        extra_test_args: Twister's extra arguments for the image (``--extra-test-args``).
        log: The harness's handler.log, where the console output is appended, or None.
        platform: The Twister platform.
    """

    def __init__(self, build_dir: Path, prompt: bytes = PROMPT, extra_test_args: str = "",
                 log: Path | None = None, platform: str = "") -> None:
        super().__init__(build_dir, "native", platform)
        self.prompt = prompt
        self.extra_test_args = extra_test_args
        self.log = log
        self.exe = build_dir / "zephyr" / "zephyr.exe"
        self.image = build_dir / FLASH_IMAGE
        self._flash: FlashPartition | None = None
        self.image.unlink(missing_ok=True)

    @property
    def flash(self) -> FlashPartition:
        """The storage partition (the agent's /lfs) in the flash image."""
        if self._flash is None:
            self._flash = storage_partition(self.build_dir, self.image)
        return self._flash

    def command(self) -> list[str]:
        """The image's command line."""
        return [str(self.exe), f"--flash={self.image}", *shlex.split(self.extra_test_args)]

    def start(self, extra_args: list[str] | None = None) -> NativeSimDevice:
        """Launch the image on the test's flash image and wait for its prompt."""
        if extra_args:
            raise SimOnlyError(f"simulator options {extra_args!r} have no native_sim "
                               "equivalent: mark the test sim_only")
        stderr = self.build_dir / f"agent-stderr-{len(self.devices)}.log"
        dev = NativeSimDevice(self.command(), self.build_dir, self.prompt, self.log, stderr)
        self.devices.append(dev)
        dev.start()
        return dev

    def restart(self, dev: NativeSimDevice) -> NativeSimDevice:
        """Stop @dev and launch again on the same flash image."""
        code = dev.stop()
        if code != 0:
            raise DeviceError(f"zephyr.exe exited with {code}: {dev.stderr_text()[-400:]}")
        return self.start()

    def close(self) -> None:
        """Stop every device; raise when one exited with an error status."""
        failed = [(dev, dev.stop()) for dev in self.devices]
        failed = [(dev, code) for dev, code in failed if code != 0]
        if failed:
            dev, code = failed[0]
            raise DeviceError(f"zephyr.exe exited with {code}: {dev.stderr_text()[-400:]}")
