"""Fixtures shared by the host tests: the simulator, built once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_host import sim
from agent_host.testing.sim_device import SimDevice

REPO_DIR = Path(__file__).resolve().parents[1]

# The tests run the simulator built with ASan and UBSan, so memory errors fail them.
SIM_BUILD_DIR = Path(os.environ.get("AGENT_SIM_BUILD_DIR", REPO_DIR / "build" / "sim-asan"))


@pytest.fixture(scope="session")
def sim_exe() -> Path:
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


@pytest.fixture
def sims(sim_exe: Path, tmp_path: Path) -> Iterator[SimFactory]:
    factory = SimFactory(sim_exe, tmp_path / "flash.bin")
    yield factory
    factory.close()


@pytest.fixture
def dut(sims: SimFactory) -> SimDevice:
    """A started simulator on a fresh flash image (Twister's `shell` plays this part on boards)."""
    return sims.start()
