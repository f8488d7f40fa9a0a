"""Every bad model action ends the request with its own line, and nothing runs: an unknown
tool, a registered tool that was not offered, invalid arguments, several calls at once, a call
in the reserved final turn or under the `off` policy. Checked on both wire protocols, with
the server (no further turn), `agent status` (no counter moves) and the flash image (the
storage_write the model asked for created no file)."""

from __future__ import annotations

import pytest
from agent_host.testing.agent_tools import AskRun, ask, configure, tool_counters, tool_table
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Reply, Script, TestServer
from agent_host.testserver.dialogue import (
    ToolCall,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from agent_host.testserver.plans import Api
from flash_image import exists, read_file
from tool_checks import (
    API_PATH,
    APIS,
    DialogueCheck,
    activated_names,
    bootstrap,
    invalid_arguments,
    last_result,
    no_tools_offered,
    not_offered,
    several_calls,
    unknown_tool,
)

EVIL = "evil.txt"
WRITE = {"path": EVIL, "content": "should never be written\n"}
SEARCH_WRITE = ToolCall("tool_search", {"query": "write a text file"}, "call_s")


def run_dialogue(sims, api: Api, replies: list[Reply], prompt: str = "do it",
                 policy: str | None = None, max_tools: int | None = None
                 ) -> tuple[SimDevice, AskRun, list[object]]:
    """One `agent ask` against @replies; every reply must be asked for and no more."""
    dut = sims.start()
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]), policy=policy, max_tools=max_tools)
        run = ask(dut, prompt)  # raises if the device asks for a confirmation
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
        assert len(srv.requests) == len(replies), "the request went on after the error"
    return dut, run, list(reqs)


def nothing_written(sims, dut: SimDevice) -> None:
    assert dut.stop() == 0, dut.stderr_text()
    assert not exists(sims.flash, EVIL)


def counters_are(dut: SimDevice, executed: int, used: int, budget: int = 16) -> None:
    c = tool_counters(dut)
    assert (c.executed, c.denied, c.failed) == (executed, 0, 0)
    assert (c.last_used, c.last_budget) == (used, budget)


@pytest.mark.parametrize("api", APIS)
def test_an_unknown_tool(sims, api: Api) -> None:
    args = '{"really":true}'
    dut, run, _ = run_dialogue(sims, api, [tool_call_reply(api, "format_flash", args)])
    assert run.lines[:2] == [f"[tool call] format_flash {args}", unknown_tool("format_flash")]
    assert run.errors == [unknown_tool("format_flash")] and run.outcomes == []
    assert not run.back_at_shell
    counters_are(dut, 0, 0)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_host_flash("reads the flash image: the refused write created no file")
def test_a_registered_tool_that_was_not_offered(sims, api: Api) -> None:
    dut, run, reqs = run_dialogue(sims, api, [tool_call_reply(api, "storage_write", WRITE)])
    DialogueCheck(api, "do it").turn(reqs[0], bootstrap(dut))  # storage_write was not offered
    assert run.errors == [not_offered("storage_write")]
    assert run.outcomes == [] and run.confirmations == 0
    counters_are(dut, 0, 0)
    nothing_written(sims, dut)


BAD_WRITES = [
    ({"path": EVIL}, "field content is required"),
    ('{"path":"evil.txt","content":', "the arguments are not valid JSON"),
    ('["evil.txt","x"]', "the arguments must be a JSON object"),
    ({**WRITE, "mode": "append"}, "unknown field mode"),
    ({"path": 7, "content": "x"}, "field path must be a string"),
    ({"path": "", "content": "x"}, "field path must be at least 1 bytes long"),
    ('{"path":"evil.txt","path":"b.txt","content":"x"}', "field path is given twice"),
    ({"path": EVIL, "content": "x" * 3073}, "field content is longer than 3072 bytes"),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("arguments", "reason"), BAD_WRITES,
                         ids=["missing", "not-json", "array", "unknown-field", "wrong-type",
                              "too-short", "twice", "too-long"])
@pytest.mark.needs_host_flash("reads the flash image: the refused write created no file")
def test_invalid_arguments(sims, api: Api, arguments: dict[str, object] | str, reason: str
                           ) -> None:
    replies = [
        tool_call_reply(api, SEARCH_WRITE.name, SEARCH_WRITE.arguments, SEARCH_WRITE.call_id,
                        response_id="resp_s"),
        tool_call_reply(api, "storage_write", arguments, "call_w", response_id="resp_w"),
    ]
    dut, run, reqs = run_dialogue(sims, api, replies)
    assert "storage_write" in activated_names(reqs[1], api)  # it was offered
    assert run.errors == [invalid_arguments("storage_write", reason)]
    assert run.outcomes == ["[tool] tool_search: done"] and run.confirmations == 0
    counters_are(dut, 1, 1)
    nothing_written(sims, dut)


@pytest.mark.parametrize("api", APIS)
def test_invalid_arguments_of_a_bootstrap_tool(sims, api: Api) -> None:
    dut, run, _ = run_dialogue(sims, api, [tool_call_reply(api, "tool_search", {"q": "files"})])
    assert run.errors == [invalid_arguments("tool_search", "unknown field q")]
    assert run.outcomes == []
    counters_are(dut, 0, 0)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.needs_host_flash("reads the flash image: the refused write created no file")
def test_several_calls_at_once(sims, api: Api, count: int) -> None:
    calls = [ToolCall("storage_write", WRITE, "call_w"),
             ToolCall("storage_stat", {"path": EVIL}, "call_x"),
             ToolCall("tool_search", {"query": "gpio"}, "call_y")][:count]
    replies = [
        tool_call_reply(api, SEARCH_WRITE.name, SEARCH_WRITE.arguments, SEARCH_WRITE.call_id,
                        response_id="resp_s"),
        tool_calls_reply(api, calls, response_id="resp_m"),
    ]
    dut, run, reqs = run_dialogue(sims, api, replies)
    assert "storage_write" in activated_names(reqs[1], api)
    assert run.errors == [several_calls(count)], run.text
    # The provider keeps two calls of a turn (PROVIDER_CALL_SLOTS): those are shown; more
    # are only counted, for the error line.
    shown = calls[:2]
    assert run.calls[1:] == [f"[tool call] {c.name} {c.arguments_text}" for c in shown]
    assert run.outcomes == ["[tool] tool_search: done"] and run.confirmations == 0
    counters_are(dut, 1, 1)
    nothing_written(sims, dut)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_host_flash("reads the flash image: the refused write created no file")
def test_a_call_in_the_reserved_final_turn(sims, api: Api) -> None:
    replies = [
        tool_call_reply(api, SEARCH_WRITE.name, SEARCH_WRITE.arguments, SEARCH_WRITE.call_id,
                        response_id="resp_s"),
        tool_call_reply(api, "storage_write", WRITE, "call_w", response_id="resp_w"),
    ]
    dut, run, reqs = run_dialogue(sims, api, replies, max_tools=1)
    check = DialogueCheck(api, "do it")
    check.turn(reqs[0], bootstrap(dut))
    check.called(SEARCH_WRITE, "resp_s")
    check.turn(reqs[1], None)  # the final turn offered nothing
    assert run.errors == [no_tools_offered("storage_write")]
    assert run.outcomes == ["[tool] tool_search: done"] and run.confirmations == 0
    counters_are(dut, 1, 1, budget=1)
    nothing_written(sims, dut)


@pytest.mark.parametrize("api", APIS)
def test_a_call_under_the_off_policy(sims, api: Api) -> None:
    replies = [tool_call_reply(api, "tool_search", {"query": "files"})]
    dut, run, reqs = run_dialogue(sims, api, replies, policy="off")
    DialogueCheck(api, "do it").turn(reqs[0], None)  # off offers nothing at all
    assert run.errors == [no_tools_offered("tool_search")]
    assert run.outcomes == []
    counters_are(dut, 0, 0)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.sim_only("starts the simulator with --sd at the folder of its own flash image")
def test_the_flash_image_through_the_sd_folder(sims, api: Api) -> None:
    """`--sd` at the folder that holds the flash image: the image (the settings with the key,
    the conversations) is refused by every storage tool, whatever its spelling, and left
    out of storage_list (issue 12, item 5). Before, storage_read_range read the key out of
    /SD:/flash.bin and storage_write replaced the image."""
    key = "sk-e2e-in-the-image-0123456789"
    refusal = {"error": "the settings store is refused (it holds the API key)"}
    dut = sims.start([f"--sd={sims.flash.parent}"])
    with TestServer() as srv:
        configure(dut, srv.url(API_PATH[api]), policy="confirm", key=key)
        _, rows = tool_table(dut)
        policy = {r.name: r.policy for r in rows}
        at = sims.flash.read_bytes().find(key.encode())
        assert at > 0
        calls = [("storage_read_range",
                  {"path": "/SD:/flash.bin", "offset": at, "length": len(key)}),
                 ("storage_write", {"path": "/SD:/./Flash.BIN", "content": "gone\n"}),
                 ("storage_list", {"path": "/SD:"})]
        replies: list[Reply] = []
        for i, (name, args) in enumerate(calls):
            replies.append(tool_call_reply(api, "tool_search", {"query": name.replace("_", " ")},
                                           f"call_s{i}", response_id=f"resp_s{i}"))
            replies.append(tool_call_reply(api, name, args, f"call_{i}", response_id=f"resp_{i}"))
        replies.append(text_reply(api, "The card holds nothing of mine.", response_id="resp_end"))
        srv.set_script(Script(replies))
        run = ask(dut, "look at the card", [b"y" for name, _ in calls if policy[name] == "asks"])
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    assert run.errors == [], run.text
    results = [last_result(reqs[2 * i + 2], api) for i in range(len(calls))]
    assert results[:2] == [refusal, refusal]
    listing = results[2]
    assert isinstance(listing, dict) and "error" not in listing, listing
    assert "flash.bin" not in [e["name"] for e in listing["entries"]], listing
    assert all(key.encode() not in r.body for r in reqs)
    assert dut.stop() == 0, dut.stderr_text()
    assert key.encode() in read_file(sims.flash, ".settings")  # the image is whole


# ---- Issue 12, item 6: loose matching -------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("name", ["system_status\x00ANYTHING", "\x00system_status",
                                  "system_status\x00"], ids=["nul-tail", "nul-lead", "nul-end"])
def test_a_tool_name_with_a_nul_is_unknown(sims, api: Api, name: str) -> None:
    """Names match in full: a NUL in the name (JSON \\u0000) is part of it, never its end.
    The name is shown with the NUL made visible."""
    dut, run, _ = run_dialogue(sims, api, [tool_call_reply(api, name, {})])
    shown = name.replace("\x00", "\\u0000")
    assert run.calls == [f"[tool call] {shown} {{}}"]
    assert run.errors == [unknown_tool(shown)] and run.outcomes == []
    counters_are(dut, 0, 0)


@pytest.mark.parametrize("api", APIS)
def test_a_thousand_calls_at_once(sims, api: Api) -> None:
    """The turn's calls beyond those told apart are not cut off in the count: the line says
    "more than" (it used to say 18 for any number past that)."""
    calls = [ToolCall("storage_write", WRITE, f"call_{i}") for i in range(1000)]
    dut, run, _ = run_dialogue(sims, api, [tool_calls_reply(api, calls, pieces=1)])
    assert run.errors == [
        ("agent: the model asked for more than 18 tool calls at once; only one at a time is"
         " supported")], run.errors
    assert run.outcomes == []
    counters_are(dut, 0, 0)


def after_the_end(api: Api) -> Reply:
    """A complete text turn, then a system_status call the server sends after its end: after
    `data: [DONE]` (Chat) or after response.completed (Responses)."""
    done = text_reply(api, "Done.")
    late = tool_call_reply(api, "system_status", {}, "call_late")
    if api == "chat":
        # The call's chunks without its own [DONE].
        tail = [s for s in late.segments if b"[DONE]" not in s]
    else:
        # The call's item events, without its response.created/in_progress/completed.
        tail = [s for s in late.segments if b"response.output_item" in s
                or b"function_call_arguments" in s]
    assert tail
    return Reply.sse(list(done.segments) + tail, api=api)


@pytest.mark.parametrize("api", APIS)
def test_a_call_after_the_end_of_the_turn_does_not_run(sims, api: Api) -> None:
    dut, run, reqs = run_dialogue(sims, api, [after_the_end(api)])
    assert run.answer == "Done." and run.errors == [] and run.calls == [], run.text
    assert len(reqs) == 1
    counters_are(dut, 0, 0)


@pytest.mark.parametrize("api", APIS)
def test_a_call_id_at_its_bound(sims, api: Api) -> None:
    """95 bytes (the device's bound) go back to the server as they came; one byte more, also
    when that byte ends a character, ends the turn with the limit named (it used to be cut,
    mid-character, into an id the server never issued)."""
    ok = "c" * 95
    replies = [tool_call_reply(api, "tool_search", {"query": "files"}, ok, response_id="resp_1"),
               text_reply(api, "Done.")]
    dut, run, reqs = run_dialogue(sims, api, replies)
    assert run.answer == "Done." and run.errors == [], run.text
    body = reqs[1].json
    assert isinstance(body, dict)
    if api == "chat":
        assert body["messages"][-1]["tool_call_id"] == ok
    else:
        assert body["input"][0]["call_id"] == ok
    assert dut.stop() == 0, dut.stderr_text()
    for long in ("c" * 96, "c" * 94 + "é"):
        dut, run, _ = run_dialogue(sims, api, [tool_call_reply(api, "tool_search",
                                                               {"query": "files"}, long)])
        assert run.errors == [
            "agent: the call id from the server exceeds the limit of 95 bytes (it has 96)"]
        assert run.calls == [] and run.outcomes == []
        counters_are(dut, 0, 0)
        assert dut.stop() == 0, dut.stderr_text()


def test_a_response_id_at_its_bound(sims) -> None:
    """The Responses id the next turn continues from: 95 bytes whole, 96 refused."""
    ok = "r" * 95
    replies = [tool_call_reply("responses", "tool_search", {"query": "files"}, "call_1",
                               response_id=ok), text_reply("responses", "Done.")]
    dut, run, reqs = run_dialogue(sims, "responses", replies)
    assert run.answer == "Done." and run.errors == [], run.text
    body = reqs[1].json
    assert isinstance(body, dict) and body["previous_response_id"] == ok
    assert dut.stop() == 0, dut.stderr_text()
    dut, run, _ = run_dialogue(sims, "responses", [text_reply("responses", "Hi.",
                                                              response_id="r" * 96)])
    assert run.errors == [
        "agent: the response id from the server exceeds the limit of 95 bytes (it has 96)"]
