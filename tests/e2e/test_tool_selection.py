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
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from agent_host.mgmt import Endpoint, open_device
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Faults, RecordedRequest, Script, TestServer
from agent_host.testserver.dialogue import (
    advertised_names,
    function_call_output,
    text_reply,
    tool_call_reply,
)
from agent_host.tool_status import GROUPS
from flash_image import exists, read_file, write_files

pytestmark = pytest.mark.sim_only("the simulator's flash image, settings file and pty")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
SETTINGS = ".settings"
API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}


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


# -- the console's views ----------------------------------------------------------------------
def defaults(dut: SimDevice, command: str = "tool") -> tuple[int, dict[str, str]]:
    lines = dut.exec_command(command)
    assert lines[0].startswith("tools.mask "), lines
    rows = dict(line.split() for line in lines[1:])
    assert list(rows) == list(GROUPS), lines
    return int(lines[0].split()[1]), rows


def agent_table(dut: SimDevice, agent: int, command: str | None = None
                ) -> tuple[list[str], dict[str, tuple[str, str, str]]]:
    """`agent ID tools` as (the lines before the table, {group: (default, override,
    effective word)})."""
    lines = dut.exec_command(command or f"agent {agent} tools")
    head = lines.index("  group          default override effective")
    rows = {}
    for line in lines[head + 1:]:
        group, default, override, effective = line.split(None, 3)
        rows[group] = (default, override, effective.split(":")[0])
    assert list(rows) == list(GROUPS), lines
    return lines[:head], rows


# -- commands and records ---------------------------------------------------------------------
def test_tool_sets_each_bit_of_tools_mask_and_a_restart_keeps_it(sims) -> None:
    dut = sims.start()
    assert defaults(dut) == (1023, {g: "on" for g in GROUPS})
    assert "agent/tools.mask" not in stored(sims)
    for bit, group in enumerate(GROUPS):
        mask, rows = defaults(dut, f"tool {group} off")
        assert mask == 1023 - (1 << bit), group
        assert [g for g, v in rows.items() if v == "off"] == [group]
        assert stored(sims)["agent/tools.mask"] == str(1023 - (1 << bit)).encode()
        assert defaults(dut, f"tool {group} on")[0] == 1023
    assert defaults(dut, "tool all off") == (0, {g: "off" for g in GROUPS})
    assert defaults(dut, "tool run on")[0] == 1 << 6
    dut = sims.restart(dut)
    assert defaults(dut)[0] == 1 << 6
    assert defaults(dut, "tool all on")[0] == 1023
    # Refusals change nothing.
    assert dut.exec_command("tool fs_read maybe") == ["agent: usage: tool [all|NAME on|off]"]
    assert dut.exec_command("tool fs_reads off")[0].startswith('agent: no tool group "fs_reads"')
    assert dut.exec_command("tool fs_read off extra") == ["agent: usage: tool [all|NAME on|off]"]
    assert defaults(dut)[0] == 1023


def test_agent_tools_writes_two_bits_per_group(sims) -> None:
    dut = sims.start()
    key = "agent/tools.agent.0"
    for bit, group in enumerate(GROUPS):
        for word, value in (("off", 1), ("on", 2)):
            _, rows = agent_table(dut, 0, f"agent 0 tools {group} {word}")
            assert rows[group][1] == word
            assert stored(sims)[key] == str(value << (2 * bit)).encode(), (group, word)
        agent_table(dut, 0, f"agent 0 tools {group} inherit")
        assert key not in stored(sims)  # every group inherits: no record
    _, rows = agent_table(dut, 0, "agent 0 tools all off")
    assert {r[1:] for r in rows.values()} == {("off", "off")}
    assert stored(sims)[key] == str(sum(1 << (2 * b) for b in range(10))).encode()
    # An override beats the default in either direction.
    assert defaults(dut, "tool fs_list off")[0] == 1023 - 8
    _, rows = agent_table(dut, 0, "agent 0 tools fs_list on")
    assert rows["fs_list"] == ("off", "on", "on")
    dut = sims.restart(dut)
    _, rows = agent_table(dut, 0)
    assert rows["fs_list"] == ("off", "on", "on") and rows["fs_read"] == ("on", "off", "off")
    _, rows = agent_table(dut, 0, "agent 0 tools all inherit")
    assert rows["fs_read"][1:] == ("inherit", "on") and rows["fs_list"][1:] == ("inherit", "off")
    assert key not in stored(sims)
    # Refusals: an id out of range, a slot without a conversation, a bad word or group.
    assert dut.exec_command("agent 9 tools") == ["agent: agent ids are 0..8"]
    assert dut.exec_command("agent 2 tools fs_read off") == [
        "agent: agent 2: slot 2 holds no conversation"]
    assert dut.exec_command("agent 0 tools fs_read maybe") == [
        "agent: usage: agent ID tools [NAME|all on|off|inherit]"]
    assert dut.exec_command("agent 0 tools nothing off")[0].startswith(
        'agent: no tool group "nothing"')


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
def tool_output(api: str, req: RecordedRequest) -> object:
    if api == "responses":
        return function_call_output(req.json)[1]
    return json.loads(req.json["messages"][-1]["content"])


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_every_group_off_sends_no_tools_and_refuses_a_call(sims, api: str) -> None:
    dut = sims.start()
    assert defaults(dut, "tool all off")[0] == 0
    script = Script([
        tool_call_reply(api, "system_status", {}, "call_0", response_id="r0"),
        text_reply(api, "No tools.", response_id="r1"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, "what is your status?")
        reqs = srv.wait_for_requests(2)
        srv.check()
    for req in reqs:
        assert "tools" not in req.json and "parallel_tool_calls" not in req.json
        assert "tool_choice" not in req.json
    instructions = (reqs[0].json["instructions"] if api == "responses"
                    else reqs[0].json["messages"][0]["content"])
    assert "tool" not in instructions.lower()
    assert tool_output(api, reqs[1]) == {
        "refused": "system_status is disabled by the tool selection (every group is off for "
                   "this agent)"}
    assert "No tools." in "\n".join(run.lines)
    # The agent's own choice does the same with the defaults on.
    assert defaults(dut, "tool all on")[0] == 1023
    agent_table(dut, 0, "agent 0 tools all off")
    with TestServer(Script([text_reply(api, "Fine.", response_id="r2")])) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "hello")
        assert "tools" not in srv.wait_for_requests(1)[0].json


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_disabled_group_is_not_offered_and_its_call_is_refused(sims, api: str) -> None:
    dut = sims.start()
    defaults(dut, "tool fs_read off")
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "read a file"}, "call_0",
                        response_id="r0"),
        tool_call_reply(api, "storage_read", {"path": "x.txt"}, "call_1", response_id="r1"),
        text_reply(api, "Done.", response_id="r2"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "read x.txt")
        reqs = srv.wait_for_requests(3)
        srv.check()
    offered = advertised_names(reqs[1].json, api) or []
    assert "storage_stat" in offered  # fs_stat is on: tool_search found it
    assert not {"storage_read", "storage_read_range", "storage_search"} & set(offered)
    assert "system_status" in offered and "tool_search" in offered  # no group: offered
    assert tool_output(api, reqs[2]) == {
        "refused": "storage_read is disabled by the tool selection (group fs_read is off for "
                   "this agent)"}
    status = dut.exec_command("agent status")
    assert any("denied" in line for line in status)


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
    assert "storage_write" not in (advertised_names(reqs[1].json, api) or [])
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


def test_live_mode_follows_changes_and_waits_for_a_stopped_connection(sims,
                                                                       tmp_path: Path) -> None:
    dut = sims.start()
    link = tmp_path / "device"
    link.symlink_to(dut.pty_path)
    environ = {k: v for k, v in os.environ.items() if k != "AGENT_PORT"}
    proc = subprocess.Popen([str(AGENT_HOST), "tools", "--agent", "0", "--live", "--interval",
                             "0.2", "--timeout", "1", "--port", str(link)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=environ)
    try:
        def wait_for(text: str, seen: list[str], timeout: float = 20) -> None:
            deadline = time.monotonic() + timeout
            assert proc.stdout is not None
            while not any(text in line for line in seen):
                assert time.monotonic() < deadline, (text, seen)
                line = proc.stdout.readline()
                assert line, ("the live view ended", seen)
                seen.append(line.rstrip("\n"))

        seen: list[str] = []
        wait_for("fs_read", seen)
        defaults(dut, "tool fs_read off")
        wait_for("tools.mask 1019", seen)
        assert dut.stop() == 0
        wait_for("stopped", seen)
        time.sleep(1.5)  # a few retries while it is away: still one status line
        dut = sims.start()
        link.unlink()
        link.symlink_to(dut.pty_path)
        wait_for("is back", seen)
        wait_for("tools.mask 1019", seen[seen.index(next(x for x in seen if "is back" in x)):])
        assert sum("stopped" in line for line in seen) == 1, seen
    finally:
        proc.terminate()
        proc.wait(10)
