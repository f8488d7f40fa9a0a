"""Imported device tools through the test server (docs/modules.md "Device tools"): a Lua and a
Python tool module with declared arguments, imported at the console and called by the model
after tool_search: the request bodies carry the tool's schema with the declared arguments in
their declared order, the script gets them as argv in that order (integers in decimal,
booleans true/false, argv[0] the tool's name) and the model gets the runner's status; the
manifest's `output` bound at N and N+1; a wrong-typed argument refused before anything runs;
tampered journal records refused at boot with the reason reported; replacement and removal
while idle re-register the tool."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from agent_host.testing.agent_tools import AskRun, ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import RecordedRequest, Reply, Script, TestServer
from agent_host.testserver.dialogue import (
    ToolCall,
    advertised_tools,
    text_reply,
    tool_call_reply,
)
from agent_host.testserver.plans import Api
from flash_image import exists
from module_checks import console_modules
from tool_checks import (
    API_PATH,
    APIS,
    activated_names,
    invalid_arguments,
    last_result,
    start_with_files,
    unknown_tool,
)

pytestmark = pytest.mark.needs_host_flash("writes the module directories into the flash image")

LANGS = ["lua", "python"]
EXT = {"lua": "lua", "python": "py"}
PROMPT = "greet someone"
#: Prints its argv: [0] is the tool's name, then the declared arguments in declared order.
ARGV = {
    "lua": "print(table.concat({arg[0], arg[1], arg[2], arg[3]}, '|'))\n",
    "python": "import sys\nprint('|'.join(sys.argv[:4]))\n",
}
#: Prints n - 1 x's and a line break: n bytes of output.
PRINT_N = {
    "lua": "print(string.rep('x', tonumber(arg[1]) - 1))\n",
    "python": "import sys\nprint('x' * (int(sys.argv[1]) - 1))\n",
}
#: Leaves a file behind when it runs.
WRITES = {
    "lua": "device.write('/lfs/ran.txt', 'ran')\n",
    "python": "import device\ndevice.write('/lfs/ran.txt', 'ran')\n",
}
ARGS = "who: string, times: integer, loud: boolean"
JOURNAL = ".agent/modules.journal"


def manifest(name: str, lang: str, args: str | None = ARGS, output: int | None = None,
             digest: bytes | None = None) -> bytes:
    lines = [f"name: {name}", "kind: tool", f"description: Greets someone, {lang} edition.",
             f"runtime: {lang}", f"entry: main.{EXT[lang]}", "risk: read"]
    if args is not None:
        lines.append(f"args: {args}")
    if output is not None:
        lines.append(f"output: {output}")
    if digest is not None:
        lines.append(f"digest: {hashlib.sha256(digest).hexdigest()}")
    return ("\n".join(lines) + "\n").encode()


def module_files(folder: str, name: str, lang: str, entry: str, **kw: object) -> dict[str, bytes]:
    return {f"{folder}/module.manifest": manifest(name, lang, **kw),  # type: ignore[arg-type]
            f"{folder}/main.{EXT[lang]}": entry.encode()}


def imported(dut: SimDevice, folder: str) -> str:
    lines = dut.exec_command(f"agent import {folder}")
    assert len(lines) == 1, lines
    return lines[0]


def dialogue(api: Api, calls: list[ToolCall]) -> list[Reply]:
    replies = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
               for i, c in enumerate(calls)]
    return [*replies, text_reply(api, "Done.", response_id="resp_end")]


def run_calls(dut: SimDevice, api: Api, calls: list[ToolCall], turns: int | None = None
              ) -> tuple[AskRun, list[RecordedRequest]]:
    replies = dialogue(api, calls)
    if turns is not None:
        replies = replies[:turns]
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, [])
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    return run, list(reqs)


def search(name: str) -> ToolCall:
    return ToolCall("tool_search", {"query": name}, "call_s")


def schema(req: RecordedRequest, api: Api, name: str) -> dict[str, object]:
    tools = advertised_tools(req.json, api) or []
    found = [t for t in tools if t.get("name") == name]
    assert len(found) == 1, [t.get("name") for t in tools]
    return found[0]


def status(result: object) -> dict[str, object]:
    assert isinstance(result, dict), result
    elapsed = result.pop("elapsed_ms")
    assert isinstance(elapsed, int) and elapsed >= 0
    return result


def call_tool(dut: SimDevice, api: Api, name: str, arguments: dict[str, object]
              ) -> tuple[AskRun, list[RecordedRequest], object]:
    """tool_search for @name, then @name with @arguments; the run, requests and result."""
    run, reqs = run_calls(dut, api, [search(name), ToolCall(name, arguments, "call_t")])
    assert name in activated_names(reqs[1], api)
    return run, reqs, last_result(reqs[2], api)


# -- a tool with declared arguments, end to end -------------------------------------------------
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_tool_gets_its_declared_arguments_in_order(sims, api: Api, lang: str) -> None:
    name = f"greet_{lang}"
    dut = start_with_files(sims, module_files(f"tools/{name}", name, lang, ARGV[lang]))
    assert imported(dut, f"tools/{name}") == f"import: tool {name} accepted (installed)"
    # The model writes the arguments in another order; argv follows the declared one.
    run, reqs, result = call_tool(dut, api, name, {"loud": True, "times": -3, "who": "bob"})
    offered = schema(reqs[1], api, name)
    assert offered["description"] == f"Greets someone, {lang} edition."
    params = offered["parameters"]
    assert isinstance(params, dict)
    assert list(params["properties"]) == ["who", "times", "loud"]
    assert params == {
        "type": "object",
        "properties": {
            "who": {"type": "string", "maxLength": 255},
            "times": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
            "loud": {"type": "boolean"},
        },
        "required": ["who", "times", "loud"],
        "additionalProperties": False,
    }
    assert run.outcomes == ["[tool] tool_search: done", f"[tool] {name}: done"]
    assert status(result) == {"language": lang, "outcome": "completed", "truncated": False,
                              "output": f"{name}|bob|-3|true\n"}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_typed_argument_is_refused_and_nothing_runs(sims, api: Api, lang: str) -> None:
    name = f"greet_{lang}"
    dut = start_with_files(sims, module_files(f"tools/{name}", name, lang, WRITES[lang]))
    imported(dut, f"tools/{name}")
    call = ToolCall(name, {"who": "bob", "times": "three", "loud": False}, "call_t")
    run, _ = run_calls(dut, api, [search(name), call], turns=2)
    assert run.errors == [invalid_arguments(name, "field times must be an integer")]
    assert run.outcomes == ["[tool] tool_search: done"]
    assert dut.stop() == 0
    assert not exists(sims.flash, "ran.txt")


OUTPUT = 40


@pytest.mark.parametrize("api", ["responses"])
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [OUTPUT, OUTPUT + 1])
def test_the_output_is_bounded_by_the_manifest(sims, api: Api, lang: str, n: int) -> None:
    name = f"many_{lang}"
    dut = start_with_files(sims, module_files(f"tools/{name}", name, lang, PRINT_N[lang],
                                              args="n: integer", output=OUTPUT))
    imported(dut, f"tools/{name}")
    _, _, result = call_tool(dut, api, name, {"n": n})
    if n <= OUTPUT:
        assert status(result) == {"language": lang, "outcome": "completed", "truncated": False,
                                  "output": "x" * (n - 1) + "\n"}
    else:
        assert status(result) == {"language": lang, "outcome": "completed", "truncated": True,
                                  "output_bytes": n, "output": "x" * OUTPUT}


# -- replacement and removal while idle ---------------------------------------------------------
def test_replacement_and_removal_re_register_the_tool(sims) -> None:
    api: Api = "responses"
    files = module_files("v1", "greet", "lua", ARGV["lua"])
    files.update(module_files("v2", "greet", "python", PRINT_N["python"], args="n: integer"))
    dut = start_with_files(sims, files)
    assert imported(dut, "v1") == "import: tool greet accepted (installed)"
    _, reqs, result = call_tool(dut, api, "greet", {"who": "al", "times": 1, "loud": False})
    assert list(schema(reqs[1], api, "greet")["parameters"]["properties"]) == [  # type: ignore[index]
        "who", "times", "loud"]
    assert status(result)["output"] == "greet|al|1|false\n"
    assert imported(dut, "v2") == "import: tool greet accepted (replaced the installed one)"
    _, reqs, result = call_tool(dut, api, "greet", {"n": 3})
    offered = schema(reqs[1], api, "greet")
    assert offered["description"] == "Greets someone, python edition."
    assert list(offered["parameters"]["properties"]) == ["n"]  # type: ignore[index]
    assert status(result) == {"language": "python", "outcome": "completed", "truncated": False,
                              "output": "xx\n"}
    assert dut.exec_command("agent remove greet") == ["remove: greet removed"]
    assert not any(line.startswith("greet ") for line in dut.exec_command("agent tools"))
    run, _ = run_calls(dut, api, [ToolCall("greet", {"n": 3}, "call_t")], turns=1)
    assert run.errors == [unknown_tool("greet")]


# -- tampering --------------------------------------------------------------------------------
def import_record(name: str, manifest_bytes: bytes, body: bytes, digest: bytes | None = None
                  ) -> bytes:
    """An IMPORT record of a tool (docs/modules.md "Layout"); @digest: the recorded SHA-256
    (by default the text's own)."""
    text = manifest_bytes + body
    head = struct.pack("<BBBBII", 1, 2, len(name), 0, len(manifest_bytes), len(body))
    record = head + (digest or hashlib.sha256(text).digest()) + name.encode() + text
    return record + struct.pack("<I", zlib.crc32(record))


JOURNAL_HEADER = bytes.fromhex("414d4a31010c00009e2fed26")


def test_a_tampered_entry_in_the_journal_is_refused_at_boot(sims) -> None:
    """Two honest vectors on the stored journal: (1) the entry's bytes changed and the CRC
    fixed up, the recorded digest kept: the replay finds the digest wrong and cuts the
    record; (2) the manifest declares the entry's digest and the entry changed with the
    record's digest and CRC both recomputed: the restore validates the text again and
    refuses it. Neither tool is registered; the reasons are reported."""
    good = ARGV["lua"].encode()
    bad = good.replace(b"'|'", b"'#'")
    man1 = manifest("first", "lua")
    rec1 = import_record("first", man1, bad, digest=hashlib.sha256(man1 + good).digest())
    man2 = manifest("second", "lua", digest=good)
    rec2 = import_record("second", man2, bad)
    dut = start_with_files(sims, {JOURNAL: JOURNAL_HEADER + rec2 + rec1})
    boot = dut.transcript.decode(errors="replace")
    assert ("modules: journal replayed, 0 modules from 1 records; an incomplete import of "
            "first was cleared") in boot, boot
    lines = dut.exec_command("agent modules")
    assert ("journal: 1 recorded modules did not fit or validate; second: digest: does not "
            "match the entry's SHA-256") in lines, lines
    assert "journal: an incomplete import of first was cleared at boot" in lines, lines
    assert not {"first", "second"} & set(console_modules(dut))
    tools = dut.exec_command("agent tools")
    assert not any(line.startswith(("first ", "second ")) for line in tools), tools


# -- the listing ------------------------------------------------------------------------------
ROW = ["greet", "script", "read", "yes", "runs", "script-runtime"]


def test_agent_tools_lists_an_imported_tool(sims) -> None:
    dut = start_with_files(sims, module_files("t", "greet", "lua", ARGV["lua"]))
    imported(dut, "t")
    rows = [line.split() for line in dut.exec_command("agent tools")]
    assert ROW in rows, rows


@pytest.mark.sim_only("agent-host over the simulator's pty")
def test_the_management_group_lists_an_imported_tool(sims) -> None:
    dut = start_with_files(sims, module_files("t", "greet", "python", ARGV["python"]))
    imported(dut, "t")
    environ = {k: v for k, v in os.environ.items() if k != "AGENT_PORT"}
    result = subprocess.run([str(Path(sys.executable).with_name("agent-host")), "tools",
                             "--port", dut.pty_path], capture_output=True, text=True,
                            timeout=60, env=environ, check=False)
    assert (result.returncode, result.stderr) == (0, ""), result
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ROW in rows, result.stdout

