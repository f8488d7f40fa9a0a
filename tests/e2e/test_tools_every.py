"""Every registered tool, driven end to end through the loop on both wire protocols.

The tools come from `agent tools`, so a tool registered later is covered as soon as it is
compiled in. A tool that is registered but not available now (its capability missing) must
be neither activated by tool_search nor callable. Each needs an entry in TOOL_CASES below (valid arguments for the test's
files and the board, and what its result must show): a registered tool without one fails
test_every_registered_tool_has_a_case, so nobody forgets to add it. Arguments that name the
board's hardware come from what an earlier tool listed (a GPIO name from gpio_list), so the
test runs on the simulator's board and on the firmware's alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from agent_host.testing.agent_tools import ToolRow, ask, configure, tool_counters, tool_table
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Reply, Script, TestServer
from agent_host.testserver.dialogue import ToolCall, advertised_names, text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from flash_image import read_file
from tool_checks import (
    API_PATH,
    APIS,
    DialogueCheck,
    activated_names,
    bootstrap,
    last_result,
    start_with_files,
)

NOTES = b"line one\nline two\n"
PATCH_ME = b"hello world\n"
FILES = {"notes.txt": NOTES, "patch.txt": PATCH_ME, "scripts/mandel.py": b"print(42)\n",
         "scripts/answer.lua": b"local a, b = ...\nprint(a * b)\n"}

Result = dict[str, object]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def has(**want: object) -> Callable[[Result], None]:
    """The result holds these members with these values."""
    def check(result: Result) -> None:
        for key, value in want.items():
            assert result.get(key) == value, (key, result.get(key), value)
    return check


def keys(*names: str) -> Callable[[Result], None]:
    """The result has these members."""
    def check(result: Result) -> None:
        missing = [n for n in names if n not in result]
        assert not missing, (missing, result)
    return check


def listed(name: str) -> Callable[[Result], None]:
    def check(result: Result) -> None:
        entries = result["entries"]
        assert isinstance(entries, list)
        assert name in [e["name"] for e in entries], entries
    return check


def activates_something(result: Result) -> None:
    assert isinstance(result["activated"], list) and result["activated"], result


def matched(result: Result) -> None:
    assert result["match_count"] == 1, result
    matches = result["matches"]
    assert isinstance(matches, list)
    assert matches[0]["line"] == 2 and "line two" in matches[0]["excerpt"], matches


@dataclass(frozen=True)
class ToolCase:
    """How to drive one tool: valid arguments, and what its result must show.

    Attributes:
        args: The arguments the scripted model sends.
        check: A check of the parsed result (beyond "a JSON object without error").
        query: The tool_search query that activates it (default: the words of its name).
        files: Files (besides FILES) its dialogue expects afterwards in the image.
        args_from: Arguments made from the results of the tools driven before it (by name)
            instead of @args, which stay for a call that is refused.
        echo: Arguments the result must give back unchanged.
    """

    args: dict[str, object]
    check: Callable[[Result], None] = field(default=lambda r: None)
    query: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    args_from: Callable[[dict[str, Result]], dict[str, object]] | None = None
    echo: tuple[str, ...] = ()


def first_gpio(seen: dict[str, Result]) -> dict[str, object]:
    """The first slot gpio_list showed (BOOT on the simulator's board), by name."""
    gpios = seen.get("gpio_list", {}).get("gpios")
    assert isinstance(gpios, list) and gpios, f"gpio_list showed no slot: {gpios}"
    return {"name": gpios[0]["name"]}


TOOL_CASES: dict[str, ToolCase] = {
    "system_status": ToolCase({}),
    "firmware_reference": ToolCase({"query": "lua gfx drawing"}),
    "tool_search": ToolCase({"query": "list directory files"}, activates_something),
    "storage_list": ToolCase({"path": "."}, listed("notes.txt")),
    "storage_stat": ToolCase({"path": "notes.txt"},
                             has(exists=True, type="file", size=len(NOTES),
                                 resolved="/lfs/notes.txt")),
    "storage_read": ToolCase({"path": "/lfs/notes.txt"},
                             has(content=NOTES.decode(), truncated=False)),
    "storage_write": ToolCase({"path": "new.txt", "content": "fresh\n"},
                              has(created=True, bytes=6, sha256=sha(b"fresh\n")),
                              files={"new.txt": b"fresh\n"}),
    "storage_search": ToolCase({"path": ".", "query": "line two"}, matched),
    "storage_read_range": ToolCase({"path": "notes.txt", "offset": 5, "length": 3},
                                   has(content="one", sha256=sha(NOTES), next_offset=8,
                                       eof=False)),
    "storage_patch": ToolCase(
        {"path": "patch.txt", "sha256": sha(PATCH_ME),
         "edits": [{"offset": 6, "delete": 5, "insert": "there"}]},
        has(sha256=sha(b"hello there\n"), previous_sha256=sha(PATCH_ME)),
        files={"patch.txt": b"hello there\n"}),
    # Unavailable without an embedding pass (docs/memory.md): the images configure none, so
    # these cases check the refusal; test_memory.py drives them through the test server.
    "memory_recall": ToolCase({"query": "where is the key"}, query="recall notes memory"),
    "memory_write": ToolCase({"text": "the key is in the shed"}, query="remember a note"),
    "jobs_list": ToolCase({}),
    "hardware_describe": ToolCase({}),
    "gpio_list": ToolCase({"start": 0}, keys("gpios")),
    "gpio_read": ToolCase({"name": "BOOT"}, args_from=first_gpio, echo=("name",)),
    "buses_list": ToolCase({"type": "i2c"}),
    "display_list": ToolCase({}),
    "network_status": ToolCase({}),
    "sensors_read": ToolCase({"family": "battery"}),
    "script_run_python": ToolCase({"source": "print(6 * 7)"},
                                  has(language="python", outcome="completed", output="42\n",
                                      truncated=False)),
    "script_run_lua": ToolCase({"source": "print(6 * 7)"},
                               has(language="lua", outcome="completed", output="42\n",
                                   truncated=False)),
    # Unavailable without an installed skill (docs/modules.md "Skills"): the images install
    # none, so this case checks the refusal.
    "skill_use": ToolCase({"name": "arithmetic"}, query="use a skill"),
    "script_run_file": ToolCase({"path": "scripts/answer.lua", "args": ["6", "7"]},
                                has(language="lua", outcome="completed", output="42\n"),
                                query="run a saved script file"),
}


def drive(dut: SimDevice, srv: TestServer, api: Api, row: ToolRow, boot: list[str],
          seen: dict[str, Result]) -> Result:
    """One request that activates (unless bootstrap) and calls @row's tool, then answers;
    returns the tool's result. @seen holds the results of the tools driven before."""
    case = TOOL_CASES[row.name]
    prompt = f"use {row.name}"
    args = case.args if case.args_from is None else case.args_from(seen)
    call = ToolCall(row.name, args, f"call_{row.name}")
    replies: list[Reply] = []
    search = None
    if row.available != "bootstrap":
        query = case.query or row.name.replace("_", " ")
        search = ToolCall("tool_search", {"query": query}, "call_search")
        replies.append(tool_call_reply(api, search.name, search.arguments, search.call_id,
                                       response_id="resp_search"))
    replies.append(tool_call_reply(api, call.name, call.arguments, call.call_id,
                                   response_id="resp_call"))
    replies.append(text_reply(api, f"{row.name} answered.", response_id="resp_end"))
    srv.set_script(Script(replies))
    first = len(srv.requests)
    run = ask(dut, prompt, [b"y"] if row.policy == "asks" else [])
    assert run.errors == [], run.text
    assert run.outcomes[-1] == f"[tool] {row.name}: done", run.text
    reqs = srv.wait_for_requests(first + len(replies))[first:]
    srv.check()
    assert run.confirmations == (1 if row.policy == "asks" else 0)
    check = DialogueCheck(api, prompt)
    tools = list(boot)
    check.turn(reqs[0], tools)
    if search is not None:
        check.called(search, "resp_search")
        names = activated_names(reqs[1], api)
        assert row.name in names, f"tool_search {search.arguments} did not activate it: {names}"
        tools = boot + names
        check.turn(reqs[1], tools)
    check.called(call, "resp_call")
    if row.name == "tool_search":
        tools = boot + activated_names(reqs[-1], api)  # its own call changed the selection
    result = check.turn(reqs[-1], tools)
    assert isinstance(result, dict), result
    assert "error" not in result and "denied" not in result, result
    case.check(result)
    for key in case.echo:
        assert result.get(key) == args[key], (key, result.get(key), args[key])
    return result


def refused(dut: SimDevice, srv: TestServer, api: Api, row: ToolRow, boot: list[str]) -> None:
    """A tool that is not available now: tool_search does not activate it, no turn offers
    it, and a call to it anyway is answered with an error result naming the reason that
    `agent tools` gave (docs/tools.md, "Availability")."""
    case = TOOL_CASES[row.name]
    search = ToolCall("tool_search", {"query": case.query or row.name.replace("_", " ")},
                      "call_search")
    srv.set_script(Script([
        tool_call_reply(api, search.name, search.arguments, search.call_id,
                        response_id="resp_search"),
        tool_call_reply(api, row.name, case.args, f"call_{row.name}", response_id="resp_call"),
        text_reply(api, f"{row.name} is not there.", response_id="resp_end"),
    ]))
    first = len(srv.requests)
    run = ask(dut, f"use {row.name}")
    why = f"{row.name} is not available: {row.reason}"
    assert run.errors == [], run.text
    assert run.outcomes[-1] == f"[tool] {row.name}: failed: {why}", run.text
    reqs = srv.wait_for_requests(first + 3)[first:]
    srv.check()
    assert row.name not in activated_names(reqs[1], api)
    assert all(row.name not in (advertised_names(r.json, api) or []) for r in reqs)
    assert last_result(reqs[2], api) == {"error": why}


def test_every_registered_tool_has_a_case(dut: SimDevice) -> None:
    _, rows = tool_table(dut)
    missing = [r.name for r in rows if r.name not in TOOL_CASES]
    assert not missing, f"registered tools without an entry in TOOL_CASES: {missing}"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_host_flash("starts on files written into the flash image and reads it back")
def test_every_registered_tool_runs_end_to_end(sims, api: Api) -> None:
    dut = start_with_files(sims, FILES)
    policy, rows = tool_table(dut)
    assert policy == "confirm"
    boot = bootstrap(dut)
    problems: list[str] = []
    driven = unavailable = 0
    seen: dict[str, Result] = {}
    with TestServer() as srv:
        configure(dut, srv.url(API_PATH[api]))
        for row in rows:
            # The policy table of docs/configuration.md, as `agent tools` reports it.
            assert row.policy == ("runs" if row.risk == "read" else "asks"), row
            if row.name not in TOOL_CASES:
                problems.append(f"{row.name}: no entry in TOOL_CASES")
                continue
            try:
                if row.available == "no":
                    refused(dut, srv, api, row, boot)
                    unavailable += 1
                else:
                    seen[row.name] = drive(dut, srv, api, row, boot, seen)
                    driven += 1
            except AssertionError as err:
                problems.append(f"{row.name}: {err}")
    assert not problems, "\n".join(problems)
    counters = tool_counters(dut)
    searches = sum(1 for r in rows if r.available != "bootstrap")
    assert driven + unavailable == len(rows)
    assert (counters.executed, counters.denied, counters.failed) == (driven + searches, 0,
                                                                     unavailable)
    assert dut.stop() == 0
    expected = dict(FILES)
    for row in rows:
        expected.update(TOOL_CASES[row.name].files)
    for path, data in expected.items():
        assert read_file(sims.flash, path) == data, path
