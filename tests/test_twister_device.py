"""The Twister side of the DUT abstraction (agent_host.testing.twister_device) against a fake
DeviceAdapter that behaves as the harness's line reader in front of a Zephyr shell: whole
lines only, no empty lines, a prompt that ends its line only when something follows it,
colour codes around the prompt and an echo broken at the terminal width."""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest
from agent_host.errors import DeviceError
from agent_host.testing.sim_device import PROMPT
from agent_host.testing.twister_device import (
    FLASH_IMAGE,
    SimOnlyError,
    TwisterDevice,
    TwisterDevices,
    clean_line,
    split_sim_only,
    under_twister,
)

END = "[Esc or Ctrl-X returns to the shell]"
WIDTH = 80
SHOWN_PROMPT = "\x1b[1;32muart:~$ \x1b[m"  # how the Zephyr shell colours its prompt


class FakeTimeout(Exception):
    pass


class Skipped(Exception):
    pass


def skip(reason: str):  # type: ignore[no-untyped-def]
    raise Skipped(reason)


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


def device(device_type: str = "native", tmp_path: Path = Path("/nonexistent")
           ) -> tuple[FakeShell, TwisterDevices]:
    fake = FakeShell(device_type, tmp_path)
    return fake, TwisterDevices(fake, FakeTimeout, skip, poke_after=0.05)


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
    assert bytes(fake.written[before:]).startswith(b"\x1b\n")
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


def test_native_starts_on_an_erased_image_and_restarts_on_the_same(tmp_path: Path) -> None:
    fake, devices = device("native", tmp_path)
    dut = devices.start()
    image = f"--flash={tmp_path / FLASH_IMAGE}"
    assert fake.launched[-1] == [str(tmp_path / "zephyr" / "zephyr.exe"), image, "--flash_erase"]
    dut.exec_command("agent config model kept")
    dut = devices.restart(dut)
    assert fake.launched[-1] == [str(tmp_path / "zephyr" / "zephyr.exe"), image]
    assert dut.exec_command("agent status")[0] == "model:     kept"
    dut = devices.start()
    assert dut.exec_command("agent status")[0] == "model:     (not set)"
    assert len(devices.devices) == 3


def test_native_passes_twisters_extra_test_args(tmp_path: Path) -> None:
    fake, devices = device("native", tmp_path)
    devices.extra_test_args = "--seed=7 --rt"
    devices.start()
    assert fake.launched[-1][-2:] == ["--seed=7", "--rt"]


def test_qemu_lets_the_harness_make_its_command_and_skips_a_restart(tmp_path: Path) -> None:
    fake, devices = device("qemu", tmp_path)
    dut = devices.start()
    assert fake.launched[-1] == ["west", "build", "-t", "run"]
    with pytest.raises(Skipped, match="nothing survives a relaunch"):
        devices.restart(dut)


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
    with pytest.raises(SimOnlyError, match="sim_only"):
        devices.start(["--ca", "ca.pem"])
    with pytest.raises(SimOnlyError, match="sim_only"):
        _ = devices.flash


def test_detection_and_the_sim_only_split() -> None:
    assert under_twister(SimpleNamespace(twister_harness=True))
    assert not under_twister(SimpleNamespace(twister_harness=False))
    assert not under_twister(SimpleNamespace())  # the plugin is not loaded at all

    class Item(SimpleNamespace):
        def get_closest_marker(self, name: str) -> object | None:
            return self.marks.get(name)

    items = [Item(marks={}), Item(marks={"sim_only": object()}), Item(marks={"slow": 1})]
    keep, drop = split_sim_only(items)
    assert keep == [items[0], items[2]] and drop == [items[1]]


def test_clean_line_removes_escape_sequences() -> None:
    assert clean_line("\x1b[1;32muart:~$ \x1b[m\x1b[Jtext\x1b7") == "uart:~$ text"
    assert isinstance(TwisterDevice, type)
