"""The tool policy over the pty, for both wire protocols: under `confirm` a storage_write asks
and only `y` lets it run; `n`, Enter and the deadline deny (the model gets the structured
denial and the file is never written); Esc, Ctrl-X and Ctrl-C cancel the request and return to
the shell; `read-only` never offers a mutating tool and still asks for a sensitive one; the
counters of `agent status` follow every outcome."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from agent_host.testing.agent_tools import ESC, AskRun, ask, configure, tool_counters, tool_table
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Reply, Script, TestServer
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
    not_offered,
    start_with_files,
)

CONTENT = 'hello "model" \\ grüße ✓\n'
WRITE = ToolCall("storage_write", {"path": "notes.txt", "content": CONTENT}, "call_w")
SEARCH = ToolCall("tool_search", {"query": "write a text file"}, "call_s")
PROMPT = "save a note"
TIMEOUT_MS = 400
QUICK_MS = 3000  # long enough for any answer typed at once, short enough to fail fast

pytestmark = pytest.mark.needs_raw_console(
    "answers the confirmation question, which does not end its line")
READS_FLASH = pytest.mark.needs_host_flash("reads the flash image (written or not) or starts on "
                                           "files written into it")
#: The simulator's option; the firmware's deadline is CONFIG_AGENT_CONFIRM_TIMEOUT_S (30 s).
SHORT_DEADLINE = pytest.mark.sim_only("shortens the confirmation deadline with the simulator's "
                                      "--confirm-timeout-ms")


def write_dialogue(api: Api) -> list[Reply]:
    return [
        tool_call_reply(api, SEARCH.name, SEARCH.arguments, SEARCH.call_id, response_id="resp_s"),
        tool_call_reply(api, WRITE.name, WRITE.arguments, WRITE.call_id, response_id="resp_w"),
        text_reply(api, "Done.", response_id="resp_d"),
    ]


def run_write(dut: SimDevice, api: Api, answer: bytes | None) -> tuple[AskRun, object]:
    """The dialogue search -> storage_write -> answer; returns what ran and the write's result
    as the model received it."""
    with TestServer(Script(write_dialogue(api))) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, [answer])
        reqs = srv.wait_for_requests(3)
        srv.check()
    check = DialogueCheck(api, PROMPT)
    boot = bootstrap(dut)
    check.turn(reqs[0], boot)
    check.called(SEARCH, "resp_s")
    names = activated_names(reqs[1], api)
    assert names[0] == "storage_write"
    check.turn(reqs[1], boot + names)
    check.called(WRITE, "resp_w")
    return run, check.turn(reqs[2], boot + names)


def confirm_lines(shown: str) -> list[str]:
    """The call, the confirmation (one line per argument, canonical JSON values) and the
    question answered with @shown."""
    return [f"[tool call] storage_write {WRITE.arguments_text}",
            "[confirm] storage_write",
            '  path: "notes.txt"',
            f"  content: {json.dumps(CONTENT, ensure_ascii=False)}",
            f"Allow once? [y/N] {shown}"]


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("keys", [b"y", b"Y", b"x?y"], ids=["y", "Y", "others-ignored-then-y"])
def test_y_allows_the_call(sims, api: Api, keys: bytes) -> None:
    dut = sims.start()
    run, result = run_write(dut, api, keys)
    assert run.lines[2:] == confirm_lines("y") + [
        "[tool] storage_write: done", "Done.", "tokens: input 30, output 15, total 45"]
    assert result == {"path": "/lfs/notes.txt", "bytes": len(CONTENT.encode()), "created": True,
                      "sha256": hashlib.sha256(CONTENT.encode()).hexdigest()}
    c = tool_counters(dut)
    assert (c.executed, c.denied, c.failed, c.last_used) == (2, 0, 0, 2)
    assert dut.stop() == 0
    assert read_file(sims.flash, "notes.txt") == CONTENT.encode()


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("key", [b"n", b"N", b"\r"], ids=["n", "N", "enter"])
def test_n_or_enter_denies_the_call(sims, api: Api, key: bytes) -> None:
    dut = sims.start()
    run, result = run_write(dut, api, key)
    assert run.lines[2:] == confirm_lines("n") + [
        "[tool] storage_write: denied (not allowed)", "Done.",
        "tokens: input 30, output 15, total 45"]
    assert result == DENIED_BY_PERSON
    c = tool_counters(dut)
    assert (c.executed, c.denied, c.failed, c.last_used) == (1, 1, 0, 2)
    assert dut.stop() == 0
    assert not exists(sims.flash, "notes.txt")


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@SHORT_DEADLINE
def test_no_answer_before_the_deadline_denies_the_call(sims, api: Api) -> None:
    dut = sims.start([f"--confirm-timeout-ms={TIMEOUT_MS}"])
    t0 = time.monotonic()
    run, result = run_write(dut, api, None)
    assert time.monotonic() - t0 < 10  # the shortened deadline, not the default 30 s
    assert run.lines[2:] == confirm_lines("") + [
        "(no answer: denied)", "[tool] storage_write: denied (not allowed)", "Done.",
        "tokens: input 30, output 15, total 45"]
    assert result == DENIED_BY_PERSON
    c = tool_counters(dut)
    assert (c.executed, c.denied, c.failed) == (1, 1, 0)
    assert dut.stop() == 0
    assert not exists(sims.flash, "notes.txt")


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("key", [ESC, b"\x18", b"\x03"], ids=["esc", "ctrl-x", "ctrl-c"])
def test_esc_at_the_question_cancels_the_request(sims, api: Api, key: bytes) -> None:
    dut = sims.start()
    replies = write_dialogue(api)[:2]  # the answer turn is never asked for
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, [key])
        assert run.back_at_shell  # straight back to the shell, no "[Esc or Ctrl-X ...]"
        srv.check()
        assert len(srv.requests) == 2
        assert not any(x.startswith("[tool] storage_write") for x in run.lines), run.text
        assert "Done." not in run.lines
        c = tool_counters(dut)
        assert (c.executed, c.denied, c.failed) == (1, 0, 0)
        # The device is not stuck: the next request runs normally.
        srv.set_script(Script([text_reply(api, "Still here.")]))
        again = ask(dut, "are you there")
        assert again.answer == "Still here." and again.errors == []
    assert dut.stop() == 0
    assert not exists(sims.flash, "notes.txt")


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
@SHORT_DEADLINE
def test_an_answer_typed_as_soon_as_the_question_shows_counts(sims, api: Api) -> None:
    """Twelve questions in one request, each answered the moment `Allow once? [y/N] ` is
    on the console: every answer must be taken (none may wait for the deadline)."""
    note = b"twelve times\n"
    dut = start_with_files(sims, {"notes.txt": note}, [f"--confirm-timeout-ms={QUICK_MS}"])
    search = ToolCall("tool_search", {"query": "read a text file"}, "call_s")
    reads = [ToolCall("storage_read", {"path": "notes.txt"}, f"call_{i}") for i in range(12)]
    replies = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
               for i, c in enumerate([search, *reads])]
    replies.append(text_reply(api, "Read.", response_id="resp_end"))
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, [b"y"] * len(reads))
        srv.wait_for_requests(len(replies))
        srv.check()
    lost = [x for x in run.lines if x.startswith("(no answer")]
    assert not lost, f"{len(lost)} of {len(reads)} answers were not taken:\n{run.text}"
    assert run.outcomes == ["[tool] tool_search: done"] + ["[tool] storage_read: done"] * 12


@pytest.mark.parametrize("api", APIS)
def test_the_question_shows_every_argument(sims, api: Api) -> None:
    """`[tool call]` cuts the arguments at 200 bytes; the question shows all of them (600
    bytes fit an 80x24 console whole, the value going on in continuation lines)."""
    long_write = ToolCall("storage_write", {"path": "long.txt", "content": "x" * 600}, "call_l")
    replies = [
        tool_call_reply(api, SEARCH.name, SEARCH.arguments, SEARCH.call_id, response_id="resp_s"),
        tool_call_reply(api, long_write.name, long_write.arguments, long_write.call_id,
                        response_id="resp_l"),
        text_reply(api, "Not written.", response_id="resp_n"),
    ]
    dut = sims.start()
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, PROMPT, [b"n"])
        srv.wait_for_requests(3)
        srv.check()
    text = long_write.arguments_text
    assert f"[tool call] storage_write {text[:200]}..." in run.lines
    at = run.lines.index("[confirm] storage_write")
    block = run.lines[at + 1:run.lines.index("Allow once? [y/N] n")]
    assert block[0] == '  path: "long.txt"'
    assert all(x.startswith("    ") for x in block[2:]), block
    content = block[1] + "".join(x.removeprefix("    ") for x in block[2:])
    assert content == f'  content: "{"x" * 600}"', (
        f"the question shows {content.count('x')} of the 600 bytes of content")
    assert run.outcomes[-1] == "[tool] storage_write: denied (not allowed)"


@READS_FLASH
@pytest.mark.parametrize("api", APIS)
def test_read_only_never_offers_a_mutating_tool(sims, api: Api) -> None:
    note = b"keep me\n"
    dut = start_with_files(sims, {"notes.txt": note})
    assert dut.exec_command("agent config tools read-only") == ["tools set to read-only"]
    _, rows = tool_table(dut)
    risk = {r.name: r.risk for r in rows}
    for r in rows:
        want = {"read": "runs", "sensitive": "asks"}.get(r.risk, "denied")
        assert r.policy == want, r
    search = ToolCall("tool_search", {"query": "write or read notes.txt"}, "call_s")
    read = ToolCall("storage_read", {"path": "notes.txt"}, "call_r")
    read_again = ToolCall("storage_read", {"path": "notes.txt"}, "call_r2")
    stat = ToolCall("storage_stat", {"path": "notes.txt"}, "call_t")
    calls = [search, read, read_again, stat]
    replies = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
               for i, c in enumerate(calls)]
    replies.append(tool_call_reply(api, WRITE.name, WRITE.arguments, WRITE.call_id,
                                   response_id="resp_w"))
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        # storage_read (sensitive) asks: denied once, then allowed; storage_stat just runs.
        run = ask(dut, PROMPT, [b"n", b"y"])
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    boot = bootstrap(dut)
    check = DialogueCheck(api, PROMPT)
    check.turn(reqs[0], boot)
    results = []
    for i, call in enumerate(calls):
        check.called(call, f"resp_{i}")
        if i == 0:
            names = activated_names(reqs[1], api)
            assert {"storage_read", "storage_stat"} <= set(names), names
            assert all(risk[n] in ("read", "sensitive") for n in names), names
        results.append(check.turn(reqs[i + 1], boot + names))
    assert results[1] == DENIED_BY_PERSON
    assert results[2] == {"path": "/lfs/notes.txt", "size": len(note),
                          "content": note.decode(), "bytes": len(note), "truncated": False}
    assert results[3]["exists"] is True
    assert run.outcomes == ["[tool] tool_search: done", "[tool] storage_read: denied (not allowed)",
                            "[tool] storage_read: done", "[tool] storage_stat: done"]
    assert run.confirmations == 2
    assert run.errors == [not_offered("storage_write")]  # never offered under read-only
    c = tool_counters(dut)
    assert (c.executed, c.denied, c.failed, c.last_used) == (3, 1, 0, 4)
    assert dut.stop() == 0
    assert read_file(sims.flash, "notes.txt") == note


@pytest.mark.parametrize("api", APIS)
@SHORT_DEADLINE
def test_the_counters_add_up_over_requests(sims, api: Api) -> None:
    dut = sims.start([f"--confirm-timeout-ms={TIMEOUT_MS}"])
    for answer in (b"y", b"n", None):
        run_write(dut, api, answer)
    # A tool that runs and fails: storage_read of a missing file.
    search = ToolCall("tool_search", {"query": "read a text file"}, "call_s")
    read = ToolCall("storage_read", {"path": "missing.txt"}, "call_r")
    replies = [tool_call_reply(api, search.name, search.arguments, search.call_id,
                               response_id="resp_s"),
               tool_call_reply(api, read.name, read.arguments, read.call_id,
                               response_id="resp_r"),
               text_reply(api, "No such file.", response_id="resp_t")]
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, "read missing.txt", [b"y"])
        reqs = srv.wait_for_requests(3)
        srv.check()
    check = DialogueCheck(api, "read missing.txt")
    boot = bootstrap(dut)
    check.turn(reqs[0], boot)
    check.called(search, "resp_s")
    names = activated_names(reqs[1], api)
    check.turn(reqs[1], boot + names)
    check.called(read, "resp_r")
    result = check.turn(reqs[2], boot + names)
    assert isinstance(result, dict) and set(result) == {"error"}
    failed = [x for x in run.outcomes if x.startswith("[tool] storage_read: failed: ")]
    assert failed == [f"[tool] storage_read: failed: {result['error']}"]
    c = tool_counters(dut)
    # y: search + write; n: search, write denied; deadline: search, write denied; then
    # search + a failed read.
    assert (c.executed, c.denied, c.failed) == (5, 2, 1)
    assert (c.last_used, c.last_budget) == (2, 16)
