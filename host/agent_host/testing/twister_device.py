"""The device under test as the Twister pytest harness gives it, behind SimDevice's interface.

Under Twister (`harness: pytest` scenarios in twister_tests/, which run pytest with
``--twister-harness``) the fixtures of tests/conftest.py reach the device in one of two ways:

- native_sim (device type ``native``): the fixtures launch the image themselves on a pty and
  read its console byte by byte (:mod:`.native_sim_device`); its flash image is a file on the
  host.
- QEMU and boards (``qemu``, ``hardware``): the harness owns the device (QEMU on a FIFO, a
  board on its serial port) and a reader thread queues what it prints as whole lines
  (twister_harness/device/device_adapter.py in Zephyr's scripts/pylib/pytest-twister-harness).
  :class:`TwisterDevice` puts that DeviceAdapter behind the interface the e2e tests use on
  the simulator (:class:`.sim_device.SimDevice`): ``exec_command``, ``write``, ``read_until``,
  ``read_until_any``, ``drain``, ``transcript``, ``stop``. :class:`HarnessDevices` stands in
  for the conftest's simulator factory (``start``, ``restart``, ``devices``).

What a line reader cannot give, and what the tests therefore leave to native_sim and the
simulator (marked ``needs_raw_console``; twister_tests/README.md lists them):

- Text that does not end its line (the shell prompt, ``Allow once? [y/N] ``, the hidden key
  prompt) arrives only once something follows it. Waiting for the *shell* prompt works: Enter
  typed at the shell prints a fresh prompt and ends the line of the one before, as the
  harness's own ``Shell.wait_for_prompt`` does. Nothing else can be waited for that way.
- The reader drops empty lines, so output with a blank line reads differently.
- The harness reports neither the exit status of the image nor a separate stderr.

Nor is the device's flash a file on the host there (``needs_host_flash``).
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ..errors import DeviceError
from .sim_device import PROMPT, echo_lines

#: What the firmware prints when input typed right after a hidden entry was lost.
LOST_TYPED_AHEAD = b"agent: input typed right after the entry was lost; type that line again"

#: Markers of tests that need what only native_sim gives among the Twister devices (and the
#: simulator): deselected on QEMU and boards, where the harness's line reader is the console.
LINE_DEVICE_MARKERS = ("needs_raw_console", "needs_host_flash")
#: Deselected on QEMU too: its flash is the RAM-backed flash simulator, erased at every launch.
QEMU_MARKERS = ("needs_persistent_flash",)

# Escape sequences: CSI (colours, cursor moves, erase) and the two-byte ones such as ESC 7 /
# ESC 8 (save and restore the cursor). The Zephyr shell draws its prompt and line editing
# with them.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[0-Z\\-~])")


class SimOnlyError(DeviceError):
    """A test used something only the host simulator has; it needs the sim_only marker."""


class HarnessAdapter(Protocol):
    """What this module uses of twister_harness.device.device_adapter.DeviceAdapter."""

    device_config: Any
    command: list[str]

    def launch(self) -> None: ...

    def close(self) -> None: ...

    def readline(self, *, timeout: float | None = None, print_output: bool = True) -> str: ...

    def write(self, data: bytes) -> None: ...


def under_twister(options: object) -> bool:
    """Whether pytest runs under the Twister harness (its plugin's ``--twister-harness``).

    Args:
        options: ``config.option`` of the pytest run.
    """
    return bool(getattr(options, "twister_harness", False))


def raw_console(device_type: str) -> bool:
    """Whether the fixtures read the console of a Twister device of @device_type byte by byte
    and reach its flash image on the host (native_sim), rather than through the harness's
    line reader."""
    return device_type == "native"


def split_for_device(items: Sequence[Any], device_type: str) -> tuple[list[Any], list[Any]]:
    """Split collected test items into (those Twister runs on a device of @device_type, those
    it deselects): ``sim_only`` everywhere, and the :data:`LINE_DEVICE_MARKERS` unless the
    device has a raw console."""
    markers = ("sim_only",) + (() if raw_console(device_type) else LINE_DEVICE_MARKERS)
    if device_type == "qemu":
        markers += QEMU_MARKERS
    keep: list[Any] = []
    drop: list[Any] = []
    for item in items:
        marked = any(item.get_closest_marker(m) is not None for m in markers)
        (drop if marked else keep).append(item)
    return keep, drop


def clean_line(line: str) -> str:
    """A console line without its escape sequences."""
    return _ESCAPES.sub("", line)


class TwisterDevice:
    """One launch of the harness's device, read line by line into a transcript.

    Args:
        adapter: The harness's DeviceAdapter (already launched by :class:`TwisterDevices`).
        timeout_error: The exception the adapter's ``readline`` raises when no line came in
            time (twister_harness.exceptions.TwisterHarnessTimeoutException).
        prompt: The shell prompt (CONFIG_SHELL_PROMPT_UART of the build).
        poke_after: Seconds of silence after which Enter is typed while waiting for the
            shell prompt.
    """

    #: Zephyr's shell hands bypass input over in chunks and drops what a callback leaves of
    #: one: the port discards the rest of that line and prints LOST_TYPED_AHEAD
    #: (app/src/port/zephyr/console.c).
    typed_ahead_kept = False

    def __init__(self, adapter: HarnessAdapter, timeout_error: type[BaseException],
                 prompt: bytes = PROMPT, poke_after: float = 0.5) -> None:
        self.adapter = adapter
        self.timeout_error = timeout_error
        self.prompt = prompt
        self.poke_after = poke_after
        self._transcript = bytearray()  # every line read, escape sequences removed, CR LF ends

    # -- transcript --------------------------------------------------------------------------
    @property
    def transcript(self) -> bytearray:
        """Everything read so far, after taking in the lines already queued."""
        self._pull_pending()
        return self._transcript

    def _pull(self, timeout: float) -> bool:
        """Append the next line to the transcript; False when none came within @timeout."""
        try:
            line = self.adapter.readline(timeout=max(timeout, 0.01), print_output=True)
        except self.timeout_error:
            return False
        self._transcript += clean_line(line).encode(errors="replace") + b"\r\n"
        return True

    def _pull_pending(self) -> None:
        while self._pull(0.01):
            pass

    # -- life cycle --------------------------------------------------------------------------
    def wait_for_prompt(self, timeout: float = 30.0) -> str:
        """Wait for the shell prompt after a launch (typing Enter); return what was read."""
        mark = len(self._transcript)
        self.read_until(self.prompt, timeout, start=mark)
        self.drain()
        return self._transcript[mark:].decode(errors="replace")

    def stop(self) -> int:
        """Close the device. The harness does not report an exit status: always 0."""
        self.adapter.close()
        return 0

    def stderr_text(self) -> str:
        """Nothing: the harness merges the image's stderr into its console output."""
        return ""

    # -- console -----------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self.adapter.write(data)

    def drain(self, quiet: float = 0.3) -> bytes:
        """Read until no line has come for @quiet seconds."""
        begin = len(self._transcript)
        while self._pull(quiet):
            pass
        return bytes(self._transcript[begin:])

    def read_until(self, pattern: bytes, timeout: float = 10.0, start: int | None = None) -> bytes:
        """Read until @pattern appears in the transcript after @start; return that part.

        A pattern that ends with the shell prompt is waited for by typing Enter once the
        console has been silent for a moment (then again every ``poke_after`` seconds of
        silence): at the shell that prints a fresh prompt and ends the line of the one waited
        for. Only wait so when the device is, or is about to be, back at the shell.
        """
        begin = len(self._transcript) if start is None else start
        poke = pattern.endswith(self.prompt)
        quiet = min(0.1, self.poke_after)  # before the first Enter
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while pattern not in self._transcript[begin:]:
            now = time.monotonic()
            if now >= deadline:
                tail = bytes(self._transcript[begin:])[-400:]
                raise DeviceError(f"timed out waiting for {pattern!r}; got {tail!r}")
            if self._pull(min(deadline - now, 0.05)):
                last = time.monotonic()
            elif poke and time.monotonic() - last >= quiet:
                # CR, not LF: Zephyr's shell takes an LF that follows a CR as the second
                # half of CR LF and ignores it, so an LF poke after a line the test ended
                # with CR would never bring a prompt (subsys/shell/shell.c, process_nl).
                self.adapter.write(b"\r")
                last = time.monotonic()
                quiet = self.poke_after
        return bytes(self._transcript[begin:])

    def read_until_any(self, patterns: list[bytes], timeout: float = 10.0,
                       start: int | None = None) -> tuple[bytes, bytes]:
        """Read until one of @patterns appears after @start (see SimDevice.read_until_any).

        Patterns are only seen once their line has ended; nothing is typed meanwhile.
        """
        begin = len(self._transcript) if start is None else start
        deadline = time.monotonic() + timeout
        while True:
            tail = self._transcript[begin:]
            found = [(tail.find(p), p) for p in patterns if p in tail]
            if found:
                at, pattern = min(found)
                return pattern, bytes(tail[: at + len(pattern)])
            now = time.monotonic()
            if now >= deadline:
                raise DeviceError(f"timed out waiting for any of {patterns!r}; got "
                                  f"{bytes(tail)[-400:]!r}")
            self._pull(min(deadline - now, 0.05))

    def exec_command(self, cmd: str, timeout: float = 10.0) -> list[str]:
        """Type @cmd and Enter; return the output lines before the next prompt.

        As the harness's ``Shell.exec_command``: the command goes out with a second Enter, so
        the prompt printed after the command ends its line when the next one is printed. The
        echo is recognised even when the shell broke it over several lines (a command wider
        than the terminal), which a single-line match of the command cannot do.
        """
        self._pull_pending()
        self.adapter.write(cmd.encode() + b"\n\n")
        bare = self.prompt.decode(errors="replace").rstrip()
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        while True:
            mark = len(self._transcript)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._pull(remaining):
                raise DeviceError(f"timed out waiting for the prompt after {cmd!r}; got "
                                  f"{lines[-5:]!r}")
            line = self._transcript[mark:-2].decode(errors="replace")
            if line.rstrip() == bare:
                break
            lines.append(line)
        skip = echo_lines(lines, cmd, self.prompt.decode(errors="replace"))
        return [x for x in lines[skip:] if x != ""]

D = TypeVar("D")


class TwisterDevices(ABC, Generic[D]):
    """The conftest's device factory under Twister, as the simulator's: ``start``,
    ``restart``, ``close``, ``devices`` and ``flash``.

    :class:`.native_sim_device.NativeSimDevices` launches native_sim's image itself;
    :class:`HarnessDevices` drives the harness's QEMU or board.

    Attributes:
        build_dir: The scenario's build directory.
        device_type: The harness's device type ("native", "qemu", "hardware").
        platform: The Twister platform ("" when not given).
        devices: Every device started, in order.
    """

    def __init__(self, build_dir: Path, device_type: str, platform: str = "") -> None:
        self.build_dir = build_dir
        self.device_type = device_type
        self.platform = platform
        self.devices: list[D] = []

    @property
    @abstractmethod
    def flash(self) -> Any:
        """The device's LittleFS image on the host (see tests/flash_image.py)."""

    @abstractmethod
    def start(self, extra_args: list[str] | None = None) -> D:
        """Start a device with a fresh configuration (for the test) and wait for its prompt."""

    @abstractmethod
    def restart(self, dev: D) -> D:
        """Stop @dev and start again on the same storage."""

    @abstractmethod
    def close(self) -> None:
        """Stop every device."""


class HarnessDevices(TwisterDevices[TwisterDevice]):
    """The device factory on QEMU and boards: the harness's device, launched again per start.

    A start gives a device with a fresh agent configuration, as each simulator test starts
    on a new flash image:

    - QEMU: the board's flash is the RAM-backed flash simulator (drivers/flash/
      flash_simulator.c fills it with the erase value at boot), so every launch is fresh and
      a restart cannot keep anything: a test that restarts is deselected there
      (``needs_persistent_flash``), and an unmarked one fails in :meth:`restart`.
    - hardware: the storage partition survives flashing; a start erases the configuration
      with ``agent forget``. Files in /lfs stay.

    Args:
        adapter: The harness's session DeviceAdapter (fixture ``device_object``).
        timeout_error: See :class:`TwisterDevice`.
        prompt: The shell prompt.
        poke_after: See :class:`TwisterDevice`.
    """

    def __init__(self, adapter: HarnessAdapter, timeout_error: type[BaseException],
                 prompt: bytes = PROMPT, poke_after: float = 0.5) -> None:
        config = adapter.device_config
        super().__init__(Path(config.build_dir), str(config.type),
                         str(getattr(config, "platform", "") or ""))
        self.adapter = adapter
        self.timeout_error = timeout_error
        self.prompt = prompt
        self.poke_after = poke_after

    @property
    def flash(self) -> Path:
        """The device's flash image on the host: there is none on QEMU or a board."""
        raise SimOnlyError(f"{self.platform or self.device_type}: the flash image is read on "
                           "the host only on the simulator and native_sim: mark the test "
                           "needs_host_flash")

    def start(self, extra_args: list[str] | None = None) -> TwisterDevice:
        """Launch the device with a fresh configuration and wait for its prompt."""
        if extra_args:
            raise SimOnlyError(f"simulator options {extra_args!r} have no Twister "
                               "equivalent: mark the test sim_only")
        return self._launch(fresh=True)

    def restart(self, dev: TwisterDevice) -> TwisterDevice:
        """Stop @dev and launch again on the same storage."""
        dev.stop()
        if self.device_type == "qemu":
            raise SimOnlyError(f"{self.platform or 'QEMU'}: the flash simulator is in RAM, "
                               "nothing survives a relaunch: mark the test "
                               "needs_persistent_flash")
        return self._launch(fresh=False)

    def close(self) -> None:
        self.adapter.close()

    def _launch(self, fresh: bool) -> TwisterDevice:
        self.adapter.close()
        # DeviceAdapter.launch() generates the command (with the extra test arguments) when
        # none is set.
        self.adapter.command = []
        dev = TwisterDevice(self.adapter, self.timeout_error, self.prompt, self.poke_after)
        self.devices.append(dev)
        self.adapter.launch()
        dev.wait_for_prompt()
        if fresh and self.device_type == "hardware":
            out = dev.exec_command("agent forget")
            if out != ["agent configuration erased"]:
                raise DeviceError(f"agent forget answered {out!r}")
        return dev
