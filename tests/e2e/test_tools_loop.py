"""The tool loop end to end over the simulator's console, for both wire protocols: scripted
dialogues (tool_search, a tool, the answer) with every request body checked turn by turn, the
selection a later search replaces, the 8-schema bound, the budget's final turn without tools,
the path-like token that puts storage_stat first, and a long dialogue: results with quotes and
non-ASCII text reach the model exactly, and Chat's history keeps the latest exchanges within
its 16 KiB bound."""

from __future__ import annotations

import json

import pytest
from agent_host.testing.agent_tools import ask, configure, tool_counters
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import ToolCall, text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from tool_checks import (
    API_PATH,
    APIS,
    MAX_DISCOVERED,
    MAX_SCHEMAS,
    DialogueCheck,
    activated,
    activated_names,
    bootstrap,
    not_offered,
    start_with_files,
)

MANDEL = b"print('mandelbrot')\n"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_host_flash("starts on files written into the flash image")
def test_search_then_a_tool_then_the_answer(sims, api: Api) -> None:
    prompt = "Is mandel.py on the device?"
    search = ToolCall("tool_search", {"query": "check whether a file exists"}, "call_s1")
    stat = ToolCall("storage_stat", {"path": "mandel.py"}, "call_t2")
    script = Script([
        tool_call_reply(api, search.name, search.arguments, search.call_id,
                        response_id="resp_1", usage=(100, 7)),
        tool_call_reply(api, stat.name, stat.arguments, stat.call_id, response_id="resp_2",
                        usage=(120, 9)),
        text_reply(api, "Yes: mandel.py is there.", response_id="resp_3", usage=(140, 11)),
    ])
    dut = start_with_files(sims, {"mandel.py": MANDEL})
    boot = bootstrap(dut)
    assert "tool_search" in boot
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, prompt)
        reqs = srv.wait_for_requests(3)
        srv.check()  # every body is valid for the SDK's request types; all turns served
    assert run.lines == [
        f"[tool call] tool_search {search.arguments_text}",
        "[tool] tool_search: done",
        f"[tool call] storage_stat {stat.arguments_text}",
        "[tool] storage_stat: done",
        "Yes: mandel.py is there.",
        "tokens: input 360, output 27, total 387",
    ], run.text
    check = DialogueCheck(api, prompt)
    assert check.turn(reqs[0], boot) is None
    check.called(search, "resp_1")
    selection = activated_names(reqs[1], api)
    assert selection[0] == "storage_stat"  # the path-like token in the prompt
    assert activated(check.turn(reqs[1], boot + selection)) == selection
    check.called(stat, "resp_2")
    result = check.turn(reqs[2], boot + selection)  # the selection stays for later turns
    assert result == {"path": "mandel.py", "resolved": "/lfs/mandel.py", "exists": True,
                      "type": "file", "size": len(MANDEL)}
    counters = tool_counters(dut)
    assert (counters.executed, counters.denied, counters.failed) == (2, 0, 0)
    assert (counters.last_used, counters.last_budget) == (2, 16)


@pytest.mark.parametrize("api", APIS)
def test_a_later_search_replaces_the_selection(sims, api: Api) -> None:
    prompt = "look around the file system"
    first = ToolCall("tool_search", {"query": "list directory entries"}, "call_a")
    second = ToolCall("tool_search", {"query": "xyzzy plugh"}, "call_b")
    dut = sims.start()
    boot = bootstrap(dut)
    script = Script([
        tool_call_reply(api, first.name, first.arguments, first.call_id, response_id="resp_a"),
        tool_call_reply(api, second.name, second.arguments, second.call_id,
                        response_id="resp_b"),
        tool_call_reply(api, "storage_list", {"path": "."}, "call_c", response_id="resp_c"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, prompt)
        reqs = srv.wait_for_requests(3)
        srv.check()
    check = DialogueCheck(api, prompt)
    check.turn(reqs[0], boot)
    check.called(first, "resp_a")
    names = activated_names(reqs[1], api)
    assert names[0] == "storage_list" and len(names) <= MAX_DISCOVERED
    assert activated(check.turn(reqs[1], boot + names)) == names
    check.called(second, "resp_b")
    result = check.turn(reqs[2], boot)  # the empty selection replaced the first one
    assert result == {"activated": [],
                      "note": "No installed tool matches; try other words for the task."}
    # storage_list was offered before, but not any more: the call is refused, nothing runs.
    assert run.errors == [not_offered("storage_list")]
    assert run.outcomes == ["[tool] tool_search: done", "[tool] tool_search: done"]
    assert len(srv.requests) == 3
    counters = tool_counters(dut)
    assert (counters.executed, counters.denied, counters.failed) == (2, 0, 0)


@pytest.mark.parametrize("api", APIS)
def test_no_turn_offers_more_than_eight_schemas(sims, api: Api) -> None:
    prompt = "tidy up my files"
    wide = ToolCall("tool_search", {"query": "storage file list stat read write search range "
                                             "patch jobs gpio buses network sensors display"},
                    "call_w")
    dut = sims.start()
    boot = bootstrap(dut)
    script = Script([
        tool_call_reply(api, wide.name, wide.arguments, wide.call_id, response_id="resp_w"),
        text_reply(api, "Nothing to tidy.", response_id="resp_x"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, prompt)
        reqs = srv.wait_for_requests(2)
        srv.check()
    assert run.errors == []
    check = DialogueCheck(api, prompt)
    check.turn(reqs[0], boot)
    check.called(wide, "resp_w")
    names = activated_names(reqs[1], api)
    # Seven storage tools alone match: the selection is full, and the turn holds 3 + 5 at most.
    assert len(names) == MAX_DISCOVERED
    check.turn(reqs[1], boot + names)
    assert len(boot + names) <= MAX_SCHEMAS


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("budget", [1, 2])
@pytest.mark.needs_host_flash("starts on files written into the flash image")
def test_the_final_turn_has_no_tools_when_the_budget_is_used(sims, api: Api, budget: int
                                                             ) -> None:
    prompt = "Is mandel.py there?"
    search = ToolCall("tool_search", {"query": "file exists"}, "call_1")
    stat = ToolCall("storage_stat", {"path": "/lfs/mandel.py"}, "call_2")
    calls = [search, stat][:budget]
    turns = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
             for i, c in enumerate(calls)]
    turns.append(text_reply(api, "It is there.", response_id="resp_final"))
    dut = start_with_files(sims, {"mandel.py": MANDEL})
    boot = bootstrap(dut)
    with TestServer(Script(turns)) as srv:
        configure(dut, srv.url(API_PATH[api]), max_tools=budget)
        run = ask(dut, prompt)
        reqs = srv.wait_for_requests(budget + 1)
        srv.check()
    assert run.errors == [] and run.answer == "It is there."
    assert run.outcomes == [f"[tool] {c.name}: done" for c in calls]
    check = DialogueCheck(api, prompt)
    check.turn(reqs[0], boot)
    check.called(search, "resp_0")
    if budget == 2:
        names = activated_names(reqs[1], api)
        assert names[0] == "storage_stat"
        check.turn(reqs[1], boot + names)
        check.called(stat, "resp_1")
    # The reserved final turn: no "tools" member at all, the last result still answered.
    check.turn(reqs[budget], None)
    counters = tool_counters(dut)
    assert (counters.last_used, counters.last_budget) == (budget, budget)
    assert counters.executed == budget


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("prompt", "query", "stat_first"),
    [
        ("Please run mandel.py for me", "run a python script", True),
        ("what does /config.lua set", "read text", True),
        ("what is in there", "does scripts/ exist", True),
        ("is 3.14 about pi, e.g. a circle", "list directory files", False),
        ("what is in the folder", "list directory files", False),
        # No path at all: storage_stat still wins on its words, although storage_list (before
        # it in the registry) matches too.
        ("do I have that file", "check whether a file exists", True),
    ],
    ids=["prompt-name-ext", "prompt-absolute", "query-dir", "not-paths", "no-path",
         "words-no-path"],
)
def test_a_path_like_token_selects_storage_stat_first(sims, api: Api, prompt: str, query: str,
                                                      stat_first: bool) -> None:
    search = ToolCall("tool_search", {"query": query}, "call_p")
    dut = sims.start()
    boot = bootstrap(dut)
    script = Script([
        tool_call_reply(api, search.name, search.arguments, search.call_id,
                        response_id="resp_p"),
        text_reply(api, "ok", response_id="resp_q"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, prompt)
        reqs = srv.wait_for_requests(2)
        srv.check()
    assert run.errors == []
    check = DialogueCheck(api, prompt)
    check.turn(reqs[0], boot)
    check.called(search, "resp_p")
    names = activated_names(reqs[1], api)
    check.turn(reqs[1], boot + names)
    if stat_first:
        assert names[0] == "storage_stat", names
    else:
        assert names and names[0] == "storage_list", names


def text_file(limit: int) -> bytes:
    """Lines with quotes, a backslash and non-ASCII letters, just under @limit bytes."""
    out = b""
    for i in range(1000):
        line = f'line "{i}" grüße ✓ back\\slash\n'.encode()
        if len(out) + len(line) > limit:
            return out
        out += line
    return out


CHAT_HISTORY_BYTES = 16384


def compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_host_flash("starts on files written into the flash image")
def test_long_dialogue_results_and_the_chat_history_bound(sims, api: Api) -> None:
    """Six 2.5 KB reads: every result reaches the model exactly (escaping round trip); Chat
    keeps the latest exchanges within its 16 KiB history, dropping the oldest first."""
    big = text_file(2500)
    prompt = "read big.txt six times"
    search = ToolCall("tool_search", {"query": "read a text file"}, "call_s")
    reads = [ToolCall("storage_read", {"path": "big.txt"}, f"call_r{i}") for i in range(6)]
    calls = [search, *reads]
    replies = [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
               for i, c in enumerate(calls)]
    replies.append(text_reply(api, "Read it.", response_id="resp_end"))
    dut = start_with_files(sims, {"big.txt": big})
    boot = bootstrap(dut)
    with TestServer(Script(replies)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, prompt, [b"y"] * len(reads))
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    assert run.errors == [] and run.answer == "Read it."
    want = {"path": "/lfs/big.txt", "size": len(big), "content": big.decode(),
            "bytes": len(big), "truncated": False}
    check = DialogueCheck(api, prompt)
    check.turn(reqs[0], boot)
    check.called(search, "resp_0")
    names = activated_names(reqs[1], api)
    tools = boot + names
    if api == "responses":
        check.turn(reqs[1], tools)
        for i, read in enumerate(reads):
            check.called(read, f"resp_{i + 1}")
            assert check.turn(reqs[i + 2], tools) == want
        return
    # Chat: each continuation repeats a suffix of the exchanges so far, within the bound.
    full: list[object] = []
    kept_counts = []
    for n, call in enumerate(calls):
        body = reqs[n + 1].json
        messages = body["messages"]
        assert messages[1] == {"role": "user", "content": prompt}
        history = messages[2:]
        assert len(history) % 2 == 0 and history, messages
        newest = history[-2:]
        assert newest[0]["tool_calls"][0]["id"] == call.call_id
        full.extend(newest)
        assert history == full[len(full) - len(history):]  # the oldest go first
        # The device writes JSON exactly as json.dumps does compactly (checked on the body).
        assert compact(body) == reqs[n + 1].body
        size = sum(len(compact(m)) for m in history)
        assert size <= CHAT_HISTORY_BYTES, size
        if len(history) < len(full):  # only what did not fit was dropped
            older = full[len(full) - len(history) - 2:len(full) - len(history)]
            assert size + sum(len(compact(m)) for m in older) > CHAT_HISTORY_BYTES
        kept_counts.append(len(history) // 2)
        if n > 0:
            assert json.loads(newest[1]["content"]) == want
        assert [t["function"]["name"] for t in body["tools"]] == tools
    assert kept_counts[:3] == [1, 2, 3]
    assert kept_counts[-1] < len(calls)  # some were dropped
