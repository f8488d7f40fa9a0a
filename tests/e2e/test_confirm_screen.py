"""The tool confirmation cannot be spoofed (docs/tools.md, "Policy and confirmation"): a
hostile model sends storage_write arguments with newlines between the fields, a bidi override
in the path, escape sequences and 3000 bytes of content. On a terminal of 80x24 and 40x12,
rendered by pyte, `agent ask` and the chat show the tool's name, the whole path and the
question together, the controls as visible escapes, and the content cut with its byte
count; the terminal's title and screen are untouched."""

from __future__ import annotations

import json
import re

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Reply, Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from chat_term import API_PATH, APIS, SIZE_IDS, SIZES, ChatTerm, configure, wrapped

pytestmark = pytest.mark.sim_only(
    "sets the pty's window size and renders every byte of the console with pyte")

END = b"[Esc or Ctrl-X returns to the shell]"
QUESTION = "Allow once? [y/N]"
HEAD = "[confirm] storage_write"
# A right-to-left override: without escaping, the end of the path would show reversed.
PATH = "/lfs/projects/garden/irrigation/\u202ehs.gifnoc.txt"
CONTENT = "\x1b[2J\x1b]0;pwned\x07\x1b[31m" + "x" * 3000
# Every field apart, with newlines and spaces between the tokens; the bidi override raw.
ARGS = ("{\n\n\n\n\n\n\n\n   \"path\"  \n\n :\n\n " + json.dumps(PATH, ensure_ascii=False)
        + "\n\n\n\n ,\n\n\n\n\n\n \"content\"\n:\n" + json.dumps(CONTENT) + "\n\n\n\n\n\n}")
# How the confirmation shows each value: JSON, every control and the override escaped.
PATH_SHOWN = json.dumps(PATH)
CONTENT_SHOWN = json.dumps(CONTENT)
# The start of the `[tool call]` line: the raw arguments on one line.
CALL_LINE = "[tool call] storage_write {" + "\\u000a" * 8 + "   \"path\"  \\u000a"
MARKER = re.compile(r"(.*) \u2026 \(\+(\d+) bytes\)")


def dialogue(api: Api) -> list[Reply]:
    return [
        tool_call_reply(api, "tool_search", {"query": "write a text file"}, "call_s",
                        response_id="resp_s"),
        tool_call_reply(api, "storage_write", ARGS, "call_w", response_id="resp_w"),
        text_reply(api, "Not written.", response_id="resp_d"),
    ]


def members(block: list[str]) -> dict[str, str]:
    """The confirmation's argument lines joined per member: `  KEY: VALUE` and the
    continuation lines (four spaces) under it."""
    joined: dict[str, str] = {}
    key = ""
    for row in block:
        if row.startswith("    "):
            assert key, block
            joined[key] += row[4:]
            continue
        assert row.startswith("  ") and ": " in row, row
        key, _, value = row[2:].partition(": ")
        joined[key] = value
    return joined


def check_confirmation(rows: list[str], term: ChatTerm) -> None:
    """@rows (what the screen shows, right-stripped) end with the question, and above it the
    whole confirmation: the name, the path whole, the content cut with the byte count."""
    while rows and rows[-1] == "":
        rows.pop()
    assert rows and rows[-1] == QUESTION, term.dump()
    assert HEAD in rows, f"the tool's name is not on the screen:\n{term.dump()}"
    block = rows[rows.index(HEAD) + 1:-1]
    shown = members(block)
    assert list(shown) == ["path", "content"], term.dump()
    assert shown["path"] == PATH_SHOWN, term.dump()
    assert "\\u202e" in shown["path"]
    cut = MARKER.fullmatch(shown["content"])
    assert cut, f"no cut marker:\n{term.dump()}"
    assert cut[1].startswith('"\\u001b[2J\\u001b]0;pwned\\u0007\\u001b[31mxxx'), term.dump()
    assert CONTENT_SHOWN.startswith(cut[1])
    assert int(cut[2]) == len(CONTENT_SHOWN) - len(cut[1]), term.dump()
    for row in rows[rows.index(HEAD):]:
        assert len(row) < term.cols, row  # the last column stays free: no line wraps
    # Nothing acted on the terminal: no title, no colour.
    assert "pwned" not in term.screen.title
    for y in range(term.rows):
        assert all(term.cell(y, x).fg == "default" for x in range(term.cols)), term.dump()


def answer_no(term: ChatTerm) -> None:
    term.type(b"n")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_ask_shows_the_whole_confirmation(sims, api: Api, cols: int, rows: int) -> None:
    with TestServer(Script(dialogue(api))) as srv:
        dut: SimDevice = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        assert dut.exec_command("agent config tools confirm")[0].startswith("tools set")
        term = ChatTerm(dut, cols, rows)
        mark = len(dut.transcript)
        dut.write(b"agent ask save a note\r")
        dut.read_until(b"Allow once? [y/N] ", 30.0, start=mark)
        term.settle(0.2)
        check_confirmation([row.rstrip() for row in term.display], term)
        answer_no(term)
        end = dut.read_until(END, 30.0, start=mark)
        dut.write(b"\x1b")
        dut.read_until(PROMPT, 10.0, start=mark + len(end))
        srv.wait_for_requests(3)
        srv.check()
    out = bytes(dut.transcript[mark:])
    assert b"[tool] storage_write: denied (not allowed)" in out
    # The call's own line stays one line: the model's line breaks show as \u000a.
    assert CALL_LINE.encode() in out, out[:400]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_chat_shows_the_whole_confirmation(sims, api: Api, cols: int, rows: int) -> None:
    with TestServer(Script(dialogue(api))) as srv:
        dut: SimDevice = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        assert dut.exec_command("agent config tools confirm")[0].startswith("tools set")
        term = ChatTerm(dut, cols, rows)
        term.open()
        term.type(b"save a note\r")
        term.wait(lambda: term.status.rstrip().endswith("confirm?"), "the confirmation")
        term.settle(0.2)
        check_confirmation(term.transcript, term)
        answer_no(term)
        term.wait(term.idle, "the end of the request")
        srv.wait_for_requests(3)
        srv.check()
    term.settle(0.1)
    shown = term.shown_lines()
    want = wrapped(["[tool] storage_write: denied (not allowed)"], cols)
    assert any(shown[i:i + len(want)] == want for i in range(len(shown))), term.dump()
    assert any(row.startswith(CALL_LINE[:cols - 1]) for row in shown), term.dump()
