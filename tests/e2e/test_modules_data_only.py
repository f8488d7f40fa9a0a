"""The data-only modules profile (CONFIG_AGENT_MODULES_DATA_ONLY; docs/modules.md "Device
tools"): a simulator built with tests/conf/data-only.conf refuses a tool module on every route
(the console's `agent import`, `agent-host import` over the management group, --modules at
start-up, and the restore of a journal written by a build that accepts tool modules, with the
reason reported) while it accepts roles and skills; the refused tool is never registered. Under
Twister the scenario agent.e2e.data_only (native_sim/native/64 with the option) runs the
console's case on the firmware; the others need the simulator."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_host import sim
from agent_host.testing.sim_device import SimDevice
from agent_host.testing.twister_device import under_twister
from flash_image import write_files
from module_checks import console_modules

SIM_ONLY = pytest.mark.sim_only("builds its own simulator with tests/conf/data-only.conf and "
                                "starts it with simulator options")

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("AGENT_SIM_DATA_ONLY_BUILD_DIR",
                                REPO / "build" / "sim-data-only"))
CONFS = (REPO / "tests" / "conf" / "data-only.conf", REPO / "tests" / "conf" / "no-scripts.conf")
AGENT_HOST = Path(sys.executable).with_name("agent-host")
REASON = "tool modules are refused by this build (data-only modules)"

TOOL = {"module.manifest": b"name: greet\nkind: tool\ndescription: Greets.\nruntime: lua\n"
                           b"entry: main.lua\nargs: who: string\nrisk: read\n",
        "main.lua": b"print('hello ' .. arg[1])\n"}
ROLE = {"module.manifest": b"name: helper\nkind: role\ndescription: Helps.\n",
        "overlay.txt": b"Answer briefly.\n"}
SKILL = {"SKILL.md": b"---\nname: arithmetic\ndescription: Gives rules for arithmetic tasks.\n"
                     b"---\nCheck each operation and state the unit of each result.\n"}


def folder(name: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"{name}/{file}": data for file, data in files.items()}


@pytest.fixture(scope="module")
def data_only_exe() -> Path:
    return sim.build(BUILD_DIR, sanitize=True, quiet=True, extra_conf=CONFS)


class Devices:
    """Simulators of either build on one flash image; each is stopped and checked."""

    def __init__(self, flash: Path) -> None:
        self.flash = flash
        self.devices: list[SimDevice] = []

    def start(self, exe: Path, extra: list[str] | None = None) -> SimDevice:
        dev = SimDevice(exe, self.flash, extra)
        self.devices.append(dev)
        dev.start()
        return dev

    def prepared(self, exe: Path, files: dict[str, bytes], extra: list[str] | None = None
                 ) -> SimDevice:
        """@exe started on a flash image whose /lfs holds @files."""
        first = self.start(exe, extra)
        assert first.stop() == 0, first.stderr_text()
        write_files(self.flash, files)
        return self.start(exe, extra)

    def close(self) -> None:
        for dev in self.devices:
            dev.stop()


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[Devices]:
    devs = Devices(tmp_path / "flash.bin")
    yield devs
    devs.close()


@pytest.fixture
def data_only_dut(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A data-only device whose /lfs holds the console case's module directories: the
    simulator built here, or under Twister the scenario's firmware (agent.e2e.data_only)."""
    files = {**folder("t", TOOL), **folder("r", ROLE), **folder("s", SKILL)}
    if under_twister(request.config.option):
        sims = request.getfixturevalue("sims")
        first = sims.start()
        assert first.stop() == 0
        write_files(sims.flash, files)
        yield sims.start()
        return
    devs = Devices(tmp_path / "flash.bin")
    yield devs.prepared(request.getfixturevalue("data_only_exe"), files)
    devs.close()


def tool_names(dut: SimDevice) -> list[str]:
    lines = dut.exec_command("agent tools")
    return [line.split()[0] for line in lines[2:] if line and not line.startswith(" ")]


@pytest.mark.needs_host_flash("writes the module directories into the flash image")
def test_the_console_refuses_a_tool_and_accepts_a_role_and_a_skill(data_only_dut: SimDevice
                                                                    ) -> None:
    dut = data_only_dut
    assert dut.exec_command("agent import t") == [f"import: greet refused: {REASON}"]
    assert dut.exec_command("agent import r") == ["import: role helper accepted (installed)"]
    assert dut.exec_command("agent import s") == [
        "import: skill arithmetic accepted (installed)"]
    rows = {n: (row[0], row[3]) for n, row in console_modules(dut).items()}
    assert (rows["helper"], rows["arithmetic"]) == (("role", "installed"), ("skill", "installed"))
    assert "greet" not in rows
    assert "greet" not in tool_names(dut)
    assert "skill_use" in tool_names(dut)


@SIM_ONLY
def test_the_host_route_refuses_a_tool_at_its_head(devices: Devices, data_only_exe: Path,
                                                   tmp_path: Path) -> None:
    dut = devices.start(data_only_exe, ["--modules="])
    for name, files in (("t", TOOL), ("r", ROLE)):
        (tmp_path / name).mkdir()
        for file, data in files.items():
            (tmp_path / name / file).write_bytes(data)
    environ = {k: v for k, v in os.environ.items() if k != "AGENT_PORT"}

    def host(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(AGENT_HOST), "import", str(path), "--port", dut.pty_path],
                              capture_output=True, text=True, timeout=60, env=environ,
                              check=False)

    refused = host(tmp_path / "t")
    assert (refused.returncode, refused.stdout) == (1, ""), refused
    assert refused.stderr == f"agent-host: import {tmp_path / 't'}: {REASON} (EPERM)\n"
    accepted = host(tmp_path / "r")
    assert accepted.returncode == 0, accepted
    assert "helper" in console_modules(dut) and "greet" not in console_modules(dut)


@SIM_ONLY
def test_modules_at_start_up_refuses_the_tool_and_imports_the_rest(devices: Devices,
                                                                  data_only_exe: Path,
                                                                  tmp_path: Path) -> None:
    for name, files in (("a_tool", TOOL), ("b_role", ROLE), ("c_skill", SKILL)):
        (tmp_path / "mods" / name).mkdir(parents=True)
        for file, data in files.items():
            (tmp_path / "mods" / name / file).write_bytes(data)
    dut = devices.start(data_only_exe, [f"--modules={tmp_path / 'mods'}"])
    boot = dut.transcript.decode(errors="replace")
    assert f"modules: {tmp_path / 'mods' / 'a_tool'} refused: {REASON}" in boot, boot
    assert set(console_modules(dut)) == {"helper", "arithmetic"}
    assert "greet" not in tool_names(dut)


@SIM_ONLY
def test_a_journal_of_another_build_restores_without_its_tools(devices: Devices,
                                                               data_only_exe: Path,
                                                               sim_exe: Path) -> None:
    """The full build imports a tool and a skill and journals both; the data-only build
    restores the skill, refuses the tool and says so at boot and in `agent modules`."""
    full = devices.prepared(sim_exe, {**folder("t", TOOL), **folder("s", SKILL)}, ["--modules="])
    assert full.exec_command("agent import t") == ["import: tool greet accepted (installed)"]
    assert full.exec_command("agent import s")[0].endswith("(installed)")
    assert "greet" in tool_names(full)
    assert full.stop() == 0
    dut = devices.start(data_only_exe, ["--modules="])
    boot = dut.transcript.decode(errors="replace")
    note = f"tool greet was refused at boot: {REASON}"
    assert f"modules: journal replayed, 1 modules from 2 records; {note}" in boot, boot
    assert list(console_modules(dut)) == ["arithmetic"]
    assert f"journal: 1 tool modules not restored as tools; {note}" in dut.exec_command(
        "agent modules")
    assert "greet" not in tool_names(dut)
