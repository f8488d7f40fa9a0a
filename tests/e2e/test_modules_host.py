"""Modules imported from the host (`agent-host import`, docs/modules.md "Over the management
group") into the simulator over its pty with the real smpclient: a role, the spec's arithmetic
skill as SKILL.md alone and a tool, listed alike by `agent-host modules` and the console's
`agent modules`; refusals with the console's reasons; an interrupted transfer that is listed
as incomplete, never used, lost at a restart, continued by a resend and cleared by a
different import; removal and its refusals over SMP."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from agent_host.errors import DeviceRefusedError
from agent_host.mgmt import Device, Endpoint, open_device
from agent_host.module_dir import ModuleText, read_module
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Faults, Script, TestServer
from agent_host.testserver.dialogue import function_call_output, text_reply, tool_call_reply
from flash_image import write_files
from module_checks import console_modules

T = TypeVar("T")

pytestmark = pytest.mark.sim_only("the simulator's pty, flash image and --modules")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
#: CONFIG_AGENT_CATALOG_BYTES of the simulator (the app/Kconfig default).
CATALOG_BYTES = 24576
#: The spec's example, verbatim.
ARITHMETIC = (b"---\nname: arithmetic\ndescription: Gives rules for arithmetic tasks.\n---\n"
              b"Check each operation and state the unit of each result.\n")
ROLE_MANIFEST = (b"# A role for the host import's test.\nname: helper\nkind: role\n"
                 b"description: Helps at the console.\nskills: arithmetic\ntools: fs_read\n")
ROLE_OVERLAY = b"Role: helper. Answer briefly.\n"
TOOL_ENTRY = b"local n = 0\nfor i = 1, times do n = n + i end\nreturn n\n"
TOOL_MANIFEST = (b"name: count\r\nkind: tool\r\ndescription: Adds 1..times.\r\nruntime: lua\r\n"
                 b"entry: count.lua\r\nargs: times:integer\r\nrisk: read\r\ndigest: "
                 + hashlib.sha256(TOOL_ENTRY).hexdigest().encode() + b"\r\n")


# -- helpers ----------------------------------------------------------------------------------
def host(dut: SimDevice, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the agent-host console script against @dut's pty."""
    environ = {k: v for k, v in os.environ.items() if k not in ("AGENT_PORT",)}
    return subprocess.run([str(AGENT_HOST), *args, "--port", dut.pty_path], capture_output=True,
                          text=True, timeout=60, env=environ, check=False)


def ok(result: subprocess.CompletedProcess[str], stderr: str = "") -> str:
    assert (result.returncode, result.stderr) == (0, stderr), result
    return result.stdout


def make(root: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for file, data in files.items():
        (folder / file).write_bytes(data)
    return folder


def host_modules(dut: SimDevice) -> dict[str, tuple[str, str, str, str]]:
    """`agent-host modules` as {name: (kind, size, sha256, state)}."""
    lines = ok(host(dut, "modules")).splitlines()
    rows = {}
    for line in lines[2:]:
        name, kind, size, digest, state = line.split(None, 4)
        rows[name] = (kind, size, digest, state)
    assert lines[0] == f"catalog: {len(rows)} of 16 entries", lines
    if rows:
        assert lines[1].split() == ["NAME", "KIND", "SIZE", "SHA256", "STATE"]
    return rows


def agree(dut: SimDevice) -> dict[str, tuple[str, str, str, str]]:
    """The host's listing, checked against the console's (which shows 16 hex digits)."""
    listed = host_modules(dut)
    assert console_modules(dut) == {n: (k, s, d[:16], st) for n, (k, s, d, st) in listed.items()}
    return listed


def run(dut: SimDevice, steps: Callable[[Device], Awaitable[T]]) -> T:
    """@steps on a Device connected to @dut's pty."""
    async def session() -> T:
        async with open_device(Endpoint("serial", dut.pty_path)) as device:
            return await steps(device)

    return asyncio.run(session())


def interrupt(dut: SimDevice, text: ModuleText, parts: int, size: int = 40) -> int:
    """Send @text's head and @parts parts of @size bytes through the Device API, then stop;
    the offset the head was answered with."""
    async def steps(device: Device) -> int:
        start = await device.import_head(text)
        for k in range(parts):
            off = start + k * size
            answer = await device.import_part(text.name, off, text.text[off:off + size])
            assert (answer.state, answer.off) == ("incomplete", off + size)
        return start

    return run(dut, steps)


def skill_use(dut: SimDevice, name: str) -> object:
    """What skill_use returns for @name in one request (tool_search first, as a model would)."""
    api = "responses"
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "use a skill"}, "call_0",
                        response_id="r0"),
        tool_call_reply(api, "skill_use", {"name": name}, "call_1", response_id="r1"),
        text_reply(api, "Done.", response_id="r2"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url("/v1/responses"))
        ask(dut, "use a skill")
        reqs = srv.wait_for_requests(3)
        srv.check()
    return function_call_output(reqs[2].json)[1]


# -- import and listing -----------------------------------------------------------------------
def test_a_role_a_skill_and_a_tool_from_the_host(sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    role = make(tmp_path, "helper", {"module.manifest": ROLE_MANIFEST,
                                     "overlay.txt": ROLE_OVERLAY})
    skill = make(tmp_path / "skills", "arithmetic", {"SKILL.md": ARITHMETIC})
    tool = make(tmp_path, "count", {"module.manifest": TOOL_MANIFEST, "count.lua": TOOL_ENTRY,
                                    "notes.txt": b"not sent\n"})
    assert ok(host(dut, "import", str(role))) == "role helper accepted (installed)\n"
    assert ok(host(dut, "import", str(skill))) == "skill arithmetic accepted (installed)\n"
    assert ok(host(dut, "import", str(tool))) == "tool count accepted (installed)\n"
    texts = {"helper": ("role", ROLE_MANIFEST + ROLE_OVERLAY),
             "arithmetic": ("skill", ARITHMETIC), "count": ("tool", TOOL_MANIFEST + TOOL_ENTRY)}
    assert agree(dut) == {
        name: (kind, str(len(text)), hashlib.sha256(text).hexdigest(), "installed")
        for name, (kind, text) in texts.items()}
    assert dut.exec_command("agent skills") == [
        "name                 bytes  description",
        "arithmetic           56     Gives rules for arithmetic tasks."]
    # Sent again: unchanged; with another overlay: replaced at commit.
    assert ok(host(dut, "import", str(skill))) == (
        "skill arithmetic accepted (unchanged: the same text was installed)\n")
    (role / "overlay.txt").write_bytes(b"Role: helper, changed.\n")
    assert ok(host(dut, "import", str(role))) == "role helper accepted (replaced the installed one)\n"
    changed = ROLE_MANIFEST + b"Role: helper, changed.\n"
    assert agree(dut)["helper"] == ("role", str(len(changed)),
                                    hashlib.sha256(changed).hexdigest(), "installed")
    # Restored from the journal after a restart.
    listed = agree(dut)
    dut = sims.restart(dut)
    assert agree(dut) == listed


# A manifest or SKILL.md, the refusal's reason (as the console's `agent import` gives it).
REFUSALS = [
    ({"module.manifest": b"name: x1\nkind: role\ndescription: d\nentry: a.lua\n",
      "overlay.txt": b"Hi.\n"}, 'unknown key "entry" for a role'),
    ({"module.manifest": b"name: x1\nkind: role\n", "overlay.txt": b"Hi.\n"},
     'missing key "description"'),
    ({"module.manifest": b"name: x1\nkind: role\ndescription: " + b"d" * 201 + b"\n",
      "overlay.txt": b"Hi.\n"}, "description: 201 bytes, at most 200"),
    ({"module.manifest": b"name: x1\nkind: role\ndescription: d\n", "overlay.txt": b"\xff\n"},
     'overlay "overlay.txt": not UTF-8 at offset 0'),
    ({"module.manifest": b"name: x1\nkind: tool\ndescription: d\nruntime: lua\nentry: a.lua\n"
                         b"digest: " + b"0" * 64 + b"\n", "a.lua": b"return 1\n"},
     "digest: does not match the entry's SHA-256"),
    ({"SKILL.md": b"---\nname: x1\ndescription: d\nwhen: always\n---\nBody.\n"},
     'unknown key "when" in the SKILL.md header'),
]


@pytest.mark.parametrize(("files", "reason"), REFUSALS)
def test_a_refusal_reads_the_same_on_console_and_host(sims, tmp_path: Path,
                                                      files: dict[str, bytes],
                                                      reason: str) -> None:
    first = sims.start(["--modules="])
    assert first.stop() == 0
    write_files(sims.flash, {f"m/{name}": data for name, data in files.items()})
    dut = sims.start(["--modules="])
    console = dut.exec_command("agent import m")
    # The console names the module when it was read that far.
    assert console in ([f"import: refused: {reason}"], [f"import: x1 refused: {reason}"]), console
    folder = make(tmp_path, "m", files)
    result = host(dut, "import", str(folder))
    assert (result.returncode, result.stdout) == (1, ""), result
    assert result.stderr == f"agent-host: import {folder}: {reason} (EINVAL)\n"
    assert agree(dut) == {}


def test_what_cannot_be_sent_is_refused_on_the_host(sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    cases = [
        (make(tmp_path, "empty", {"README": b"no module here\n"}),
         "{}: no module.manifest and no SKILL.md"),
        (make(tmp_path, "nobody", {"module.manifest": b"name: x1\nkind: role\ndescription: d\n"
                                                      b"overlay: none.txt\n"}),
         "{}/none.txt: missing (named by the manifest)"),
        (make(tmp_path, "outside", {"module.manifest": b"name: x1\nkind: role\ndescription: d\n"
                                                       b"overlay: ../secret.txt\n"}),
         '{}/module.manifest: overlay: "../secret.txt" is not a file name'),
        (make(tmp_path, "kindless", {"module.manifest": b"name: x1\ndescription: d\n"}),
         '{}/module.manifest: missing key "kind"'),
        (make(tmp_path, "entryless", {"module.manifest": b"name: x1\nkind: tool\n"}),
         '{}/module.manifest: missing key "entry"'),
        (tmp_path / "empty" / "README", "{}: not a directory"),
        (tmp_path / "absent", "{}: no such directory"),
    ]
    (tmp_path / "secret.txt").write_text("never read\n")
    for folder, message in cases:
        result = host(dut, "import", str(folder))
        assert (result.returncode, result.stdout) == (2, ""), result
        assert result.stderr == f"agent-host: {message.format(folder)}\n"
    assert agree(dut) == {}


# -- an interrupted transfer ------------------------------------------------------------------
PARTIAL = (b"---\nname: partial\ndescription: Arrives in parts.\n---\n"
           + b"".join(b"Rule %d: check the unit of each result.\n" % i for i in range(40)))


def test_an_interrupted_transfer_is_listed_unused_lost_at_restart_and_continued(
        sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    arithmetic = make(tmp_path, "arithmetic", {"SKILL.md": ARITHMETIC})
    assert ok(host(dut, "import", str(arithmetic))) == "skill arithmetic accepted (installed)\n"
    folder = make(tmp_path, "partial", {"SKILL.md": PARTIAL})
    text = read_module(folder)
    digest = hashlib.sha256(PARTIAL).hexdigest()
    assert interrupt(dut, text, 3) == 0
    assert agree(dut)["partial"] == ("skill", str(len(PARTIAL)), digest,
                                     f"incomplete (120 of {len(PARTIAL)} bytes)")
    # Never used: not a skill, not removable, skill_use does not find it.
    assert dut.exec_command("agent skills") == [
        "name                 bytes  description",
        "arithmetic           56     Gives rules for arithmetic tasks."]
    reason = "partial is an incomplete arrival; import it again to replace or clear it"
    assert dut.exec_command("agent remove partial") == [f"remove: partial refused: {reason}"]
    result = host(dut, "remove", "partial")
    assert (result.returncode, result.stderr) == (
        1, f"agent-host: remove partial: {reason} (EBUSY)\n")
    assert skill_use(dut, "partial") == {"error": 'skill "partial" is not installed'}
    # The same text again continues where the device stopped.
    assert interrupt(dut, text, 2) == 120
    assert ok(host(dut, "import", str(folder)), stderr=(
        f"import {folder}: continued an interrupted transfer at byte 200 of "
        f"{len(PARTIAL)}\n")) == "skill partial accepted (installed)\n"
    assert agree(dut)["partial"] == ("skill", str(len(PARTIAL)), digest, "installed")
    assert skill_use(dut, "partial") == {"name": "partial",
                                        "body": PARTIAL.split(b"---\n", 2)[2].decode()}


def test_an_incomplete_arrival_does_not_survive_a_restart(sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    folder = make(tmp_path, "partial", {"SKILL.md": PARTIAL})
    assert interrupt(dut, read_module(folder), 2) == 0
    assert agree(dut)["partial"][3] == f"incomplete (80 of {len(PARTIAL)} bytes)"
    dut = sims.restart(dut)
    assert agree(dut) == {}
    # Sent again: a fresh arrival from byte 0 (no note on stderr).
    assert ok(host(dut, "import", str(folder))) == "skill partial accepted (installed)\n"


def test_a_different_import_clears_the_incomplete_arrival(sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    old = make(tmp_path, "old", {"SKILL.md": PARTIAL})
    assert interrupt(dut, read_module(old), 2) == 0
    new_text = PARTIAL.replace(b"Rule", b"Step")
    new = make(tmp_path, "new", {"SKILL.md": new_text})
    assert ok(host(dut, "import", str(new))) == "skill partial accepted (installed)\n"
    assert agree(dut) == {"partial": ("skill", str(len(new_text)),
                                      hashlib.sha256(new_text).hexdigest(), "installed")}


def test_a_refused_head_also_clears_the_incomplete_arrival(sims, tmp_path: Path) -> None:
    """A part the host sends before the head is answered never lands in the old arrival."""
    dut = sims.start(["--modules="])
    old = read_module(make(tmp_path, "old", {"SKILL.md": PARTIAL}))
    assert interrupt(dut, old, 2) == 0
    too_big = dataclasses.replace(old, body=b"x" * (CATALOG_BYTES + 1))

    async def steps(device: Device) -> str:
        try:
            await device.import_head(too_big)
        except DeviceRefusedError as err:
            return f"{err.rc_name}: {err.reason}"
        return "accepted"

    assert run(dut, steps) == (
        f"EINVAL: size: {CATALOG_BYTES + 1} bytes, the catalog holds {CATALOG_BYTES}")
    assert "partial" not in agree(dut)


def test_a_part_at_a_gap_is_refused_and_the_arrival_stays(sims, tmp_path: Path) -> None:
    dut = sims.start(["--modules="])
    text = read_module(make(tmp_path, "partial", {"SKILL.md": PARTIAL}))

    async def steps(device: Device) -> str:
        assert await device.import_head(text) == 0
        try:
            await device.import_part(text.name, 100, text.text[100:140])
        except DeviceRefusedError as err:
            return f"{err.rc_name}: {err.reason}"
        return "accepted"

    assert run(dut, steps) == (
        f"EINVAL: part: 40 bytes at offset 100; the arrival has 0 of {len(PARTIAL)} bytes")
    assert agree(dut)["partial"][3] == f"incomplete (0 of {len(PARTIAL)} bytes)"


# -- removal ----------------------------------------------------------------------------------
def test_removal_and_its_refusals_over_smp(sims) -> None:
    dut = sims.start()  # the supplied roles: the conductor is the console agent's
    cases = [("nothing", 'no module named "nothing"', "ENOENT"),
             ("storage_read",
              "storage_read is a built-in tool; built-in tools cannot be removed", "EPERM"),
             ("conductor", "role conductor is in use by the console agent (agent 0)", "EBUSY")]
    for name, reason, rc in cases:
        assert dut.exec_command(f"agent remove {name}") == [f"remove: {name} refused: {reason}"]
        result = host(dut, "remove", name)
        assert (result.returncode, result.stdout, result.stderr) == (
            1, "", f"agent-host: remove {name}: {reason} ({rc})\n")
    assert set(agree(dut)) == {"conductor", "verifier", "worker"}
    assert ok(host(dut, "remove", "worker")) == "worker removed\n"
    assert set(agree(dut)) == {"conductor", "verifier"}
    # A journaled REMOVE: still gone after a restart (that imports no roles).
    assert dut.stop() == 0
    dut = sims.start(["--modules="])
    assert set(agree(dut)) == {"conductor", "verifier"}


def test_a_tool_module_is_not_removed_while_a_request_runs(sims, tmp_path: Path) -> None:
    """An imported tool is active while a request that may offer it runs (docs/modules.md,
    "Removal"): the removal is refused then, and accepted once the request has ended."""
    dut = sims.start(["--modules="])
    tool = make(tmp_path, "count", {"module.manifest": TOOL_MANIFEST, "count.lua": TOOL_ENTRY})
    assert ok(host(dut, "import", str(tool))) == "tool count accepted (installed)\n"
    reply = text_reply("chat", "x" * 4000, response_id="r1")
    stalled = Script.repeat(dataclasses.replace(reply, faults=Faults(stall_after=300,
                                                                     stall_seconds=20)))
    with TestServer(stalled) as srv:
        configure(dut, srv.url("/v1/chat/completions"))
        mark = len(dut.transcript)
        dut.write(b"agent ask hello\r")
        deadline = time.monotonic() + 10
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.requests, "the request never reached the server"
        time.sleep(0.3)  # the answer has begun and stalls: the request runs
        reason = "tool count is active: a request that offers it is running"
        result = host(dut, "remove", "count")
        assert (result.returncode, result.stderr) == (
            1, f"agent-host: remove count: {reason} (EBUSY)\n"), result
        dut.write(b"\x1b")
        dut.read_until(b"agent: cancelled\r\n", 5, start=mark)
    dut.drain()
    assert ok(host(dut, "remove", "count")) == "count removed\n"
