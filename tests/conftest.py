"""Fixtures shared by the host tests: the simulator, built once per session.

The device fixtures (`sims`, `dut`) are the DUT abstraction: in CI they start the host
simulator; under Twister (pytest run by `harness: pytest` scenarios of twister_tests/, with
the twister_harness plugin's `--twister-harness`) they launch native_sim's firmware image on
a pty (agent_host.testing.native_sim_device) or drive the harness's QEMU or board through its
line reader (agent_host.testing.twister_device). Tests marked `sim_only` are deselected
under Twister, those marked `needs_raw_console` or `needs_host_flash` on QEMU and boards
(twister_tests/README.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_host import sim
from agent_host.testing.native_sim_device import NativeSimDevices
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testing.twister_device import (
    HarnessDevices,
    SimOnlyError,
    TwisterDevices,
    raw_console,
    split_for_device,
    under_twister,
)

REPO_DIR = Path(__file__).resolve().parents[1]

# The tests run the simulator built with ASan and UBSan, so memory errors fail them.
SIM_BUILD_DIR = Path(os.environ.get("AGENT_SIM_BUILD_DIR", REPO_DIR / "build" / "sim-asan"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sim_only(reason): needs the host simulator (its options, its board files, "
        "what only it builds in, ...); deselected under Twister")
    config.addinivalue_line(
        "markers", "needs_raw_console(reason): waits for text that does not end its line or "
        "reads empty lines; deselected under Twister on QEMU and boards (line reader)")
    config.addinivalue_line(
        "markers", "needs_host_flash(reason): reads or prepares the flash image on the host; "
        "deselected under Twister on QEMU and boards")
    config.addinivalue_line(
        "markers", "needs_persistent_flash(reason): restarts the device and expects its "
        "storage kept; deselected under Twister on QEMU (the flash simulator is in RAM)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if under_twister(config.option):
        keep, drop = split_for_device(items, str(config.option.device_type))
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


@pytest.fixture(scope="session")
def sim_exe(request: pytest.FixtureRequest) -> Path:
    if under_twister(request.config.option):
        raise SimOnlyError("the host simulator is not built under Twister: mark the test sim_only")
    return sim.build(SIM_BUILD_DIR, sanitize=True, quiet=True)


class SimFactory:
    """Starts simulators on one flash image; stops them and checks their exit."""

    def __init__(self, exe: Path, flash: Path) -> None:
        self.exe = exe
        self.flash = flash
        self.devices: list[SimDevice] = []

    def start(self, extra_args: list[str] | None = None) -> SimDevice:
        dev = SimDevice(self.exe, self.flash, extra_args)
        self.devices.append(dev)
        dev.start()
        return dev

    def restart(self, dev: SimDevice) -> SimDevice:
        assert dev.stop() == 0, dev.stderr_text()
        return self.start(dev.extra_args)

    def close(self) -> None:
        for dev in self.devices:
            code = dev.stop()
            errors = dev.stderr_text()
            assert "Sanitizer" not in errors and "runtime error" not in errors, errors
            assert code == 0, f"simulator exited with {code}: {errors}"


def twister_devices(request: pytest.FixtureRequest) -> TwisterDevices[Any]:
    """The Twister device as a factory: native_sim launched by the fixtures on a pty, or the
    harness's device (its session fixture `device_object`) on QEMU and boards."""
    from twister_harness.exceptions import TwisterHarnessTimeoutException
    from twister_harness.helpers.utils import find_in_config

    adapter = request.getfixturevalue("device_object")
    adapter.initialize_log_files(request.node.name)
    config = adapter.device_config
    dotconfig = Path(config.app_build_dir) / "zephyr" / ".config"
    prompt = (find_in_config(dotconfig, "CONFIG_SHELL_PROMPT_UART") or PROMPT.decode()).encode()
    if raw_console(str(config.type)):
        return NativeSimDevices(Path(config.app_build_dir), prompt,
                                str(getattr(config, "extra_test_args", "") or ""),
                                log=Path(adapter.handler_log_path),
                                platform=str(getattr(config, "platform", "") or ""))
    return HarnessDevices(adapter, TwisterHarnessTimeoutException, prompt=prompt)


@pytest.fixture
def sims(request: pytest.FixtureRequest, tmp_path: Path
         ) -> Iterator[SimFactory | TwisterDevices[Any]]:
    """Starts devices: simulators on one flash image, or under Twister native_sim's image on
    one flash image, or the harness's QEMU or board."""
    if under_twister(request.config.option):
        devices = twister_devices(request)
        yield devices
        devices.close()
        return
    factory = SimFactory(request.getfixturevalue("sim_exe"), tmp_path / "flash.bin")
    yield factory
    factory.close()


@pytest.fixture
def dut(sims: SimFactory) -> SimDevice:
    """A started device with a fresh configuration: a simulator or native_sim on a new flash
    image, or the harness's QEMU or board (this fixture replaces the harness's own `dut`)."""
    return sims.start()
