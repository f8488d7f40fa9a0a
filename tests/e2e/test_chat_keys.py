"""The chat's keys over the pty, on both protocols: Esc returns to a shell that has the whole
screen again, and bare `agent` then starts a new conversation (no earlier messages, no
previous_response_id); Esc while a request runs cancels it, stores nothing and returns to the
shell too, as do Ctrl-X and Ctrl-C; keys whose ESC comes in a read of its own; a tool
confirmation inside the chat, answered y or n, or Esc."""

from __future__ import annotations

import json
import time

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import RecordedRequest, Script, TestServer
from agent_host.testserver.dialogue import function_call_output, text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from chat_term import (
    API_PATH,
    APIS,
    CANCELLED,
    CTRL_X,
    ESC,
    HINT,
    NEW_BANNER,
    PAGE_DOWN,
    PAGE_UP,
    RESUMED_BANNER,
    USER,
    ChatTerm,
    configure,
    stall_before_end,
    status_text,
    wrap,
    wrapped,
)

pytestmark = pytest.mark.sim_only(
    "sets the pty's window size and renders every byte of the console with pyte")

#: AGENT_KEY_ESC_TIMEOUT_MS: the rest of a key comes within it; an Esc waits longer.
ESC_TIMEOUT_S = 0.1
#: A gap well inside the Esc timeout, as a UART hands over the bytes of one key.
SPLIT_S = 0.02

LIST_HEAD = ["conversations in /lfs/.agent/conversations (3 slots)",
             "slot turns bytes  role         model                title"]


def listed(dut: SimDevice) -> list[tuple[int, int, str]]:
    """`agent list` as (slot, turns, title) rows, its two heading lines checked."""
    out = dut.exec_command("agent list")
    assert out[:2] == LIST_HEAD, out
    rows = []
    for line in out[2:]:
        parts = line.split(maxsplit=5)
        assert len(parts) == 6 and parts[3] == "conductor" and parts[4] == "test-model", line
        rows.append((int(parts[0]), int(parts[1]), parts[5]))
    return rows


def system_message(body: object) -> dict[str, object]:
    assert isinstance(body, dict)
    first = body["messages"][0]
    assert first["role"] == "system" and first["content"].startswith("You are the assistant")
    return dict(first)


def check_first_turn(req: RecordedRequest, api: Api, prompt: str) -> None:
    """The request of a conversation's first message: that message and nothing earlier."""
    body = req.json
    assert isinstance(body, dict)
    if api == "responses":
        assert "previous_response_id" not in body, body
        assert body["input"] == [{"role": "user", "content": prompt}]
    else:
        assert body["messages"] == [system_message(body), {"role": "user", "content": prompt}]


def check_shell_has_the_screen(term: ChatTerm) -> None:
    """After leaving: no scroll region, nothing of the chat left, and shell output scrolling
    the whole screen down to its last row."""
    assert term.screen.margins is None
    assert term.display[0].startswith("uart:~$"), term.dump()
    assert all(row.strip() == "" for row in term.display[1:]), term.dump()
    out = term.dev.exec_command("agent help")
    assert sum(len(wrap(line, term.cols)) for line in out) + 2 > term.rows, out
    term.settle(0.1)
    assert term.display[-1].rstrip() == "uart:~$", term.dump()
    assert out[-1].endswith(term.display[-2].rstrip()), term.dump()
    for y in range(term.rows):
        assert not any(term.cell(y, x).reverse for x in range(term.cols)), term.dump()


def check_back_at_the_shell(term: ChatTerm) -> None:
    """The chat's screen is gone: no scroll region, the prompt at the top of a cleared screen."""
    assert term.screen.margins is None and term.display[0].startswith("uart:~$"), term.dump()
    assert all(row.strip() == "" for row in term.display[1:]), term.dump()


@pytest.mark.parametrize("again", ["agent", "agent new"])
@pytest.mark.parametrize("api", APIS)
def test_esc_returns_to_the_shell_and_agent_starts_a_new_conversation(sims, api: Api,
                                                                       again: str) -> None:
    script = Script([text_reply(api, "First answer.", response_id="resp_1"),
                     text_reply(api, "Second answer.", response_id="resp_2")])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, 40, 12)
        term.open()
        term.send("first question")
        term.leave()
        check_shell_has_the_screen(term)
        term.open(again)
        assert term.shown_lines()[-2:] == wrapped([NEW_BANNER], 40), term.dump()
        assert not any("first" in row for row in term.transcript)
        term.send("second question")
        reqs = srv.wait_for_requests(2)
        srv.check()
    check_first_turn(reqs[0], api, "first question")
    check_first_turn(reqs[1], api, "second question")
    term.leave()
    assert listed(dut) == [(1, 1, "first question"), (2, 1, "second question")]


@pytest.mark.parametrize("api", APIS)
def test_esc_while_a_request_runs_cancels_it_and_leaves(sims, api: Api) -> None:
    """Esc during a request cancels it and returns to the shell at once (spec: Esc returns to
    the shell); the cancelled turn is not stored, and the conversation resumed goes on from
    its last completed turn."""
    script = Script([
        text_reply(api, "One.", response_id="resp_1", usage=(10, 2)),
        stall_before_end(text_reply(api, "Partial answer", response_id="resp_x"), api),
        text_reply(api, "Three.", response_id="resp_3"),
    ])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.send("one")
        term.type(b"two\r")
        term.wait(lambda: "agent: Partial answer" in term.transcript, "the partial answer")
        # No typing while the request runs (a letter could answer a confirmation that
        # appears meanwhile): the keys and Enter are dropped.
        term.type(b"three\r")
        mark = len(dut.transcript)
        began = time.monotonic()
        term.type(ESC)
        dut.read_until(PROMPT, 5, start=mark)
        assert time.monotonic() - began < 1.5
        assert CANCELLED.encode() in dut.transcript[mark:]
        term.settle(0.1)
        check_back_at_the_shell(term)
        assert len(srv.requests) == 2
        # Only the completed turn is stored, and the conversation goes on from it.
        assert listed(dut) == [(1, 1, "one")]
        term.open("agent resume 1", RESUMED_BANNER)
        assert term.shown_lines() == [f"{USER}: one", "agent: One.", RESUMED_BANNER], term.dump()
        term.send("three")
        reqs = srv.wait_for_requests(3)
        srv.check()
    body = reqs[2].json
    assert isinstance(body, dict)
    if api == "responses":
        # The cancelled turn is not continued: the last completed one is.
        assert body["previous_response_id"] == "resp_1"
        assert body["input"] == [{"role": "user", "content": "three"}]
    else:
        assert body["messages"] == [system_message(body), {"role": "user", "content": "one"},
                                    {"role": "assistant", "content": "One."},
                                    {"role": "user", "content": "three"}]
    term.leave()
    assert listed(dut) == [(1, 2, "one")]  # the cancelled turn was not stored


def split_key(term: ChatTerm, key: bytes) -> None:
    """@key's ESC in one write and the rest 20 ms later, as a UART may hand them over."""
    term.type(ESC)
    time.sleep(SPLIT_S)
    term.type(key[1:])


def test_keys_split_over_reads(sims) -> None:
    """ESC and the rest of a key in separate reads, within the Esc timeout: the key acts and
    the chat stays (an ESC alone used to close it). Esc alone then leaves without waiting
    for another key."""
    usage = (7, 8, 15)
    answer = "\n".join(f"line {i}" for i in range(1, 41))
    with TestServer(Script([text_reply("chat", answer, usage=usage[:2], pieces=5)])) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["chat"]))
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.send("lines")
        srv.check()
    bar = {hint: b"\x1b[7m" + status_text(80, usage, hint)[:79].encode() + b"\x1b[0m"
           for hint in (HINT, "")}
    mark = len(dut.transcript)
    split_key(term, PAGE_UP)
    dut.read_until(bar[HINT], 5, start=mark)
    mark = len(dut.transcript)
    split_key(term, PAGE_DOWN)
    dut.read_until(bar[""], 5, start=mark)
    term.type(b"abc")
    split_key(term, b"\x1b[A")  # a cursor key: nothing
    split_key(term, b"\x1b[1;5D")
    term.type(b"d")
    term.wait(lambda: term.input_line.rstrip() == f"{USER}> abcd", "the typing")
    mark = len(dut.transcript)
    term.settle(ESC_TIMEOUT_S * 5)
    assert PROMPT not in dut.transcript[mark:]
    began = time.monotonic()
    term.type(ESC)
    dut.read_until(PROMPT, 5, start=mark)
    assert time.monotonic() - began < 1.5
    term.settle(0.1)
    check_back_at_the_shell(term)


@pytest.mark.parametrize("key", [CTRL_X, b"\x03"], ids=["ctrl-x", "ctrl-c"])
@pytest.mark.parametrize("api", APIS)
def test_app_exit_key_leaves(sims, api: Api, key: bytes) -> None:
    script = Script([stall_before_end(text_reply(api, "Never complete", response_id="r"), api)])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, 80, 24)
        term.open()
        mark = len(dut.transcript)
        term.type(key)  # idle
        dut.read_until(PROMPT, start=mark)
        term.settle(0.1)
        assert term.screen.margins is None and term.display[0].startswith("uart:~$")
        term.open()
        term.type(b"hang\r")
        term.wait(lambda: "agent: Never complete" in term.transcript, "the partial answer")
        mark = len(dut.transcript)
        term.type(key)  # running: cancels, then leaves
        dut.read_until(PROMPT, start=mark)
        term.settle(0.1)
        assert term.screen.margins is None and term.display[0].startswith("uart:~$")
        srv.check()
    assert listed(dut) == []


WRITE_ARGS = {"path": "notes.txt", "content": "hi"}


@pytest.mark.parametrize("answer", [b"y", b"n"])
@pytest.mark.parametrize("api", APIS)
def test_confirmation_inside_the_chat(sims, api: Api, answer: bytes) -> None:
    final = "Done." if answer == b"y" else "Not saved."
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "write a text file"}, "call_s",
                        response_id="resp_s"),
        tool_call_reply(api, "storage_write", WRITE_ARGS, "call_w", response_id="resp_w"),
        text_reply(api, final, response_id="resp_d"),
    ])
    args = json.dumps(WRITE_ARGS, separators=(",", ":"))
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        assert dut.exec_command("agent config tools confirm")[0].startswith("tools set")
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.type(b"save a note\r")
        term.wait(lambda: term.status.rstrip().endswith("confirm?"), "the confirmation")
        term.settle(0.1)
        end = term.find_row("Allow once? [y/N]")
        assert term.transcript[end - 4:end + 1] == [
            f"[tool call] storage_write {args}", "[confirm] storage_write",
            '  path: "notes.txt"', '  content: "hi"', "Allow once? [y/N]"], term.dump()
        term.type(answer)
        term.wait(term.idle, "the end of the request")
        reqs = srv.wait_for_requests(3)
        srv.check()
    term.settle(0.1)
    rows = term.shown_lines()
    at = rows.index(f"Allow once? [y/N] {answer.decode()}")
    if answer == b"y":
        assert rows[at + 1:] == ["[tool] storage_write: done", f"agent: {final}"], term.dump()
    else:
        assert rows[at + 1].startswith("[tool] storage_write: denied ("), term.dump()
        assert rows[at + 2:] == [f"agent: {final}"], term.dump()
    # What the model got back for the call.
    body = reqs[2].json
    if api == "responses":
        call_id, result = function_call_output(body)
    else:
        assert isinstance(body, dict)
        tool_message = body["messages"][-1]
        call_id, result = tool_message["tool_call_id"], json.loads(tool_message["content"])
    assert call_id == "call_w"
    assert isinstance(result, dict)
    if answer == b"y":
        assert result["created"] is True and result["bytes"] == 2, result
    else:
        assert result == {"denied": True,
                          "reason": "the person at the device did not allow this call"}
    term.leave()
    out = dut.exec_command("agent status")
    executed, denied = (2, 0) if answer == b"y" else (1, 1)
    assert f"tool calls: {executed} executed, {denied} denied, 0 failed" in out


@pytest.mark.parametrize("api", APIS)
def test_esc_at_the_confirmation_cancels_the_request(sims, api: Api) -> None:
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "write a text file"}, "call_s",
                        response_id="resp_s"),
        tool_call_reply(api, "storage_write", WRITE_ARGS, "call_w", response_id="resp_w"),
    ])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.type(b"save a note\r")
        term.wait(lambda: term.status.rstrip().endswith("confirm?"), "the confirmation")
        mark = len(dut.transcript)
        term.type(ESC)
        dut.read_until(PROMPT, 5, start=mark)  # cancelled, and back at the shell
        after = bytes(dut.transcript[mark:])
        assert CANCELLED.encode() in after and b"storage_write: done" not in after, after
        term.settle(0.1)
        check_back_at_the_shell(term)
        assert len(srv.wait_for_requests(2)) == 2
        srv.check()
    assert listed(dut) == []
    out = dut.exec_command("agent status")
    assert next(x for x in out if x.startswith("tool calls:")).startswith(
        "tool calls: 1 executed, 0 denied")  # tool_search ran; the write did not
