"""The Twister side of the DUT abstraction.

QEMU and boards (agent_host.testing.twister_device) against a fake DeviceAdapter that behaves
as the harness's line reader in front of a Zephyr shell: whole lines only, no empty lines, a
prompt that ends its line only when something follows it, colour codes around the prompt and
an echo broken at the terminal width.

native_sim (agent_host.testing.native_sim_device) against a fake zephyr.exe with such a shell
on its stdin/stdout, read byte by byte on a pty; its storage partition in a flash image, found
in a zephyr.dts as Zephyr writes it and read with littlefs-python.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import flash_image
import pytest
from agent_host.errors import DeviceError
from agent_host.testing.native_sim_device import (
    FLASH_IMAGE,
    FlashPartition,
    LittleFsGeometry,
    NativeSimDevice,
    NativeSimDevices,
    storage_partition,
)
from agent_host.testing.sim_device import PROMPT
from agent_host.testing.twister_device import (
    HarnessDevices,
    SimOnlyError,
    TwisterDevice,
    TwisterDevices,
    clean_line,
    raw_console,
    split_for_device,
    under_twister,
)
from littlefs import LittleFS
from littlefs.context import UserContext

END = "[Esc or Ctrl-X returns to the shell]"
WIDTH = 80
SHOWN_PROMPT = "\x1b[1;32muart:~$ \x1b[m"  # how the Zephyr shell colours its prompt


class FakeTimeout(Exception):
    pass


class FakeShell:
    """A DeviceAdapter whose device is a small shell with `agent` commands."""

    def __init__(self, device_type: str, build_dir: Path) -> None:
        self.device_config = SimpleNamespace(type=device_type, build_dir=build_dir,
                                             platform="fake_board", extra_test_args="")
        self.command: list[str] = []
        self.launched: list[list[str]] = []
        self.written = bytearray()
        self.lines: deque[str] = deque()
        self.partial = ""
        self.typed = ""
        self.in_frontend = False
        self.settings: dict[str, str] = {}
        self.running = False

    # -- DeviceAdapter ----------------------------------------------------------------------
    def generate_command(self) -> None:
        if self.device_config.type == "native":
            self.command = [str(self.device_config.build_dir / "zephyr" / "zephyr.exe")]
        else:
            self.command = ["west", "build", "-t", "run"]

    def launch(self) -> None:
        self.close()
        if not self.command:
            self.generate_command()
        self.launched.append(list(self.command))
        if "--flash_erase" in self.command or self.device_config.type == "qemu":
            self.settings.clear()
        self.running = True
        self.lines.extend(["*** Booting Zephyr OS ***", "", "agent: ready"])
        self.partial = SHOWN_PROMPT

    def close(self) -> None:
        self.running = False
        self.lines.clear()
        self.partial = ""

    def readline(self, *, timeout: float | None = None, print_output: bool = True) -> str:
        while self.lines:
            line = self.lines.popleft()
            if line:  # the harness's reader drops empty lines
                return line
        time.sleep(min(timeout or 0.01, 0.005))
        raise FakeTimeout

    def write(self, data: bytes) -> None:
        assert self.running
        self.written += data
        for ch in data.decode():
            if self.in_frontend:
                if ch in "\x1b\x18":
                    self.in_frontend = False
                    self.partial = SHOWN_PROMPT
                continue  # Enter and other keys stay in the frontend
            if ch in "\r\n":
                self._enter()
            else:
                self.typed += ch

    # -- the shell --------------------------------------------------------------------------
    def _enter(self) -> None:
        shown = self.partial + self.typed
        plain = clean_line(shown)
        if len(plain) <= WIDTH:
            self.lines.append(shown)
        else:  # the echo goes on at the start of the next line
            self.lines.append(SHOWN_PROMPT + plain[len(clean_line(SHOWN_PROMPT)):WIDTH])
            rest = plain[WIDTH:]
            while rest:
                self.lines.append(rest[:WIDTH])
                rest = rest[WIDTH:]
        cmd, self.typed = self.typed, ""
        self.partial = SHOWN_PROMPT
        self.lines.extend(self._run(cmd))

    def _run(self, cmd: str) -> list[str]:
        words = cmd.split()
        if not words:
            return []
        if words[:3] == ["agent", "config", "model"] and len(words) == 4:
            self.settings["model"] = words[3]
            return [f"model set to {words[3]}"]
        if words == ["agent", "status"]:
            return [f"model:     {self.settings.get('model', '(not set)')}", "",
                    "pool:      stream   4/4 free"]
        if words == ["agent", "forget"]:
            self.settings.clear()
            return ["agent configuration erased"]
        if words[:2] == ["agent", "ask"]:
            self.in_frontend = True
            self.partial = ""
            return ["line one", "", "line three", END]
        return [f"{words[0]}: command not found"]


def device(device_type: str = "qemu", tmp_path: Path = Path("/nonexistent")
           ) -> tuple[FakeShell, HarnessDevices]:
    fake = FakeShell(device_type, tmp_path)
    return fake, HarnessDevices(fake, FakeTimeout, poke_after=0.05)


def test_exec_command_returns_the_output_without_echo_prompt_or_colours(tmp_path: Path) -> None:
    fake, devices = device(tmp_path=tmp_path)
    dut = devices.start()
    assert dut.exec_command("agent config model m1") == ["model set to m1"]
    # The reader drops empty lines; the rest come in order.
    assert dut.exec_command("agent status") == ["model:     m1", "pool:      stream   4/4 free"]
    assert dut.exec_command("agnet status") == ["agnet: command not found"]
    assert fake.written.endswith(b"agnet status\n\n")
    text = dut.transcript.decode()
    assert "\x1b" not in text
    assert text.count("uart:~$ agent config model m1\r\n") == 1


def test_a_command_wider_than_the_terminal(tmp_path: Path) -> None:
    _, devices = device(tmp_path=tmp_path)
    dut = devices.start()
    model = "m" * 127
    assert dut.exec_command(f"agent config model {model}") == [f"model set to {model}"]
    assert dut.exec_command("agent status")[0] == f"model:     {model}"


def test_exec_command_times_out_without_a_prompt(tmp_path: Path) -> None:
    fake, devices = device(tmp_path=tmp_path)
    dut = devices.start()
    fake.in_frontend = True  # nothing comes back to the shell
    with pytest.raises(DeviceError, match="timed out waiting for the prompt"):
        dut.exec_command("agent status", timeout=0.3)


def test_waiting_for_the_prompt_types_enter_at_the_shell(tmp_path: Path) -> None:
    fake, devices = device(tmp_path=tmp_path)
    dut = devices.start()
    mark = len(dut.transcript)
    dut.write(b"agent ask hi\r")
    out = dut.read_until(END.encode(), 5, start=mark)
    lines = out[: out.rfind(END.encode())].decode().split("\r\n")[1:]
    assert lines == ["line one", "line three", ""]  # the blank line is gone under Twister
    before = len(fake.written)
    dut.write(b"\x1b")
    dut.read_until(PROMPT, 5, start=mark + len(out))
    assert bytes(fake.written[before:]).startswith(b"\x1b\r")  # CR: see TwisterDevice
    assert dut.exec_command("agent config model m2") == ["model set to m2"]


def test_read_until_any_never_types(tmp_path: Path) -> None:
    fake, devices = device(tmp_path=tmp_path)
    dut = devices.start()
    dut.write(b"agent ask hi\r")
    which, _ = dut.read_until_any([END.encode(), b"Allow once? [y/N] "], 5)
    assert which == END.encode()
    dut.write(b"\x1b")
    before = len(fake.written)
    with pytest.raises(DeviceError, match="timed out"):
        dut.read_until_any([b"\r\n" + PROMPT], 0.3)  # the prompt has not ended its line
    assert len(fake.written) == before


def test_qemu_lets_the_harness_make_its_command_and_refuses_a_restart(tmp_path: Path) -> None:
    """A restart on QEMU fails loudly (the test lacks its mark), it is not skipped."""
    fake, devices = device("qemu", tmp_path)
    dut = devices.start()
    assert fake.launched[-1] == ["west", "build", "-t", "run"]
    with pytest.raises(SimOnlyError, match="needs_persistent_flash"):
        devices.restart(dut)


class Marked:
    def __init__(self, *marks: str) -> None:
        self.marks = marks

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def test_persistent_flash_tests_are_left_out_on_qemu_only() -> None:
    item = Marked("needs_persistent_flash")
    for device_type, kept in (("qemu", False), ("native", True), ("hardware", True)):
        keep, drop = split_for_device([item], device_type)
        assert (keep == [item]) is kept and (drop == [item]) is not kept, device_type


def test_hardware_start_forgets_the_configuration(tmp_path: Path) -> None:
    fake, devices = device("hardware", tmp_path)
    fake.settings["model"] = "left-over"
    dut = devices.start()
    assert b"agent forget\n\n" in fake.written
    assert dut.exec_command("agent status")[0] == "model:     (not set)"
    dut.exec_command("agent config model kept")
    dut = devices.restart(dut)
    assert dut.exec_command("agent status")[0] == "model:     kept"


def test_simulator_only_facilities_fail_loudly(tmp_path: Path) -> None:
    _, devices = device(tmp_path=tmp_path)
    assert isinstance(devices, TwisterDevices) and devices.build_dir == tmp_path
    with pytest.raises(SimOnlyError, match="sim_only"):
        devices.start(["--ca", "ca.pem"])
    with pytest.raises(SimOnlyError, match="needs_host_flash"):
        _ = devices.flash


def test_detection_and_the_sim_only_split() -> None:
    assert under_twister(SimpleNamespace(twister_harness=True))
    assert not under_twister(SimpleNamespace(twister_harness=False))
    assert not under_twister(SimpleNamespace())  # the plugin is not loaded at all

    class Item(SimpleNamespace):
        def get_closest_marker(self, name: str) -> object | None:
            return self.marks.get(name)

    items = [Item(marks={}), Item(marks={"sim_only": object()}), Item(marks={"slow": 1}),
             Item(marks={"needs_raw_console": 1}), Item(marks={"needs_host_flash": 1})]
    assert raw_console("native") and not raw_console("qemu") and not raw_console("hardware")
    keep, drop = split_for_device(items, "native")
    assert keep == [items[0], items[2], items[3], items[4]] and drop == [items[1]]
    for line_based in ("qemu", "hardware"):
        keep, drop = split_for_device(items, line_based)
        assert keep == [items[0], items[2]] and drop == [items[1], items[3], items[4]]


def test_clean_line_removes_escape_sequences() -> None:
    assert clean_line("\x1b[1;32muart:~$ \x1b[m\x1b[Jtext\x1b7") == "uart:~$ text"
    assert isinstance(TwisterDevice, type)


# -- native_sim: the image on a pty ----------------------------------------------------------
# A stand-in for native_sim's zephyr.exe with CONFIG_UART_NATIVE_PTY_0_ON_STDINOUT: a shell on
# stdin/stdout that colours its prompt, echoes what is typed (breaking it at 80 columns as
# Zephyr's shell does), keeps its settings in the --flash file, asks for a key at a prompt that
# does not end its line, prints empty lines, and cuts an escape sequence over two writes.
FAKE_IMAGE = r'''
import os, signal, sys, time

flash = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--flash="))
with open(os.path.join(os.path.dirname(flash), "argv.txt"), "w") as f:
    f.write("\n".join(sys.argv[1:]))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
settings = dict(x.split("=", 1) for x in open(flash).read().split()) if os.path.exists(flash) else {}
PROMPT = b"\x1b[1;32muart:~$ \x1b[m"

def out(data):
    os.write(1, data)

def run(cmd):
    words = cmd.split()
    if words[:3] == ["agent", "config", "model"] and len(words) == 4:
        settings["model"] = words[3]
        with open(flash, "w") as f:
            f.write(" ".join(f"{k}={v}" for k, v in settings.items()))
        return b"model set to " + words[3].encode() + b"\r\n"
    if words == ["agent", "status"]:
        return b"model:     " + settings.get("model", "(not set)").encode() + b"\r\n"
    if words == ["blank"]:
        return b"one\r\n\r\nthree\r\n"
    if words == ["split"]:
        out(b"\x1b[1;3")
        time.sleep(0.2)
        return b"2mgreen\x1b[m\r\n"
    if words == ["key"]:
        out(b"API key: ")
        while (ch := os.read(0, 1)) != b"\r":
            out(b"*")
        return b"\r\nkey set\r\n"
    if words == ["crash"]:
        sys.exit(3)
    return (words[0].encode() + b": command not found\r\n") if words else b""

out(b"*** Booting Zephyr OS build fake ***\n")
out(b"\r\n" + PROMPT)
line = b""
while True:
    ch = os.read(0, 1)
    if not ch:
        break
    if ch == b"\r":
        out(b"\r\n")
        out(run(line.decode()) + PROMPT)
        line = b""
        continue
    line += ch
    out(ch)
    if (len(line) + 8) % 80 == 0:
        out(b"\r\n")
'''


def native(tmp_path: Path, extra: str = "") -> NativeSimDevices:
    exe = tmp_path / "zephyr" / "zephyr.exe"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text(f"#!{sys.executable}\n{FAKE_IMAGE}")
    exe.chmod(0o755)
    return NativeSimDevices(tmp_path, extra_test_args=extra, log=tmp_path / "handler.log")


def test_native_reads_the_console_byte_by_byte(tmp_path: Path) -> None:
    devices = native(tmp_path)
    dut = devices.start()
    assert isinstance(devices, TwisterDevices) and not dut.typed_ahead_kept
    assert b"*** Booting Zephyr OS build fake ***\n" in dut.transcript
    assert dut.exec_command("agent config model m1") == ["model set to m1"]
    assert dut.exec_command("agnet") == ["agnet: command not found"]
    # Text that does not end its line can be waited for, and answered.
    mark = len(dut.transcript)
    dut.write(b"key\r")
    dut.read_until(b"API key: ", 5, start=mark)
    dut.write(b"sk-1\r")
    assert dut.read_until(b"key set\r\n" + PROMPT, 5, start=mark).endswith(PROMPT)
    # Empty lines stay; escape sequences go, also one that came in two reads.
    mark = len(dut.transcript)
    dut.write(b"blank\r")
    assert dut.read_until(b"three\r\n" + PROMPT, 5, start=mark) == (
        b"blank\r\none\r\n\r\nthree\r\n" + PROMPT)
    assert dut.exec_command("split") == ["green"]
    assert b"\x1b" not in dut.transcript
    assert devices.close() is None
    assert dut.stop() == 0
    log = (tmp_path / "handler.log").read_bytes()
    assert b"model set to m1\r\n" in log and b"\x1b" not in log


def test_native_echo_broken_at_the_terminal_width(tmp_path: Path) -> None:
    devices = native(tmp_path)
    dut = devices.start()
    model = "m" * 127
    assert dut.exec_command(f"agent config model {model}") == [f"model set to {model}"]
    assert dut.exec_command("agent status") == [f"model:     {model}"]
    devices.close()


def test_native_image_is_new_per_factory_and_kept_over_restarts(tmp_path: Path) -> None:
    devices = native(tmp_path, extra="--seed=7 --rt")
    dut = devices.start()
    argv = (tmp_path / "argv.txt").read_text().split("\n")
    assert argv == [f"--flash={tmp_path / FLASH_IMAGE}", "--seed=7", "--rt"]
    dut.exec_command("agent config model kept")
    dut = devices.restart(dut)
    assert dut.exec_command("agent status") == ["model:     kept"]
    dut.stop()
    dut = devices.start()  # a second start in the same test keeps the image, as on the sim
    assert dut.exec_command("agent status") == ["model:     kept"]
    devices.close()
    assert len(devices.devices) == 3
    devices = native(tmp_path)  # the next test
    assert not (tmp_path / FLASH_IMAGE).exists()
    dut = devices.start()
    assert dut.exec_command("agent status") == ["model:     (not set)"]
    devices.close()


def test_native_reports_a_bad_exit_and_refuses_simulator_options(tmp_path: Path) -> None:
    devices = native(tmp_path)
    with pytest.raises(SimOnlyError, match="sim_only"):
        devices.start(["--confirm-timeout-ms=400"])
    dut = devices.start()
    dut.write(b"crash\r")
    time.sleep(0.3)
    with pytest.raises(DeviceError, match="exited with 3"):
        devices.restart(dut)
    with pytest.raises(DeviceError, match="exited with 3"):
        devices.close()


def test_native_no_prompt_is_an_error(tmp_path: Path) -> None:
    exe = tmp_path / "zephyr" / "zephyr.exe"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\nimport os\nos.write(1, b'no shell here\\n')\n"
                   "while ch := os.read(0, 1):\n"
                   "    open('typed', 'ab').write(ch)\n")
    exe.chmod(0o755)
    dev = NativeSimDevice([str(exe)], tmp_path, poke_after=0.1)
    with pytest.raises(DeviceError, match="no shell prompt"):
        dev.start(timeout=0.5)
    assert dev.transcript == b"no shell here\n"
    assert (tmp_path / "typed").read_bytes().startswith(b"\r\r")  # Enter (CR) after silence
    dev.stop()


# -- native_sim: the storage partition in the flash image -------------------------------------
# As Zephyr writes <build>/zephyr/zephyr.dts (one node or property per line, with the file each
# comes from), cut to what is read: a 64 KiB flash with a 32 KiB storage partition at 0x8000.
ZEPHYR_DTS = """\
/dts-v1/;

/ {
\t#address-cells = < 0x1 >;
\tflashcontroller0: flash-controller@0 {
\t\tcompatible = "zephyr,sim-flash";         /* in native_sim.dts:64 */
\t\treg = < 0x0 0x10000 >;
\t\t/* node '/flash-controller@0/flash@0' defined in native_sim.dts:71 */
\t\tflash0: flash@0 {
\t\t\tcompatible = "soc-nv-flash";
\t\t\terase-block-size = < 0x1000 >; /* in native_sim.dts:74 */
\t\t\twrite-block-size = < 0x1 >;
\t\t\treg = < 0x0 0x10000 >;
\t\t\tpartitions {
\t\t\t\tcompatible = "fixed-partitions";
\t\t\t\tboot_partition: partition@0 {
\t\t\t\t\tlabel = "mcuboot";
\t\t\t\t\treg = < 0x0 0x8000 >;
\t\t\t\t};
\t\t\t\tstorage_partition: partition@8000 {
\t\t\t\t\tlabel = "storage";           /* in native_sim_native_64.overlay:12 */
\t\t\t\t\treg = < 0x8000 0x8000 >; /* in native_sim_native_64.overlay:13 */
\t\t\t\t\tphandle = < 0x4 >;
\t\t\t\t};
\t\t\t};
\t\t};
\t};
\tfstab {
\t\tcompatible = "zephyr,fstab";
\t\t/* node '/fstab/agent_lfs' defined in agent-fstab.dtsi:14 */
\t\tagent_lfs: agent_lfs {
\t\t\tcompatible = "zephyr,fstab,littlefs"; /* in agent-fstab.dtsi:15 */
\t\t\tmount-point = "/lfs";
\t\t\tpartition = < &storage_partition >;
\t\t\tautomount;
\t\t\tread-size = < 0x10 >;
\t\t\tprog-size = < 0x20 >;
\t\t\tcache-size = < 0x40 >;
\t\t\tlookahead-size = < 0x20 >;
\t\t\tblock-cycles = < 0x200 >;
\t\t};
\t};
};
"""


def test_the_storage_partition_and_its_geometry_come_from_the_devicetree(tmp_path: Path
                                                                        ) -> None:
    (tmp_path / "zephyr").mkdir()
    (tmp_path / "zephyr" / "zephyr.dts").write_text(ZEPHYR_DTS)
    part = storage_partition(tmp_path, tmp_path / FLASH_IMAGE)
    assert (part.offset, part.size) == (0x8000, 0x8000)
    assert part.littlefs == LittleFsGeometry(block_size=4096, read_size=16, prog_size=32,
                                             cache_size=64, lookahead_size=32,
                                             block_cycles=512)
    (tmp_path / "zephyr" / "zephyr.dts").write_text(
        ZEPHYR_DTS.replace("partition = < &storage_partition >", "partition = < &other >"))
    with pytest.raises(DeviceError, match="no zephyr,fstab,littlefs entry"):
        storage_partition(tmp_path, tmp_path / FLASH_IMAGE)
    with pytest.raises(DeviceError, match="no partition labelled slot9"):
        storage_partition(tmp_path, tmp_path / FLASH_IMAGE, "slot9_partition")


def test_files_in_the_storage_partition_read_and_written_in_place(tmp_path: Path) -> None:
    (tmp_path / "zephyr").mkdir()
    (tmp_path / "zephyr" / "zephyr.dts").write_text(ZEPHYR_DTS)
    devices = NativeSimDevices(tmp_path)
    part = devices.flash
    assert isinstance(part, FlashPartition) and part.path == tmp_path / FLASH_IMAGE
    # A volume made as the firmware would, with littlefs-python, between other bytes.
    g = part.littlefs
    volume = bytearray(b"\xff" * part.size)
    fs = LittleFS(context=UserContext(buffer=volume), block_size=g.block_size,
                  block_count=part.size // g.block_size, read_size=g.read_size,
                  prog_size=g.prog_size, cache_size=g.cache_size,
                  lookahead_size=g.lookahead_size, block_cycles=g.block_cycles)
    with fs.open(".settings", "wb") as f:
        f.write(b"key=sk-1")
    fs.unmount()
    part.path.write_bytes(b"\xaa" * part.offset + bytes(volume))
    assert flash_image.read_file(part, ".settings") == b"key=sk-1"
    flash_image.write_files(part, {"dir/notes.txt": b"hello"})
    assert flash_image.read_file(part, "dir/notes.txt") == b"hello"
    assert flash_image.exists(part, ".settings") and not flash_image.exists(part, "nope")
    data = part.path.read_bytes()
    assert len(data) == 0x10000 and data[:part.offset] == b"\xaa" * part.offset
    with pytest.raises(ValueError, match="for a partition of"):
        part.write_bytes(b"short")
    part.path.write_bytes(b"\xff" * 0x9000)
    with pytest.raises(DeviceError, match="ends inside the partition"):
        part.read_bytes()
