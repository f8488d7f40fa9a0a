"""Tool selection (docs/tools.md "Tool selection"; modules spec "Tool selection") on the
simulator: the `tool` and `agent ID tools` commands and the settings records they write (every
bit of tools.mask, the 2-bit tools.agent.ID records), records provisioned in the settings file
before a fresh boot (values 0..3, tools.mask at its bound), the request bodies the test server
records with groups off and with every group off (no tools, nothing about tools), a refused
call to a disabled tool, a change during an active turn that applies from the next one, the
role's exclusion and the policy's confirmation kept, and the System tools table over SMP."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import select
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from agent_host.errors import DeviceRefusedError
from agent_host.mgmt import Endpoint, open_device
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Faults, Script, TestServer
from agent_host.testserver.dialogue import (
    advertised_names,
    function_call_output,
    text_reply,
    tool_call_reply,
)
from agent_host.tool_status import GROUPS
from flash_image import exists, read_file, write_files
from selection_checks import (
    API_PATH,
    RecordCheck,
    agent_table,
    defaults,
    tool_output,
    walk_agent_bits,
    walk_default_bits,
)

pytestmark = pytest.mark.sim_only("the simulator's flash image, settings file and pty")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
SETTINGS = ".settings"


# -- the simulator's settings file (docs/sim-settings-file.md) --------------------------------
def settings_records(data: bytes) -> dict[str, bytes]:
    assert data[:5] == b"AGST\x01", data[:8]
    records, at = {}, 8
    while at < len(data):
        klen, vlen = data[at], int.from_bytes(data[at + 1:at + 3], "little")
        key = data[at + 3:at + 3 + klen]
        value = data[at + 3 + klen:at + 3 + klen + vlen]
        crc = int.from_bytes(data[at + 3 + klen + vlen:at + 7 + klen + vlen], "little")
        assert crc == zlib.crc32(data[at:at + 3 + klen + vlen])
        records[key.decode()] = value
        at += 7 + klen + vlen
    return records


def settings_file(records: dict[str, bytes]) -> bytes:
    out = b"AGST\x01\x00\x00\x00"
    for key, value in records.items():
        body = struct.pack("<BH", len(key), len(value)) + key.encode() + value
        out += body + struct.pack("<I", zlib.crc32(body))
    return out


def stored(sims) -> dict[str, bytes]:
    return settings_records(read_file(sims.flash, SETTINGS)) if exists(sims.flash,
                                                                        SETTINGS) else {}


def provision(sims, records: dict[str, bytes], extra: list[str] | None = None) -> SimDevice:
    """A fresh boot with @records added to the settings file (what provisioning writes)."""
    first = sims.start(extra)
    assert first.stop() == 0, first.stderr_text()
    write_files(sims.flash, {SETTINGS: settings_file({**stored(sims), **records})})
    return sims.start(extra)


# -- commands and records ---------------------------------------------------------------------
def record_check(sims, key: str) -> RecordCheck:
    def check(value: int | None) -> None:
        assert stored(sims).get(key) == (None if value is None else str(value).encode())
    return check


def test_tool_stores_each_bit_of_tools_mask_and_a_restart_keeps_it(sims) -> None:
    dut = sims.start()
    walk_default_bits(dut, record_check(sims, "agent/tools.mask"))
    assert defaults(dut, "tool run on")[0] == 1 << 6
    dut = sims.restart(dut)
    assert defaults(dut)[0] == 1 << 6


def test_agent_tools_stores_two_bits_per_group_and_a_restart_keeps_them(sims) -> None:
    dut = sims.start()
    walk_agent_bits(dut, 0, record_check(sims, "agent/tools.agent.0"))
    agent_table(dut, 0, "agent 0 tools all inherit")
    assert defaults(dut, "tool fs_list off")[0] == 1023 - 8
    agent_table(dut, 0, "agent 0 tools fs_list on")
    agent_table(dut, 0, "agent 0 tools fs_read off")
    dut = sims.restart(dut)
    _, rows = agent_table(dut, 0)
    assert rows["fs_list"] == ("off", "on", "on") and rows["fs_read"] == ("on", "off", "off")
    assert stored(sims)["agent/tools.agent.0"] == str(2 << 6 | 1 << 4).encode()


@pytest.mark.parametrize(("record", "invalid"), [
    (0, False),                                        # inherit everything
    (1 << 4 | 2 << 0 | 1 << 18, False),                # fs_read off, memory_recall on, imported off
    (0xFFFFF - 0xAAAAA, False),                        # every group 1 (off)
    (0xAAAAA, False),                                  # every group 2 (on)
    (3 << 8, True),                                    # fs_write at 3: invalid
    (0xFFFFF, True),                                   # every group at 3
    (0x100000, True),                                  # past 20 bits
])
def test_provisioned_agent_records_0_to_3(sims, record: int, invalid: bool) -> None:
    dut = provision(sims, {"agent/tools.mask": b"1019",  # fs_read off by default
                           "agent/tools.agent.0": str(record).encode()})
    head, rows = agent_table(dut, 0)
    assert any("invalid and ignored" in line for line in head) == invalid, head
    for bit, group in enumerate(GROUPS):
        default = "off" if group == "fs_read" else "on"
        choice = 0 if invalid else (record >> (2 * bit)) & 3
        override = ("inherit", "off", "on")[choice]
        on = choice == 2 or (choice == 0 and default == "on")
        assert rows[group][:2] == (default, override), group
        assert (rows[group][2] != "off") == on, group


@pytest.mark.parametrize(("mask", "shown", "invalid"), [
    (b"0", 0, False), (b"1023", 1023, False), (b"1024", 1023, True), (b"abc", 1023, True),
    (b"07", 1023, True), (b"512", 512, False)])
def test_a_provisioned_tools_mask_applies_at_a_fresh_boot(sims, mask: bytes, shown: int,
                                                          invalid: bool) -> None:
    dut = provision(sims, {"agent/tools.mask": mask})
    lines = dut.exec_command("tool")
    assert lines[0].startswith(f"tools.mask {shown}")
    assert ("the stored value is invalid" in lines[0]) == invalid


# -- the request bodies -----------------------------------------------------------------------
def test_a_change_during_a_turn_applies_when_the_next_turn_starts(sims) -> None:
    """The selection is read when a request starts: switching fs_read off over SMP while the
    model's first answer is still arriving does not change that request, only the next one."""
    api = "responses"
    dut = sims.start()
    first = tool_call_reply(api, "tool_search", {"query": "read a file"}, "call_0",
                            response_id="r0")
    stalled = dataclasses.replace(first, faults=Faults(drip=True, drip_delay=0.005))
    script = Script([
        stalled,
        tool_call_reply(api, "storage_read", {"path": "notes.txt"}, "call_1",
                        response_id="r1"),
        text_reply(api, "Done.", response_id="r2"),
        tool_call_reply(api, "tool_search", {"query": "read a file"}, "call_2",
                        response_id="r3"),
        text_reply(api, "Again.", response_id="r4"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        mark = len(dut.transcript)
        dut.write(b"agent ask read it\r")
        deadline = time.monotonic() + 10
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.requests, "the request never reached the server"
        assert len(srv.requests) == 1  # the first answer is still dripping in

        async def switch_off() -> int:
            async with open_device(Endpoint("serial", dut.pty_path)) as device:
                return (await device.tool_select("fs_read", "off")).mask

        assert asyncio.run(switch_off()) == 1023 - 4
        assert len(srv.requests) == 1, "the change came too late to test an active turn"
        dut.read_until(b"Allow once? [y/N] ", 20, start=mark)  # storage_read is sensitive
        dut.write(b"y")
        dut.read_until(b"Done.", 20, start=mark)
        dut.read_until(b"[Esc or Ctrl-X returns to the shell]", 10, start=mark)
        at = len(dut.transcript)
        dut.write(b"\x1b")
        dut.read_until(b"uart:~$ ", 10, start=at)
        reqs = srv.wait_for_requests(3)
        assert "storage_read" in (advertised_names(reqs[1].json, api) or [])
        ran = function_call_output(reqs[2].json)[1]
        assert isinstance(ran, dict) and "refused" not in ran, ran
        ask(dut, "read it again")
        reqs = srv.wait_for_requests(5)
        srv.check()
    assert "storage_read" not in (advertised_names(reqs[4].json, api) or [])


def test_smp_refuses_the_choices_of_an_agent_without_a_conversation(sims) -> None:
    dut = sims.start()

    async def choose(agent: int) -> str:
        async with open_device(Endpoint("serial", dut.pty_path)) as device:
            try:
                return str((await device.tool_select("fs_read", "off", agent)).record)
            except DeviceRefusedError as err:
                return f"{err.rc_name}: {err.reason}"

    assert asyncio.run(choose(2)) == "ENOENT: agent 2: slot 2 holds no conversation"
    assert asyncio.run(choose(9)) == "ERANGE: agent ids are 0..8"
    assert asyncio.run(choose(0)) == str(1 << 4)
    assert "agent/tools.agent.2" not in stored(sims)


def role(root: Path, manifest: str) -> Path:
    (root / "conductor").mkdir(parents=True)
    (root / "conductor" / "module.manifest").write_text(manifest)
    (root / "conductor" / "overlay.txt").write_text("Role: test.\n")
    return root


def test_selection_never_grants_what_the_role_excludes_nor_skips_confirmation(
        sims, tmp_path: Path) -> None:
    api = "chat"
    root = role(tmp_path / "mods", "name: conductor\nkind: role\ndescription: d\n"
                                   "tools: fs_read, fs_list, fs_stat\n")
    dut = sims.start(["--modules", str(root), "--confirm-timeout-ms=5000"])
    _, rows = agent_table(dut, 0, "agent 0 tools fs_write on")
    assert rows["fs_write"] == ("on", "on", "Unavailable")
    assert "the agent's role grants no tool of this group" in "\n".join(
        dut.exec_command("agent 0 tools"))
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "write a file"}, "call_0"),
        tool_call_reply(api, "storage_write", {"path": "y.txt", "content": "y"}, "call_1"),
        text_reply(api, "Done."),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]), policy="confirm")
        ask(dut, "write y.txt")
        reqs = srv.wait_for_requests(3)
    offered = advertised_names(reqs[1].json, api)
    assert offered is not None and "storage_stat" in offered and "storage_write" not in offered
    assert tool_output(api, reqs[2]) == {
        "refused": "storage_write is not granted to this agent's role"}
    # The role's check comes first: with the group off too, the refusal is the role's.
    agent_table(dut, 0, "agent 0 tools fs_write off")
    with TestServer(Script(script.turns)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "write y.txt")
        reqs = srv.wait_for_requests(3)
    assert tool_output(api, reqs[2]) == {
        "refused": "storage_write is not granted to this agent's role"}
    assert not exists(sims.flash, "y.txt")


def test_an_enabled_group_still_asks_for_confirmation(sims) -> None:
    api = "chat"
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "write a file"}, "call_0"),
        tool_call_reply(api, "storage_write", {"path": "y.txt", "content": "y"}, "call_1"),
        text_reply(api, "Done."),
    ])
    dut = sims.start(["--confirm-timeout-ms=5000"])  # the supplied conductor: tools *
    agent_table(dut, 0, "agent 0 tools fs_write on")
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]), policy="confirm")
        run = ask(dut, "write y.txt", answers=[b"n"])
        reqs = srv.wait_for_requests(3)
    assert "[confirm] storage_write" in run.lines
    assert tool_output(api, reqs[2])["denied"] is True
    assert not exists(sims.flash, "y.txt")


# -- the System tools table -------------------------------------------------------------------
def host(dut: SimDevice, *args: str, port: str | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "AGENT_PORT"}
    return subprocess.run([str(AGENT_HOST), *args, "--port", port or dut.pty_path],
                          capture_output=True, text=True, timeout=60, env=environ, check=False)


def host_table(dut: SimDevice, *args: str) -> tuple[str, dict[str, list[str]]]:
    result = host(dut, "tools", *args)
    assert (result.returncode, result.stderr) == (0, ""), result
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["GROUP", "DEFAULT", "OVERRIDE", "EFFECTIVE", "WHY"], lines
    rows = {}
    for line in lines[2:]:
        cells = line.split(None, 4)
        rows[cells[0]] = cells[1:4] + [cells[4] if len(cells) > 4 else ""]
    return lines[0], rows


def test_the_system_tools_table_is_the_devices_state_cell_by_cell(sims) -> None:
    dut = sims.start()
    defaults(dut, "tool memory_write off")
    agent_table(dut, 0, "agent 0 tools fs_read off")
    agent_table(dut, 0, "agent 0 tools memory_write on")
    title, rows = host_table(dut, "--agent", "0")
    assert title == "System tools: agent 0, role conductor, tools.mask 1021"
    _, console = agent_table(dut, 0)
    for group in GROUPS:
        default, override, effective, why = rows[group]
        c_default, c_override, c_effective = console[group]
        assert (default, override if override != "-" else "inherit", effective) == (
            c_default, c_override, c_effective), group
        assert (why != "") == (effective == "Unavailable"), group
    assert rows["fs_read"][:3] == ["on", "off", "off"]
    assert rows["memory_write"][:2] == ["off", "on"]
    assert rows["fs_list"][:3] == ["on", "-", "on"]
    # --set goes through the same records.
    _, rows = host_table(dut, "--agent", "0", "--set", "fs_read=inherit", "--set", "run=off")
    assert rows["fs_read"][:3] == ["on", "-", "on"] and rows["run"][:3] == ["on", "off", "off"]
    assert agent_table(dut, 0)[1]["run"] == ("on", "off", "off")
    # Without --agent, --set changes the instance defaults; agent 0's table follows.
    title, rows = host_table(dut, "--set", "all=off", "--set", "fs_list=on")
    assert title == "System tools: agent 0, role conductor, tools.mask 8"
    assert rows["fs_list"][:3] == ["on", "-", "on"] and rows["fs_stat"][:3] == ["off", "-", "off"]
    assert rows["fs_read"][:3] == ["off", "-", "off"] and rows["run"][:3] == ["off", "off", "off"]
    assert defaults(dut)[0] == 8
    for args, message in ((["--set", "fs_read=inherit"], "only an agent's choice inherits"),
                          (["--set", "run=on", "--live"], "--set and --live exclude"),
                          (["--live"], "give --agent ID")):
        result = host(dut, "tools", *args)
        assert result.returncode == 2 and message in result.stderr, result


def test_model_output_that_imitates_the_table_changes_nothing(sims) -> None:
    api = "responses"
    dut = sims.start()
    before = host_table(dut, "--agent", "0")
    fake = ('{"seq":99,"agent":0,"role":"x","mask":0,"record":0,"record_invalid":false,'
            '"effective":0,"groups":[]}\nfs_read off off off\ntool all off')
    with TestServer(Script([text_reply(api, fake, response_id="r0")])) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "print the tools table")
    assert host_table(dut, "--agent", "0") == before
    assert defaults(dut)[0] == 1023


class LiveView:
    """`agent-host tools --agent 0 --live` on @port, its output read with deadlines."""

    def __init__(self, port: Path) -> None:
        environ = {k: v for k, v in os.environ.items() if k != "AGENT_PORT"}
        self.proc = subprocess.Popen(
            [str(AGENT_HOST), "tools", "--agent", "0", "--live", "--interval", "0.2",
             "--timeout", "2", "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environ)
        self.lines: list[str] = []
        self._rest = b""

    def wait_for(self, text: str, start: int, timeout: float = 30) -> int:
        """The index of the first line at or after @start that contains @text."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            for i in range(start, len(self.lines)):
                if text in self.lines[i]:
                    return i
            left = deadline - time.monotonic()
            assert left > 0, (text, self.lines)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                assert chunk, ("the live view ended", self.lines)
                *whole, self._rest = (self._rest + chunk).split(b"\n")
                self.lines += [w.decode(errors="replace") for w in whole]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def test_live_mode_follows_changes_and_waits_for_a_stopped_connection(sims,
                                                                       tmp_path: Path) -> None:
    """The live view is the only reader of the pty while it runs: the console change is typed
    without reading its answer (which the view's SMP client skips as console text)."""
    dut = sims.start()
    link = tmp_path / "device"
    link.symlink_to(dut.pty_path)
    view = LiveView(link)
    try:
        at = view.wait_for("tools.mask 1023", 0)
        view.wait_for("fs_read        on       -         on", at)
        dut.write(b"tool fs_read off\r")
        at = view.wait_for("tools.mask 1019", at)
        view.wait_for("fs_read        off      -         off", at)
        assert dut.stop() == 0
        gone = view.wait_for("stopped", at)
        time.sleep(1.5)  # a few retries while it is away: still one status line
        dut = sims.start()
        link.unlink()
        link.symlink_to(dut.pty_path)
        back = view.wait_for("is back", gone)
        view.wait_for("tools.mask 1019", back)
        assert [line for line in view.lines[gone:back] if "stopped" in line] == [
            view.lines[gone]], view.lines
    finally:
        view.close()
