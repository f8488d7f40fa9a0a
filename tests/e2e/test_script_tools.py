"""The model calling the script tools through the test server, on both wire protocols
(docs/scripting.md, docs/tools.md): script_run_lua / script_run_python after tool_search, with
the confirmation answered y (it runs; the model gets the structured status) or n (the
structured denial; nothing ran); the source bound (640 bytes), the output bound (383 bytes)
and the argument bound of script_run_file (seven) at N and N+1; an exception, a script that
exhausts its heap, the deadline; and script_run_file as a workflow dependency: called without
tool_search it is activated, not run, and the retry is confirmed and runs."""

from __future__ import annotations

import pytest
from agent_host.testing.agent_tools import AskRun, ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import RecordedRequest, Reply, Script, TestServer
from agent_host.testserver.dialogue import ToolCall, text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from flash_image import exists, read_file
from tool_checks import (
    API_PATH,
    APIS,
    DENIED_BY_PERSON,
    DialogueCheck,
    activated_names,
    bootstrap,
    invalid_arguments,
    last_result,
    start_with_files,
)

LANGS = ["lua", "python"]
EXT = {"python": "py", "lua": "lua"}
SOURCE_MAX = 640
OUTPUT_MAX = 383
ARGS_MAX = 7
PROMPT = "compute it"

pytestmark = pytest.mark.needs_raw_console(
    "answers the confirmation question, which does not end its line")
READS_FLASH = pytest.mark.needs_host_flash("reads the flash image or starts on files written "
                                           "into it")

#: The same small programs in each language.
SRC = {
    "lua": {
        "answer": "print(6 * 7)",
        "comment": " --",
        "write": "device.write('/lfs/{name}', 'ran')",
        "print_n": "print(string.rep('x', {n}))",
        "raise": "local x = 1\nerror('boom')\n",
        "hog": "local t = {} while true do t[#t + 1] = string.rep('x', 1000) .. #t end",
        "loop": "while true do end",
        "args": "print(#arg .. ' ' .. table.concat(arg, ' '))\ndevice.write('/lfs/{name}', 'ran')\n",
    },
    "python": {
        "answer": "print(6 * 7)",
        "comment": " #",
        "write": "import device; device.write('/lfs/{name}', 'ran')",
        "print_n": "print('x' * {n})",
        "raise": "x = 1\nraise ValueError('boom')\n",
        "hog": "a = []\nwhile True: a.append('x' * 1000)",
        "loop": "while True: pass",
        "args": "import sys, device\nprint(len(sys.argv) - 1, ' '.join(sys.argv[1:]))\n"
                "device.write('/lfs/{name}', 'ran')\n",
    },
}
RAISED = {"lua": ("runtime error", 2, "boom"), "python": ("ValueError", 2, "boom")}


def tool(lang: str) -> str:
    return f"script_run_{lang}"


def search(lang: str) -> ToolCall:
    return ToolCall("tool_search", {"query": f"run {lang} code"}, "call_s")


def padded(lang: str, n: int) -> str:
    """The answer program padded with a comment to exactly @n bytes."""
    base = SRC[lang]["answer"] + SRC[lang]["comment"]
    return base + "x" * (n - len(base))


def dialogue(api: Api, calls: list[ToolCall]) -> list[Reply]:
    replies = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
               for i, c in enumerate(calls)]
    return [*replies, text_reply(api, "Done.", response_id="resp_end")]


def run_calls(dut: SimDevice, api: Api, calls: list[ToolCall], answers: list[bytes],
              turns: int | None = None) -> tuple[AskRun, list[RecordedRequest]]:
    """One `agent ask` whose model makes @calls, then answers; the recorded requests."""
    replies = dialogue(api, calls)
    if turns is not None:
        replies = replies[:turns]
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, answers)
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    return run, list(reqs)


def run_source(dut: SimDevice, api: Api, lang: str, source: str, answer: bytes = b"y"
               ) -> tuple[AskRun, object]:
    """tool_search, then the language's tool on @source confirmed with @answer; its result."""
    call = ToolCall(tool(lang), {"source": source}, "call_r")
    run, reqs = run_calls(dut, api, [search(lang), call], [answer])
    assert tool(lang) in activated_names(reqs[1], api)
    return run, last_result(reqs[2], api)


def status(result: object) -> dict[str, object]:
    """@result without its elapsed_ms (checked to be a count of milliseconds)."""
    assert isinstance(result, dict), result
    elapsed = result.pop("elapsed_ms")
    assert isinstance(elapsed, int) and elapsed >= 0
    return result


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_y_runs_the_script_and_the_model_gets_its_status(sims, api: Api, lang: str) -> None:
    dut = sims.start()
    source = SRC[lang]["answer"]
    call = ToolCall(tool(lang), {"source": source}, "call_r")
    run, reqs = run_calls(dut, api, [search(lang), call], [b"y"])
    check = DialogueCheck(api, PROMPT)
    boot = bootstrap(dut)
    check.turn(reqs[0], boot)
    check.called(search(lang), "resp_0")
    names = activated_names(reqs[1], api)
    assert tool(lang) in names
    check.turn(reqs[1], boot + names)
    check.called(call, "resp_1")
    result = check.turn(reqs[2], boot + names)
    at = run.lines.index(f"[tool call] {tool(lang)} {call.arguments_text}")
    assert run.lines[at:at + 6] == [
        f"[tool call] {tool(lang)} {call.arguments_text}",
        f"[confirm] {tool(lang)}",
        f'  source: "{source}"',
        "Allow once? [y/N] y",
        f"[tool] {tool(lang)}: done",
        "Done."]
    assert run.outcomes == ["[tool] tool_search: done", f"[tool] {tool(lang)}: done"]
    assert run.confirmations == 1
    assert status(result) == {"language": lang, "outcome": "completed", "truncated": False,
                              "output": "42\n"}


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_n_denies_and_nothing_runs(sims, api: Api, lang: str) -> None:
    dut = sims.start()
    run, result = run_source(dut, api, lang, SRC[lang]["write"].format(name="denied.txt"), b"n")
    assert run.outcomes == ["[tool] tool_search: done", f"[tool] {tool(lang)}: denied (not allowed)"]
    assert result == DENIED_BY_PERSON
    assert dut.stop() == 0
    assert not exists(sims.flash, "denied.txt")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_source_of_640_bytes_runs(sims, api: Api, lang: str) -> None:
    source = padded(lang, SOURCE_MAX)
    assert len(source.encode()) == SOURCE_MAX
    _, result = run_source(sims.start(), api, lang, source)
    assert status(result) == {"language": lang, "outcome": "completed", "truncated": False,
                              "output": "42\n"}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_source_of_641_bytes_is_refused_by_the_argument_check(sims, api: Api, lang: str
                                                                 ) -> None:
    dut = sims.start()
    call = ToolCall(tool(lang), {"source": padded(lang, SOURCE_MAX + 1)}, "call_r")
    # The request ends at the refused call: no confirmation, no further turn.
    run, reqs = run_calls(dut, api, [search(lang), call], [], turns=2)
    assert tool(lang) in activated_names(reqs[1], api)
    assert run.errors == [invalid_arguments(
        tool(lang), f"field source is longer than {SOURCE_MAX} bytes")]
    assert run.outcomes == ["[tool] tool_search: done"] and run.confirmations == 0


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [OUTPUT_MAX, OUTPUT_MAX + 1])
def test_the_output_is_bounded_to_383_bytes(sims, api: Api, lang: str, n: int) -> None:
    # n - 1 characters and print's line break: n bytes.
    _, result = run_source(sims.start(), api, lang, SRC[lang]["print_n"].format(n=n - 1))
    got = status(result)
    if n <= OUTPUT_MAX:
        assert got == {"language": lang, "outcome": "completed", "truncated": False,
                       "output": "x" * (n - 1) + "\n"}
    else:
        assert got == {"language": lang, "outcome": "completed", "truncated": True,
                       "output_bytes": n, "output": "x" * OUTPUT_MAX}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_an_exception_carries_type_line_and_message(sims, api: Api, lang: str) -> None:
    _, result = run_source(sims.start(), api, lang, SRC[lang]["raise"])
    exc_type, line, message = RAISED[lang]
    assert status(result) == {"language": lang, "outcome": "exception", "type": exc_type,
                              "line": line, "message": message, "truncated": False,
                              "output": ""}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_script_that_exhausts_its_heap(sims, api: Api, lang: str) -> None:
    _, result = run_source(sims.start(), api, lang, SRC[lang]["hog"])
    assert status(result) == {"language": lang, "outcome": "out_of_memory",
                              "message": "the script's heap could not hold it",
                              "truncated": False, "output": ""}


@pytest.mark.sim_only("shortens the 30 s deadline with the simulator's --script-deadline-ms")
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_the_deadline_stops_the_script(sims, api: Api, lang: str) -> None:
    dut = sims.start(["--script-deadline-ms=1000"])
    _, result = run_source(dut, api, lang, SRC[lang]["loop"])
    assert isinstance(result, dict)
    assert 1000 <= int(result["elapsed_ms"]) < 1600, result
    assert status(result) == {"language": lang, "outcome": "deadline",
                              "message": "stopped at its deadline", "truncated": False,
                              "output": ""}


def file_call(lang: str, args: list[str], call_id: str = "call_f") -> ToolCall:
    return ToolCall("script_run_file", {"path": f"args.{EXT[lang]}", "args": args}, call_id)


def args_script(lang: str) -> dict[str, bytes]:
    return {f"args.{EXT[lang]}": SRC[lang]["args"].format(name="ran.txt").encode()}


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_script_run_file_is_activated_on_demand_and_the_retry_runs(sims, api: Api,
                                                                    lang: str) -> None:
    """Called without tool_search: activated, not run (no file written), the model asked to
    call again; the retry is confirmed and runs with its seven arguments."""
    dut = start_with_files(sims, args_script(lang))
    args = [f"a{i}" for i in range(ARGS_MAX)]
    first, retry = file_call(lang, args, "call_1"), file_call(lang, args, "call_2")
    run, reqs = run_calls(dut, api, [first, retry], [b"y"])
    check = DialogueCheck(api, PROMPT)
    boot = bootstrap(dut)
    assert "script_run_file" not in boot
    check.turn(reqs[0], boot)
    check.called(first, "resp_0")
    assert check.turn(reqs[1], boot + ["script_run_file"]) == {
        "error": "this tool was not active; it is offered now: call it again",
        "tool": "script_run_file"}
    check.called(retry, "resp_1")
    result = check.turn(reqs[2], boot + ["script_run_file"])
    activated = "[tool] script_run_file: activated; the model is asked to call it again"
    assert run.outcomes == [activated, "[tool] script_run_file: done"]
    assert run.confirmations == 1  # only the retry asked
    assert status(result) == {"language": lang, "outcome": "completed", "truncated": False,
                              "output": f"{ARGS_MAX} {' '.join(args)}\n"}
    assert dut.stop() == 0
    assert read_file(sims.flash, "ran.txt") == b"ran"


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_script_run_file_first_call_denied_retry_does_not_run(sims, api: Api,
                                                               lang: str) -> None:
    """Activation does not bypass the confirmation: the retry answered n runs nothing."""
    dut = start_with_files(sims, args_script(lang))
    run, reqs = run_calls(dut, api, [file_call(lang, [], "call_1"), file_call(lang, [], "call_2")],
                          [b"n"])
    assert last_result(reqs[2], api) == DENIED_BY_PERSON
    assert run.outcomes[-1] == "[tool] script_run_file: denied (not allowed)"
    assert dut.stop() == 0
    assert not exists(sims.flash, "ran.txt")


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("lang", LANGS)
def test_script_run_file_with_eight_arguments_is_refused(sims, api: Api, lang: str) -> None:
    dut = start_with_files(sims, args_script(lang))
    args = [f"a{i}" for i in range(ARGS_MAX + 1)]
    calls = [file_call(lang, args, "call_1"), file_call(lang, args, "call_2")]
    run, _ = run_calls(dut, api, calls, [], turns=2)
    assert run.errors == [invalid_arguments(
        "script_run_file", f"field args has more than {ARGS_MAX} elements")]
    assert run.confirmations == 0
    assert dut.stop() == 0
    assert not exists(sims.flash, "ran.txt")
