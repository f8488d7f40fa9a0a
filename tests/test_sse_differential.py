"""The C SSE decoder (app/src/agent/wire/sse.c) against the `openai` SDK's own decoder.

tests/unit/sse_dump (built with the simulator, ASan and UBSan) decodes standard input and
prints each dispatched event as a JSON line; `openai._streaming.SSEDecoder().iter_bytes()`
decodes the same bytes, fed in chunks. Compared on every recorded stream (the repository's
corpus, `fixtures_dir()`: **/*.sse) in LF, CR and CRLF, on the .jsonl recordings replayed as
wire traffic, on synthesized streams, and on random ones.

Where the SDK departs from the HTML standard, the C decoder follows the standard and the
difference is asserted below (test_documented_difference_*), so a change on either side shows.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_host.testserver import fixtures_dir
from openai._streaming import SSEDecoder

REPO_DIR = Path(__file__).resolve().parents[1]
SSE_C = REPO_DIR / "app" / "src" / "agent" / "wire" / "sse.c"
SSE_EVENT_TYPE_MAX = 63

Event = tuple[str, str]  # (event type, "" when none; data)


FIXTURES_DIR = fixtures_dir()


def _fixture_files(pattern: str) -> list[str]:
    names = sorted(str(p.relative_to(FIXTURES_DIR)) for p in FIXTURES_DIR.rglob(pattern))
    assert names, f"no {pattern} under {FIXTURES_DIR}"  # never an empty (skipped) set
    return names


def _fixture(name: str) -> bytes:
    return (FIXTURES_DIR / name).read_bytes()


@pytest.fixture(scope="session")
def sse_dump(sim_exe: Path) -> Path:
    exe = sim_exe.parent / "tests" / "unit" / "sse_dump"
    assert exe.is_file(), f"{exe} was not built (tests/unit/CMakeLists.txt)"
    return exe


def c_decode(exe: Path, stream: bytes, chunk: int = 4096) -> tuple[list[Event], list[str]]:
    """Events the C decoder dispatched, and the data of a discarded last event, if any."""
    result = subprocess.run(
        [str(exe), str(chunk)], input=stream, capture_output=True, check=False, timeout=60
    )
    errors = result.stderr.decode(errors="replace")
    assert result.returncode == 0 and not errors, f"sse_dump exit {result.returncode}: {errors}"
    events: list[Event] = []
    discards: list[str] = []
    # One JSON object a line; split on "\n" only (str.splitlines also splits at U+2028).
    for line in result.stdout.decode("utf-8").split("\n")[:-1]:
        obj = json.loads(line)
        if "discard" in obj:
            discards.append(obj["discard"])
        else:
            events.append((obj["event"], obj["data"]))
    assert len(discards) <= 1
    return events, discards


def _chunks(stream: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(stream), size):
        yield stream[i : i + size]


def sdk_decode(stream: bytes, chunk: int = 4096) -> list[Event]:
    """Events of the openai SDK's decoder, with its None event type written as ""."""
    return [(sse.event or "", sse.data) for sse in SSEDecoder().iter_bytes(_chunks(stream, chunk))]


def reencode(stream: bytes, eol: bytes) -> bytes:
    lines = stream.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    return eol.join(lines)


EOLS = {"LF": b"\n", "CR": b"\r", "CRLF": b"\r\n"}


def assert_same(exe: Path, stream: bytes, chunks: tuple[int, ...] = (1, 7, 4096)) -> list[Event]:
    want = sdk_decode(stream)
    for size in chunks:
        assert sdk_decode(stream, size) == want, f"the SDK itself differs at chunk size {size}"
        got, _ = c_decode(exe, stream, size)
        assert got == want, f"chunk size {size}: C decoder {got[:3]}... SDK {want[:3]}..."
    return want


# ---- recorded streams ----


@pytest.mark.parametrize("eol", list(EOLS))
@pytest.mark.parametrize("name", _fixture_files("*.sse"))
def test_recorded_stream(sse_dump: Path, name: str, eol: str) -> None:
    raw = _fixture(name)
    stream = reencode(raw, EOLS[eol])
    events = assert_same(sse_dump, stream)
    # Independent of both decoders: each payload of the recording is one data line.
    lines = raw.decode("utf-8").split("\n")
    payloads = [ln[5:].removeprefix(" ") for ln in lines if ln.startswith("data:")]
    _, discards = c_decode(sse_dump, stream)
    assert [data for _, data in events] + discards == payloads
    types = [ln[6:].removeprefix(" ") for ln in lines if ln.startswith("event:")]
    assert [t for t, _ in events if t] == types


@pytest.mark.parametrize("name", _fixture_files("*.jsonl"))
def test_recorded_payloads_replayed_as_wire(sse_dump: Path, name: str) -> None:
    """The .jsonl recordings sent as INDEX.md describes: Chat as data lines + [DONE],
    Responses as event: + data: pairs."""
    raw = _fixture(name).decode("utf-8")
    payloads = [line for line in raw.splitlines() if line.strip()]
    if name.startswith("responses"):
        types = [json.loads(p)["type"] for p in payloads]
        stream = "".join(f"event: {t}\ndata: {p}\n\n" for t, p in zip(types, payloads))
        want = list(zip(types, payloads))
    else:
        stream = "".join(f"data: {p}\n\n" for p in payloads) + "data: [DONE]\n\n"
        want = [("", p) for p in payloads] + [("", "[DONE]")]
    for eol in EOLS.values():
        assert assert_same(sse_dump, reencode(stream.encode(), eol)) == want


# ---- synthesized streams: both decoders agree ----

SYNTHESIZED: dict[str, tuple[bytes, list[Event]]] = {
    "cr": (b"data: a\r\rdata: b\r\r", [("", "a"), ("", "b")]),
    "crlf": (b"event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", [("x", "a"), ("", "b")]),
    "mixed line ends": (b"data: a\r\ndata: b\rdata: c\n\r\n", [("", "a\nb\nc")]),
    "lf cr is two line ends": (b"data: a\n\rdata: b\n\n", [("", "a"), ("", "b")]),
    "comments": (
        b": OPENROUTER PROCESSING\n\n:\n: x\ndata: a\n: between\n\n",
        [("", "a")],
    ),
    "data before event": (
        b"data: {\"type\":\"response.created\"}\nevent: response.created\n\n",
        [("response.created", '{"type":"response.created"}')],
    ),
    "last event line wins": (b"event: a\ndata: 1\nevent: b\n\n", [("b", "1")]),
    "multi-line data": (b"data: a\ndata:\ndata:  b\ndata:c\n\n", [("", "a\n\n b\nc")]),
    "no space and one space removed": (
        b"data:x\n\ndata: x\n\ndata:  x\n\n",
        [("", "x"), ("", "x"), ("", " x")],
    ),
    "u+2028 is not a line end": (
        "data: a\u2028b\u2029c\x85d\n\n".encode(),
        [("", "a\u2028b\u2029c\x85d")],
    ),
    "field without colon": (b"data\n\ndata\ndata\n\n", [("", ""), ("", "\n")]),
    "unknown fields": (b"foo: bar\nx\ndata: a\nData: b\n\n", [("", "a")]),
    "unterminated final event": (b"data: a\n\ndata: b\n", [("", "a")]),
    "unterminated final line": (b"data: a\n\ndata: b", [("", "a")]),
    "event type at the bound": (
        b"event: " + b"t" * SSE_EVENT_TYPE_MAX + b"\ndata: x\n\n",
        [("t" * SSE_EVENT_TYPE_MAX, "x")],
    ),
    "colon in value": (b"data: {\"a\": \"b:c\"}\n\n", [("", '{"a": "b:c"}')]),
    "nul in data": (b"data: a\x00b\n\n", [("", "a\x00b")]),
    "blank lines only": (b"\n\n\r\n\r\r\n", []),
    "empty": (b"", []),
}


@pytest.mark.parametrize("name", list(SYNTHESIZED))
def test_synthesized_stream(sse_dump: Path, name: str) -> None:
    stream, want = SYNTHESIZED[name]
    assert assert_same(sse_dump, stream) == want


def test_unterminated_final_event_is_discarded(sse_dump: Path) -> None:
    # The recorded gateway stream (chat/anthropic_gateway_tool_index1.sse) ends like this.
    events, discards = c_decode(sse_dump, b"data: {}\n\ndata: [DONE]\n")
    assert events == [("", "{}")] and discards == ["[DONE]"]
    assert sdk_decode(b"data: {}\n\ndata: [DONE]\n") == [("", "{}")]


def _random_stream(rng: random.Random) -> bytes:
    """Events that each have a data line, in random framing: comments, unknown fields,
    event lines before or after data, values with colons and spaces, any line ends."""
    values = ["", " ", "a", "x y", ":", " : ", "{\"a\":1}", "\u2028", "é", "[DONE]", "  two"]
    types = ["t", "a.b", "", "e v"]

    def eol() -> str:
        return rng.choice(["\n", "\r", "\r\n"])

    out = []
    for _ in range(rng.randint(0, 8)):
        fields = ["data"] * rng.randint(1, 3) + rng.choice([[], ["event"], ["event", "event"]])
        fields += rng.choice([[], [":c"], ["foo"], ["x: y"], [":"]])
        rng.shuffle(fields)
        lines = []
        for f in fields:
            if f not in ("data", "event"):
                lines.append(f)
            elif rng.random() < 0.05:
                lines.append(f)  # no colon: an empty value
            else:
                value = rng.choice(values if f == "data" else types)
                lines.append(f + rng.choice([":", ": ", ":  "]) + value)
        out.append("".join(line + eol() for line in lines) + eol())
        out.append(rng.choice(["", ":k" + eol(), eol()]))
    return "".join(out).encode()


def test_random_streams(sse_dump: Path) -> None:
    rng = random.Random(20240917)
    for i in range(150):
        stream = _random_stream(rng)
        chunk = rng.choice([1, 2, 3, 5, 16, 4096])
        want = sdk_decode(stream, rng.choice([1, 4, 4096]))
        got, _ = c_decode(sse_dump, stream, chunk)
        assert got == want, f"stream {i} {stream!r} (C chunk {chunk})"


# ---- where the SDK departs from the HTML standard; the C decoder follows the standard ----


@pytest.mark.parametrize(
    ("stream", "standard", "sdk"),
    [
        # An event without data lines: the standard dispatches nothing (and forgets the type);
        # the SDK dispatches it with data "" when it had an event, id or retry field.
        (b"event: ping\n\n", [], [("ping", "")]),
        (b"retry: 100\n\n", [], [("", "")]),
        (b"event: x\n\ndata: y\n\n", [("", "y")], [("x", ""), ("", "y")]),
        # The SDK never forgets an id, so each later blank line dispatches an empty event.
        (b"id: 1\ndata: a\n\n\n\n", [("", "a")], [("", "a"), ("", ""), ("", "")]),
    ],
    ids=["event-only", "retry-only", "type-forgotten", "id-and-blank-lines"],
)
def test_documented_difference_events_without_data(
    sse_dump: Path, stream: bytes, standard: list[Event], sdk: list[Event]
) -> None:
    assert c_decode(sse_dump, stream)[0] == standard
    assert sdk_decode(stream) == sdk


def test_documented_difference_bom(sse_dump: Path) -> None:
    """The standard skips a leading BOM; the SDK keeps it in the first field name."""
    stream = b"\xef\xbb\xbfdata: a\n\ndata: b\n\n"
    assert c_decode(sse_dump, stream)[0] == [("", "a"), ("", "b")]
    assert sdk_decode(stream) == [("", "b")]


def test_documented_difference_long_event_type(sse_dump: Path) -> None:
    """The C decoder keeps SSE_EVENT_TYPE_MAX bytes of a type (a bound of its own)."""
    long_type = "r" * (SSE_EVENT_TYPE_MAX + 1)
    stream = f"event: {long_type}\ndata: x\n\n".encode()
    assert c_decode(sse_dump, stream)[0] == [(long_type[:SSE_EVENT_TYPE_MAX], "x")]
    assert sdk_decode(stream) == [(long_type, "x")]


# ---- the decoder allocates nothing ----


def test_sse_object_calls_no_allocator(tmp_path: Path) -> None:
    """sse.c compiled alone links to nothing but memory/string helpers: its struct is all
    the memory it has."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    nm = shutil.which("nm")
    assert cc and nm, "cc and nm are needed (apt-get install build-essential)"
    obj = tmp_path / "sse.o"
    subprocess.run(
        [cc, "-std=c11", "-O0", "-c", "-I", str(SSE_C.parent), str(SSE_C), "-o", str(obj)],
        check=True,
    )
    undefined = subprocess.run(
        [nm, "-u", str(obj)], check=True, capture_output=True, text=True
    ).stdout.split()
    imported = {s for s in undefined if s not in ("U", "w")}
    assert imported <= {"memcpy", "memset", "memcmp", "strlen", "memchr"}, imported
