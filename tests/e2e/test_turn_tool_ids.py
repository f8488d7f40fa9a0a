"""Tool ids in turn records (docs/conversation-format.md "Tool id records", docs/tools.md "Tool
ids"): a chat turn whose model calls built-in tools stores each call's line and its numeric id;
one that calls an imported Lua or Python tool module stores id 0 with the tool's name in the
line. The stored file is read back over SMP (`agent-host export`, raw and --text) and the
console keeps the imported tool's name, live and when the conversation is resumed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host import convfile
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from chat_term import API_PATH, APIS, RESUMED_BANNER, USER, ChatTerm, configure
from tool_checks import start_with_files

pytestmark = pytest.mark.sim_only("the simulator's pty and flash image")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
COLS, ROWS = 160, 40
#: The ids of docs/tools.md "Tool ids" that these tests call.
SYSTEM_STATUS, TOOL_SEARCH, STORAGE_LIST = 1, 3, 5
EXT = {"lua": "lua", "python": "py"}
ENTRY = {"lua": "print('hello ' .. arg[1])\n", "python": "import sys\nprint('hello ' + sys.argv[1])\n"}


def host(dut: SimDevice, *args: str) -> str:
    """agent-host against @dut's pty; its stdout (exit 0 and no stderr checked)."""
    result = subprocess.run([str(AGENT_HOST), *args, "--port", dut.pty_path],
                            capture_output=True, timeout=60, check=False)
    assert result.returncode == 0, result
    return result.stdout.decode()


def stored(dut: SimDevice, slot: int, tmp_path: Path) -> convfile.ConvFile:
    """The slot's file exported over SMP, checked by the host's reader."""
    target = tmp_path / f"conv{slot}.bin"
    subprocess.run([str(AGENT_HOST), "export", str(slot), "-o", str(target), "--port",
                    dut.pty_path], capture_output=True, timeout=60, check=True)
    return convfile.parse(target.read_bytes(), slot)


def tool_records(conv: convfile.ConvFile) -> list[tuple[int, bytes]]:
    return [(r.type, r.payload) for r in conv.records
            if r.type in (convfile.REC_TOOL, convfile.REC_TOOL_ID)]


def chat(dut: SimDevice, api: Api, replies: list, prompt: str) -> list[str]:
    """One turn in a new chat; the lines the chat showed."""
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, COLS, ROWS)
        term.open()
        term.send(prompt)
        shown = term.shown_lines()
        term.leave()
        srv.wait_for_requests(len(replies))
        srv.check()
    return shown


@pytest.mark.parametrize("api", APIS)
def test_built_in_tools_are_stored_with_their_ids(sims, api: Api, tmp_path: Path) -> None:
    search = {"query": "storage_list"}
    listing = {"path": "/lfs"}
    dut = sims.start()
    chat(dut, api, [
        tool_call_reply(api, "system_status", {}, "call_1", response_id="resp_1"),
        tool_call_reply(api, "tool_search", search, "call_2", response_id="resp_2"),
        tool_call_reply(api, "storage_list", listing, "call_3", response_id="resp_3"),
        text_reply(api, "Listed.", response_id="resp_4"),
    ], "list my files")
    conv = stored(dut, 1, tmp_path)
    assert conv.version == 2
    search_line = f"tool_search {json.dumps(search, separators=(',', ':'))}"
    list_line = f"storage_list {json.dumps(listing, separators=(',', ':'))}"
    assert tool_records(conv) == [
        (convfile.REC_TOOL, b"system_status {}"), (convfile.REC_TOOL_ID, b"\x01\x00"),
        (convfile.REC_TOOL, search_line.encode()), (convfile.REC_TOOL_ID, b"\x03\x00"),
        (convfile.REC_TOOL, list_line.encode()), (convfile.REC_TOOL_ID, b"\x05\x00"),
    ]
    text = host(dut, "export", "1", "--text").splitlines()
    assert [line for line in text if line.startswith("tool: ")] == [
        f"tool: system_status {{}} (tool id {SYSTEM_STATUS})",
        f"tool: {search_line} (tool id {TOOL_SEARCH})",
        f"tool: {list_line} (tool id {STORAGE_LIST})",
    ]


@pytest.mark.parametrize("lang", ["lua", "python"])
def test_an_imported_tool_is_stored_as_0_under_its_name(sims, lang: str,
                                                          tmp_path: Path) -> None:
    api: Api = "responses"
    name = f"hello_{lang}"
    manifest = "\n".join([f"name: {name}", "kind: tool", "description: Says hello.",
                          f"runtime: {lang}", f"entry: main.{EXT[lang]}", "risk: read",
                          "args: who: string"]) + "\n"
    dut = start_with_files(sims, {f"tools/{name}/module.manifest": manifest.encode(),
                                  f"tools/{name}/main.{EXT[lang]}": ENTRY[lang].encode()})
    assert dut.exec_command(f"agent import tools/{name}") == [
        f"import: tool {name} accepted (installed)"]
    shown = chat(dut, api, [
        tool_call_reply(api, "tool_search", {"query": name}, "call_1", response_id="resp_1"),
        tool_call_reply(api, name, {"who": "bob"}, "call_2", response_id="resp_2"),
        text_reply(api, "Greeted.", response_id="resp_3"),
    ], "greet bob")
    # The console names the imported tool, as it ran.
    assert f'[tool call] {name} {{"who":"bob"}}' in shown, shown
    assert f"[tool] {name}: done" in shown, shown

    conv = stored(dut, 1, tmp_path)
    assert tool_records(conv) == [
        (convfile.REC_TOOL, f'tool_search {{"query":"{name}"}}'.encode()),
        (convfile.REC_TOOL_ID, b"\x03\x00"),
        (convfile.REC_TOOL, f'{name} {{"who":"bob"}}'.encode()),
        (convfile.REC_TOOL_ID, b"\x00\x00"),
    ]
    text = host(dut, "export", "1", "--text").splitlines()
    assert [line for line in text if line.startswith("tool: ")] == [
        f'tool: tool_search {{"query":"{name}"}} (tool id {TOOL_SEARCH})',
        f'tool: {name} {{"who":"bob"}} (tool id 0)',
    ]
    # Resumed, the console replays the stored lines: the name, never the id.
    term = ChatTerm(dut, COLS, ROWS)
    term.open("agent resume 1", RESUMED_BANNER)
    term.settle(0.1)
    assert term.shown_lines()[-5:] == [
        f"{USER}: greet bob", f'[tool] tool_search {{"query":"{name}"}}',
        f'[tool] {name} {{"who":"bob"}}', "agent: Greeted.", RESUMED_BANNER], term.dump()
    term.leave()
