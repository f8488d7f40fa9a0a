"""The full-screen chat as a terminal shows it (pyte at 80x24 and 40x12), over both protocols:
the transcript with bold agent labels and wrapped answers, the input line with the configured
user name, the protected status bar in reverse video with the latest turn's token counts (I/O/T
when narrow, also after `agent resume`) that never reach the transcript or its scrollback,
Page Up / Page Down, text streamed while paged back, and model output that cannot steer the
terminal."""

from __future__ import annotations

import random

import pytest
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from chat_term import (
    API_PATH,
    APIS,
    BACKSPACE,
    HINT,
    NEW_BANNER,
    PAGE_DOWN,
    PAGE_UP,
    RESUMED_BANNER,
    SIZE_IDS,
    SIZES,
    USER,
    ChatTerm,
    configure,
    status_text,
    wrapped,
)

pytestmark = pytest.mark.sim_only(
    "sets the pty's window size and renders every byte of the console with pyte")

LONG = " ".join(f"The quick brown fox {i} jumps over the lazy dog." for i in range(1, 7))
FIRST_USAGE = ((1200, 34), (2345, 678))  # the tool turn, then the answer turn
FIRST_TOTAL = (3545, 712, 4257)  # the request's sums, shown after it
SECOND_TOTAL = (4000, 21, 4021)
COUNTS = ["1200", "34", "2345", "678", "3545", "712", "4257", "4000", "21", "4021"]


def open_chat(sims, srv: TestServer, api: Api, cols: int, rows: int) -> ChatTerm:
    dut = sims.start()
    configure(dut, srv.url(API_PATH[api]))
    term = ChatTerm(dut, cols, rows)
    term.open()
    return term


def check_no_counts(lines: list[str], counts: list[str]) -> None:
    for line in lines:
        words = line.replace(".", " ").replace(",", " ").split()
        assert not {"input", "output", "total", "tokens:", "I", "O", "T"} & set(words), line
        assert not set(counts) & set(words), line


def check_labels(term: ChatTerm) -> None:
    """Every "agent:" label on screen is bold and nothing else in the transcript is."""
    labels = 0
    for y, row in enumerate(term.transcript):
        for x in range(term.cols):
            bold = term.cell(y, x).bold
            if row.startswith("agent: ") and x < 6:
                assert bold, (y, x, row)
            else:
                assert not bold, (y, x, row)
        labels += row.startswith("agent: ")
    assert labels > 0, term.dump()
    for x in range(term.cols):
        assert not term.cell(term.rows - 2, x).bold and not term.cell(term.rows - 1, x).bold


def check_status(term: ChatTerm, usage: tuple[int, int, int], right: str = "") -> None:
    assert term.status == status_text(term.cols, usage, right), term.dump()
    for x in range(term.cols):
        # Reverse video over the bar, the last column left blank (no pending wrap).
        assert term.cell(term.rows - 1, x).reverse == (x < term.cols - 1), x
    for y in range(term.rows - 1):
        assert not any(term.cell(y, x).reverse for x in range(term.cols)), (y, term.dump())


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_dialogue_layout(sims, api: Api, cols: int, rows: int) -> None:
    script = Script([
        tool_call_reply(api, "system_status", {}, response_id="resp_1", usage=FIRST_USAGE[0]),
        text_reply(api, LONG, response_id="resp_2", usage=FIRST_USAGE[1], pieces=7),
        text_reply(api, "Second answer.", response_id="resp_3", usage=SECOND_TOTAL[:2]),
    ])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, api, cols, rows)
        check_status(term, (0, 0, 0))
        assert term.input_line == f"{USER}> ".ljust(cols)
        term.send("hello agent")
        check_status(term, FIRST_TOTAL)
        term.send("and again")
        srv.check()
    term.settle(0.1)
    expected = wrapped([
        NEW_BANNER,
        f"{USER}: hello agent",
        "[tool call] system_status {}",
        "[tool] system_status: done",
        f"agent: {LONG}",
        f"{USER}: and again",
        "agent: Second answer.",
    ], cols)
    assert term.shown_lines() == expected, term.dump()
    # The latest request's counts (one provider turn), wide or abbreviated.
    check_status(term, SECOND_TOTAL)
    assert term.input_line == f"{USER}> ".ljust(cols)
    check_labels(term)
    assert not term.cell(term.find_row(f"{USER}: and again"), 0).bold
    # Usage is in the status bar only: not in the transcript rows, not in what scrolled off.
    check_no_counts(term.history + term.transcript, COUNTS)
    # Nor in the chat's own scrollback: page back to its first line.
    views = [term.transcript]
    while not term.transcript[0].startswith(NEW_BANNER[:cols]):
        term.page(PAGE_UP, SECOND_TOTAL, HINT)
        assert term.transcript != views[-1], term.dump()
        views.append(term.transcript)
        check_labels(term)
        assert len(views) < 20
    for view in views:
        check_no_counts(view, COUNTS)
    assert (len(views) > 1) == (len(expected) + 1 > rows - 2)


@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_input_line(sims, cols: int, rows: int) -> None:
    script = Script([text_reply("responses", "ok", usage=(1, 2))])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, "responses", cols, rows)
        term.type("naïve ✓✓".encode())
        term.wait(lambda: term.input_line.rstrip() == f"{USER}> naïve ✓✓", "typed text")
        term.type(BACKSPACE)  # the three bytes of the check mark go at once
        term.wait(lambda: term.input_line.rstrip() == f"{USER}> naïve ✓", "one erased")
        term.type(BACKSPACE * 5)  # the ï's two bytes among them
        term.wait(lambda: term.input_line.rstrip() == f"{USER}> na", "five more erased")
        term.type("ïf!".encode())
        term.wait(lambda: term.input_line.rstrip() == f"{USER}> naïf!", "typed again")
        term.send("")
        body = srv.wait_for_requests(1)[0].json
        assert isinstance(body, dict)
        assert body["input"] == [{"role": "user", "content": "naïf!"}]
        assert term.input_line == f"{USER}> ".ljust(cols)
        # Longer than the line: its tail is shown, the last column stays free.
        typed = "".join(chr(ord("a") + i % 26) for i in range(cols + 10)) + "é"
        term.type(typed.encode())
        room = cols - 1 - len(f"{USER}> ")
        term.wait(lambda: term.input_line == f"{USER}> {typed[-room:]} ", "the tail")
    assert term.find_row(f"{USER}: naïf!") >= 0


def numbered(count: int) -> str:
    return "\n".join(f"line {i:02d}" for i in range(1, count + 1))


@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_page_up_and_down(sims, cols: int, rows: int) -> None:
    usage = (100, 200, 300)
    script = Script([text_reply("chat", numbered(60), usage=usage[:2], pieces=9)])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, "chat", cols, rows)
        term.send("show lines")
    height = rows - 2
    step = height - 1
    text = [NEW_BANNER, f"{USER}: show lines"] + ("agent: " + numbered(60)).split("\n")
    lines = wrapped(text, cols) + [""]  # the empty line where the transcript goes on
    total = len(lines)

    def view(offset: int) -> list[str]:
        return lines[total - height - offset: total - offset]

    term.settle(0.1)
    assert term.transcript == view(0), term.dump()
    offsets = []
    offset = 0
    while offset < total - height:
        offset = min(offset + step, total - height)
        term.page(PAGE_UP, usage, HINT)
        assert term.transcript == view(offset), (offset, term.dump())
        check_status(term, usage, HINT)
        check_no_counts(term.transcript, ["100", "200", "300"])
        offsets.append(offset)
    assert len(offsets) >= 2 and term.transcript[0] == NEW_BANNER[:cols]
    term.page(PAGE_UP, usage, HINT)  # at the top already
    assert term.transcript == view(offsets[-1])
    offset = offsets[-1]
    while offset > 0:
        offset = max(offset - step, 0)
        term.page(PAGE_DOWN, usage, HINT if offset else "")
        assert term.transcript == view(offset), (offset, term.dump())
    check_status(term, usage)
    term.page(PAGE_DOWN, usage)  # at the end already
    assert term.transcript == view(0)
    # The live end goes on where paging left it.
    assert term.input_line == f"{USER}> ".ljust(cols)
    term.type(b"x")
    term.wait(lambda: term.input_line.rstrip() == f"{USER}> x", "typing after paging")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_text_streamed_while_paged_back(sims, api: Api, cols: int, rows: int) -> None:
    """The view stays where it was paged to while a request goes on; Page Down shows what
    came meanwhile. The request is held at its confirmation while the view is paged back."""
    write_args = {"path": "notes.txt", "content": "hi"}
    answer = "Saved. " + numbered(5).replace("line", "after")
    script = Script([
        text_reply(api, numbered(30), response_id="resp_1", usage=(1, 1)),
        tool_call_reply(api, "tool_search", {"query": "write a text file"}, "call_s",
                        response_id="resp_s", usage=(11, 1)),
        tool_call_reply(api, "storage_write", write_args, "call_w", response_id="resp_w",
                        usage=(22, 2)),
        text_reply(api, answer, response_id="resp_d", usage=(33, 3)),
    ])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, api, cols, rows)
        term.send("show lines")
        term.type(b"save a note\r")
        term.wait(lambda: term.status.rstrip().endswith("confirm?"), "the confirmation")
        term.settle(0.1)
        assert term.transcript[-1].startswith("Allow once? [y/N]"), term.dump()
        check_status(term, (33, 3, 36), "confirm?")
        term.page(PAGE_UP, (33, 3, 36), HINT)
        paged = term.transcript
        assert not any(row.startswith(("Allow", "[confirm]")) for row in paged), term.dump()
        mark = len(term.dev.transcript)
        term.type(b"y")
        bar = status_text(cols, (66, 6, 72), HINT)[: cols - 1]
        term.dev.read_until(b"\x1b[7m" + bar.encode() + b"\x1b[0m", 20.0, start=mark)
        srv.wait_for_requests(4)
        term.settle()
        assert term.transcript == paged, term.dump()  # nothing was written over the page
        check_status(term, (66, 6, 72), HINT)
        term.page(PAGE_DOWN, (66, 6, 72), "")
        term.wait(term.idle, "the end of the request")
        srv.check()
    end = term.transcript
    while end and end[-1] == "":
        end.pop()
    tail = wrapped(["Allow once? [y/N] y", "[tool] storage_write: done"]
                   + f"agent: {answer}".split("\n"), cols)
    assert end[-len(tail):] == tail, term.dump()
    check_status(term, (66, 6, 72))
    check_labels(term)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_model_output_cannot_steer_the_terminal(sims, api: Api, cols: int, rows: int) -> None:
    """C0 controls (ESC) and C1 controls (U+009B, the one-character CSI) are dropped: the
    screen is not cleared, no colour is set, the cursor is not moved."""
    answer = "A\u001b[2J B\u009b2J C\u009b31mred\u0007 D\u001b[5;5HE\u0085F\tG"
    script = Script([text_reply(api, answer, usage=(5, 6))])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, api, cols, rows)
        term.send("hi")
    term.settle(0.1)
    assert term.shown_lines() == wrapped(
        [NEW_BANNER, f"{USER}: hi", "agent: A[2J B2J C31mred D[5;5HEF G"], cols), term.dump()
    for y in range(rows):
        for x in range(cols):
            char = term.cell(y, x)
            assert char.fg == "default" and char.bg == "default", (y, x, term.dump())
    check_status(term, (5, 6, 11))
    assert term.input_line == f"{USER}> ".ljust(cols)


@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_a_line_longer_than_the_scrollback_keeps_its_wrapping(sims, cols: int, rows: int
                                                               ) -> None:
    """An answer line of 10000 bytes (two-byte characters) does not fit the 8 KiB scrollback:
    its start is dropped, yet paging redraws it wrapped exactly as it was shown live, and
    never from the middle of a character."""
    rng = random.Random(5000)  # two-byte, one-column characters, no page like another
    answer = "".join(chr(rng.randrange(0x100, 0x250)) for _ in range(5000)) + "\nEND"
    usage = (1, 2, 3)
    with TestServer(Script([text_reply("chat", answer, usage=usage[:2], pieces=16)])) as srv:
        term = open_chat(sims, srv, "chat", cols, rows)
        term.send("long")
    term.settle(0.1)
    live = term.transcript
    assert live[-2:] == ["END", ""] and len(live[0]) == cols, term.dump()
    views = []
    while True:
        term.page(PAGE_UP, usage, HINT)
        if views and term.transcript == views[-1]:
            break
        views.append(term.transcript)
        assert len(views) < 200
    top = views[-1]
    assert all("\ufffd" not in line for view in views for line in view), top
    # The live rows were cut every `cols` characters from "agent: "; the kept part of the line
    # starts at one of those cuts.
    assert all(len(line) == cols for line in top), top
    assert term.page_down_to_end(usage) == len(views)
    assert term.transcript == live, term.dump()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("cols", "rows"), SIZES, ids=SIZE_IDS)
def test_status_bar_shows_the_latest_turns_counts(sims, api: Api, cols: int, rows: int) -> None:
    """The bar shows the latest turn's input, output and total: a turn whose server reports
    no usage shows none (not the turn before's), and `agent resume` shows the counts the
    conversation's latest turn stored."""
    script = Script([
        text_reply(api, "One.", response_id="resp_1", usage=(1200, 34)),
        text_reply(api, "Two.", response_id="resp_2", usage=None),
        text_reply(api, "Three.", response_id="resp_3", usage=(4000, 21)),
    ])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, api, cols, rows)
        term.send("one")
        check_status(term, (1200, 34, 1234))
        term.send("two")
        check_status(term, (0, 0, 0))
        term.leave()
        term.open("agent resume 1", RESUMED_BANNER)
        check_status(term, (0, 0, 0))  # the latest stored turn has no counts
        term.send("three")
        check_status(term, (4000, 21, 4021))
        term.leave()
        term.open("agent resume 1", RESUMED_BANNER)
        check_status(term, (4000, 21, 4021))
        srv.check()
    # The counts are in the bar only, also after a replay.
    check_no_counts(term.history + term.transcript, ["1200", "34", "1234", "4000", "21", "4021"])


def test_input_is_bounded_to_whole_characters(sims) -> None:
    """The input holds 1023 bytes: what is typed past that is ignored, and a character that
    does not fit whole is refused whole, so the message stays valid UTF-8."""
    script = Script([text_reply("responses", "ok", response_id="r1"),
                     text_reply("responses", "ok", response_id="r2")])
    with TestServer(script) as srv:
        term = open_chat(sims, srv, "responses", 80, 24)
        term.type(b"a" * 1030)
        term.settle()
        term.send("")
        term.type(("a" * 1022 + "é").encode())
        term.settle()
        term.type(b"b")
        term.wait(lambda: term.input_line.rstrip().endswith("ab"), "the last byte typed")
        term.send("")
        reqs = srv.wait_for_requests(2)
        srv.check()
    contents = []
    for req in reqs:
        body = req.json
        assert isinstance(body, dict)
        contents.append(body["input"][0]["content"])
    assert contents == ["a" * 1023, "a" * 1022 + "b"]
