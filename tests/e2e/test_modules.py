"""Modules over the simulator's console (docs/modules.md): the spec's arithmetic skill imported
as written, the supplied roles at start-up and the console agent, --modules in name order and
no deeper, refusals with their reasons and nothing installed, restore after a restart with the
files changed on disk, and a role's overlay, skills and granted tools in the request the test
server records, with skill_use returning the exact installed body. Removal's refusals are in
test_modules_device.py, which runs here too."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import (
    advertised_names,
    function_call_output,
    text_reply,
    tool_call_reply,
)
from conv_bytes import build
from flash_image import exists, write_files
from module_checks import console_modules

pytestmark = pytest.mark.sim_only("the simulator's flash image, --modules and process")

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "modules" / "roles"
#: The spec's example, verbatim.
ARITHMETIC = (b"---\nname: arithmetic\ndescription: Gives rules for arithmetic tasks.\n---\n"
              b"Check each operation and state the unit of each result.\n")
ARITHMETIC_BODY = "Check each operation and state the unit of each result.\n"


def start_with(sims, files: dict[str, bytes], extra: list[str] | None = None) -> SimDevice:
    first = sims.start(extra)
    assert first.stop() == 0, first.stderr_text()
    write_files(sims.flash, files)
    return sims.start(extra)


def modules(dut: SimDevice) -> dict[str, tuple[str, str]]:
    """`agent modules` as {name: (kind, state)}."""
    return {name: (row[0], row[3]) for name, row in console_modules(dut).items()}


def journal_bytes(dut: SimDevice) -> int:
    line = next(x for x in dut.exec_command("agent modules") if x.startswith("journal: "))
    match = re.match(r"journal: (\d+) bytes", line)
    assert match, line
    return int(match.group(1))


def role_dir(root: Path, name: str, manifest: str, overlay: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "module.manifest").write_text(manifest)
    (root / name / "overlay.txt").write_text(overlay)


# -- the spec's example and the console route -------------------------------------------------
def test_the_spec_arithmetic_skill_imports_as_written(sims) -> None:
    dut = start_with(sims, {"skills/arithmetic/SKILL.md": ARITHMETIC})
    assert dut.exec_command("agent import skills/arithmetic") == [
        "import: skill arithmetic accepted (installed)"]
    assert dut.exec_command("agent skills") == [
        "name                 bytes  description",
        f"arithmetic           {len(ARITHMETIC_BODY):<6} Gives rules for arithmetic tasks."]
    assert modules(dut)["arithmetic"] == ("skill", "installed")
    # The same text again: accepted, and nothing is written to the journal.
    before = journal_bytes(dut)
    assert dut.exec_command("agent import /lfs/skills/arithmetic") == [
        "import: skill arithmetic accepted (unchanged: the same text was installed)"]
    assert journal_bytes(dut) == before


def test_the_supplied_roles_create_the_console_agent(sims) -> None:
    dut = sims.start()
    rows = modules(dut)
    assert {n: rows[n] for n in ("conductor", "verifier", "worker")} == {
        n: ("role", "installed") for n in ("conductor", "verifier", "worker")}
    assert dut.exec_command("agent 0 role") == ["agent 0: role conductor (the console agent)"]
    status = dut.exec_command("agent status")
    assert "agent 0:   the console agent, role conductor" in status
    # A restart imports them again unchanged: the journal does not grow.
    before = journal_bytes(dut)
    dut = sims.restart(dut)
    assert journal_bytes(dut) == before


def test_without_modules_there_is_no_console_agent(sims) -> None:
    dut = sims.start(["--modules="])
    assert modules(dut) == {}
    assert dut.exec_command("agent 0 role") == [
        "agent 0: no role (the conductor is not installed)"]


def test_modules_imports_children_in_name_order_and_no_deeper(sims, tmp_path: Path) -> None:
    root = tmp_path / "mods"
    role_dir(root, "b-role", "name: bravo\nkind: role\ndescription: second\n", "Bravo.\n")
    role_dir(root, "a-role", "name: alpha\nkind: role\ndescription: first\n", "Alpha.\n")
    role_dir(root / "group", "deep", "name: deep\nkind: role\ndescription: deeper\n", "No.\n")
    (root / "stray.txt").write_text("not a directory\n")
    dut = sims.start(["--modules", str(root)])
    boot = dut.transcript.decode(errors="replace")
    first, second = boot.find("role alpha accepted"), boot.find("role bravo accepted")
    assert 0 <= first < second, boot
    assert "modules: " + str(root / "group") + " refused: " in boot  # not a module itself
    assert set(modules(dut)) == {"alpha", "bravo"}


def test_a_missing_modules_folder_stops_the_simulator(sims, tmp_path: Path) -> None:
    exe = sims.exe
    run = subprocess.run([str(exe), f"--flash={tmp_path / 'f.bin'}",
                          f"--modules={tmp_path / 'none'}"], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=30, check=False)
    assert run.returncode == 1
    assert f"error: --modules {tmp_path / 'none'}: No such file or directory" in run.stderr


REFUSALS = [
    ("name: x1\nkind: role\ndescription: d\nentry: a.lua\n", 'unknown key "entry" for a role'),
    ("name: x1\nkind: role\n", 'missing key "description"'),
    ("name: X1\nkind: role\ndescription: d\n", "name:"),
    ("name: x1\nkind: role\ndescription: " + "d" * 201 + "\n", "description: 201 bytes, at most 200"),
    ("name: x1\nkind: role\ndescription: d\noverlay: none.txt\n",
     "none.txt: missing (named by the manifest)"),
]


@pytest.mark.parametrize(("manifest", "reason"), REFUSALS)
def test_a_refused_import_names_the_key_or_limit(sims, manifest: str, reason: str) -> None:
    dut = start_with(sims, {"m/module.manifest": manifest.encode(), "m/overlay.txt": b"Hi.\n"},
                     ["--modules="])
    lines = dut.exec_command("agent import m")
    assert len(lines) == 1 and lines[0].startswith("import: refused: "), lines
    assert reason in lines[0], lines
    assert modules(dut) == {}


def test_restore_keeps_the_accepted_text_when_files_change(sims) -> None:
    dut = start_with(sims, {"skills/arithmetic/SKILL.md": ARITHMETIC}, ["--modules="])
    assert dut.exec_command("agent import skills/arithmetic")[0].endswith("(installed)")
    assert dut.stop() == 0
    changed = ARITHMETIC.replace(b"Check each", b"Never check any")
    write_files(sims.flash, {"skills/arithmetic/SKILL.md": changed})
    dut = sims.start(["--modules="])
    assert dut.exec_command("agent skills")[1].split()[:2] == ["arithmetic",
                                                               str(len(ARITHMETIC_BODY))]
    removed = dut.exec_command("agent remove arithmetic")
    assert removed == ["remove: arithmetic removed"]
    dut = sims.restart(dut)
    assert "arithmetic" not in modules(dut)


# -- roles and skills in the request ----------------------------------------------------------
CONDUCTOR = ("name: conductor\nkind: role\ndescription: the test's console agent\n"
             "skills: arithmetic, absent\ntools: fs_read, skill_use\n")
OVERLAY = "Role: test conductor. Answer in one word.\n"


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_the_role_overlay_skills_and_grants_reach_the_request(sims, tmp_path: Path,
                                                              api: str) -> None:
    root = tmp_path / "mods"
    role_dir(root, "conductor", CONDUCTOR, OVERLAY)
    (root / "arithmetic").mkdir()
    (root / "arithmetic" / "SKILL.md").write_bytes(ARITHMETIC)
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "use a skill"}, "call_0",
                        response_id="r0"),
        tool_call_reply(api, "skill_use", {"name": "arithmetic"}, "call_1", response_id="r1"),
        tool_call_reply(api, "storage_write", {"path": "x.txt", "content": "x"}, "call_2",
                        response_id="r2"),
        text_reply(api, "Done.", response_id="r3"),
    ])
    dut = sims.start(["--modules", str(root)])
    with TestServer(script) as srv:
        configure(dut, srv.url(f"/v1/{'responses' if api == 'responses' else 'chat/completions'}"))
        run = ask(dut, "add 2 and 2")
        reqs = srv.wait_for_requests(4)
        srv.check()
    first = reqs[0].json
    assert isinstance(first, dict)
    if api == "responses":
        instructions = first["instructions"]
    else:
        instructions = first["messages"][0]["content"]
    assert instructions.startswith("You are the assistant inside a Zephyr RTOS device")
    assert ("\n\n" + OVERLAY + "\n\n## Skill arithmetic\n\n" + ARITHMETIC_BODY) in instructions
    # Granted: the tools of no group and the fs_read and skill_use groups; nothing else.
    offered = advertised_names(first, api) or []
    assert "storage_write" not in offered and "script_run_lua" not in offered
    status = dut.exec_command("agent status")
    assert ("instructions: last request had role conductor, 1 skills (1 not installed, 0 left "
            "out for room)") in status
    assert "[tool] skill_use: done" in run.lines
    # skill_use's result is the exact installed body; a call the role does not grant is
    # refused and nothing runs.
    assert "skill_use" in (advertised_names(reqs[1].json, api) or [])
    if api == "responses":
        _, result = function_call_output(reqs[2].json)
        _, refused = function_call_output(reqs[3].json)
    else:
        result = json.loads(reqs[2].json["messages"][-1]["content"])
        refused = json.loads(reqs[3].json["messages"][-1]["content"])
    assert result == {"name": "arithmetic", "body": ARITHMETIC_BODY}
    assert refused == {"refused": "storage_write is not granted to this agent's role"}
    assert dut.stop() == 0
    assert not exists(sims.flash, "x.txt")  # nothing ran


# -- agent ids and roles ----------------------------------------------------------------------
def stored_conversation(slot: int) -> bytes:
    return build(slot, 2, "openai", "test-model", f"conversation {slot}",
                 [("question", [], "answer")], conv_id=slot, seq=slot,
                 created=1_700_000_000, updated=1_700_000_100, response_id=f"resp_{slot}",
                 usage=(10, 5, 15, 0))


def test_an_agent_gets_a_role_and_keeps_it_while_its_conversation_lasts(sims) -> None:
    dut = start_with(sims, {".agent/conversations/conv1.bin": stored_conversation(1),
                            "skills/arithmetic/SKILL.md": ARITHMETIC})
    assert dut.exec_command("agent 1 role") == ["agent 1: role conductor (inherited from agent 0)"]
    assert dut.exec_command("agent 1 role verifier") == ["agent 1: role verifier (set)"]
    listed = dut.exec_command("agent list")
    assert listed[1].split()[:4] == ["slot", "turns", "bytes", "role"], listed
    assert listed[2].split()[3] == "verifier", listed
    assert dut.exec_command("agent remove verifier") == [
        "remove: verifier refused: role verifier is in use by agent 1"]
    # Refusals: a slot without a conversation, an id out of range, a module that is not a
    # role, a role that is not installed, agent 0's role.
    assert dut.exec_command("agent 3 role worker") == [
        "agent: agent 3: slot 3 holds no conversation"]
    assert dut.exec_command("agent 9 role worker") == ["agent: agent ids are 0..8"]
    assert dut.exec_command("agent import skills/arithmetic")[0].endswith("(installed)")
    assert dut.exec_command("agent 1 role arithmetic") == [
        "agent: arithmetic is a skill, not a role"]
    assert dut.exec_command("agent 1 role nobody") == [
        'agent: no role named "nobody" is installed']
    assert dut.exec_command("agent 0 role worker")[0].startswith("agent: agent 0: ids 1..8")
    # Restored at boot; forgotten with the conversation.
    dut = sims.restart(dut)
    assert dut.exec_command("agent 1 role") == ["agent 1: role verifier (set)"]
    assert dut.exec_command("agent delete 1") == ["slot 1 deleted"]
    assert dut.exec_command("agent remove verifier") == ["remove: verifier removed"]


# -- the journal at boot ----------------------------------------------------------------------
JOURNAL = ".agent/modules.journal"
JOURNAL_HEADER = bytes.fromhex("414d4a31010c00009e2fed26")


def import_record(name: str, text: bytes, kind: int = 1) -> bytes:
    """An IMPORT record of a skill that is a SKILL.md alone (docs/modules.md "Layout")."""
    head = struct.pack("<BBBBII", 1, kind, len(name), 0, 0, len(text))
    record = head + hashlib.sha256(text).digest() + name.encode() + text
    return record + struct.pack("<I", zlib.crc32(record))


def skill_md(name: str, body: str) -> bytes:
    return f"---\nname: {name}\ndescription: {name}.\n---\n{body}\n".encode()


def test_an_incomplete_journal_record_is_cleared_and_reported(sims) -> None:
    good = import_record("hi", skill_md("hi", "Say hello."))
    cut = import_record("lo", skill_md("lo", "Say goodbye."))[:-9]  # power lost mid-record
    dut = start_with(sims, {JOURNAL: JOURNAL_HEADER + good + cut}, ["--modules="])
    boot = dut.transcript.decode(errors="replace")
    assert ("modules: journal replayed, 1 modules from 1 records; an incomplete import of lo "
            "was cleared") in boot, boot
    assert modules(dut) == {"hi": ("skill", "installed")}
    assert "journal: an incomplete import of lo was cleared at boot" in dut.exec_command(
        "agent modules")
    assert journal_bytes(dut) == len(JOURNAL_HEADER + good)  # the tail was cut
    dut = sims.restart(dut)
    assert "modules: journal replayed, 1 modules from 1 records\r\n" in dut.transcript.decode()


def test_a_full_journal_is_compacted_by_the_import_and_restores_the_same(sims) -> None:
    """Replacing a 10 KB tool module eight times passes the 64 KiB journal: the import compacts
    it (the installed modules, in their installation order) and goes on; a restart restores
    the same catalog."""
    def tool(text: bytes) -> dict[str, bytes]:
        return {"module.manifest": b"name: big\nkind: tool\ndescription: d\nruntime: lua\n"
                                   b"entry: big.lua\n", "big.lua": text}

    versions = [b"-- " + bytes([65 + v]) * 10000 + b"\nreturn 1\n" for v in range(2)]
    files = {"zeta/SKILL.md": skill_md("zeta", "First."), "alpha/SKILL.md": skill_md("alpha", "2.")}
    for v, text in enumerate(versions):
        files.update({f"big{v}/{name}": data for name, data in tool(text).items()})
    dut = start_with(sims, files, ["--modules="])
    for name in ("zeta", "alpha"):
        assert dut.exec_command(f"agent import {name}")[0].endswith("(installed)")
    sizes = []
    for round_ in range(8):
        assert dut.exec_command(f"agent import big{round_ % 2}")[0].startswith(
            "import: tool big accepted"), round_
        sizes.append(journal_bytes(dut))
    assert max(sizes) <= 65536 and min(sizes[1:]) < max(sizes), sizes  # it shrank: compacted
    before = console_modules(dut)
    assert list(before) == ["zeta", "alpha", "big"]
    dut = sims.restart(dut)
    assert console_modules(dut) == before
    assert before["big"][2] == hashlib.sha256(b"".join(tool(versions[1]).values())).hexdigest()[:16]
