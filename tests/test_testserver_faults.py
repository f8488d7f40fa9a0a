"""Fault modes and HTTP handling of the test server, checked byte for byte with raw sockets."""

from __future__ import annotations

import json
import socket
import ssl
import time
from dataclasses import dataclass, field

import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import Faults, Reply, TestServer
from agent_host.testserver.faults import transfer_encode
from agent_host.testserver.synth import sse_text_frames

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "stream": True}).encode()
FRAMES = sse_text_frames(["Hello", " world"])
PLAIN = b"".join(FRAMES)
TINY = [b'data: {"a":1}\n\n', b"data: [DONE]\n\n"]


def request(path: str = "/v1/chat/completions", body: bytes = BODY, *, close: bool = True,
            headers: tuple[str, ...] = (), version: str = "HTTP/1.1") -> bytes:
    lines = [f"POST {path} {version}", "Host: 127.0.0.1", "Authorization: Bearer sk-raw",
             "Content-Type: application/json", f"Content-Length: {len(body)}", *headers]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class Received:
    data: bytes = b""
    sizes: list[int] = field(default_factory=list)
    reset: bool = False
    timed_out: bool = False

    @property
    def head(self) -> str:
        return self.data.partition(b"\r\n\r\n")[0].decode("latin-1")

    @property
    def body(self) -> bytes:
        return self.data.partition(b"\r\n\r\n")[2]

    def header(self, name: str) -> str | None:
        for line in self.head.split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.lower() == name.lower():
                return value.strip()
        return None


def connect(srv: TestServer, timeout: float = 5.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    if srv.tls is not None:
        return srv.client_ssl_context().wrap_socket(sock, server_hostname="localhost")
    return sock


def read_all(sock: socket.socket, out: Received | None = None) -> Received:
    out = out or Received()
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            out.data += data
            out.sizes.append(len(data))
    except ConnectionResetError:
        out.reset = True
    except TimeoutError:
        out.timed_out = True
    return out


def exchange(srv: TestServer, raw: bytes | None = None, timeout: float = 5.0) -> Received:
    with connect(srv, timeout) as sock:
        sock.sendall(raw if raw is not None else request())
        return read_all(sock)


def dechunk(body: bytes) -> list[bytes]:
    """Strictly parse chunked framing; returns the chunk payloads (without the last 0 chunk)."""
    chunks = []
    rest = body
    while True:
        size_line, sep, rest = rest.partition(b"\r\n")
        assert sep, "chunk size line without CRLF"
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n", "chunked body must end with 0 CRLF CRLF"
            return chunks
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]


def serve(faults: Faults, frames: list[bytes] = FRAMES, **kw: object) -> TestServer:
    return TestServer(Reply.sse(frames, faults=faults), **kw)  # type: ignore[arg-type]


# -- line endings, keep-alive comments, framing ---------------------------------------------------


@pytest.mark.parametrize("tls", [None, "valid"], ids=["http", "https"])
def test_crlf_line_endings_with_content_length(tls: str | None) -> None:
    with serve(Faults(eol="crlf", framing="content-length"), tls=tls) as srv:
        got = exchange(srv)
    assert got.head.startswith("HTTP/1.1 200 OK\r\n")
    assert got.header("Content-Type") == "text/event-stream"
    assert got.body == PLAIN.replace(b"\n", b"\r\n")
    assert got.header("Content-Length") == str(len(got.body))
    assert got.header("Transfer-Encoding") is None
    assert got.body.count(b"\n") == got.body.count(b"\r\n")


def test_cr_line_endings() -> None:
    with serve(Faults(eol="cr", framing="content-length")) as srv:
        got = exchange(srv)
    assert got.body == PLAIN.replace(b"\n", b"\r")
    assert b"\n" not in got.body and got.body.endswith(b"data: [DONE]\r\r")


def test_chunked_framing_one_chunk_per_frame() -> None:
    with serve(Faults(framing="chunked")) as srv:
        got = exchange(srv)
        rec = srv.wait_for_requests(1)[0]
    assert got.header("Transfer-Encoding") == "chunked"
    assert got.header("Content-Length") is None
    assert dechunk(got.body) == FRAMES
    assert bytes(rec.wire) == got.data


def test_event_streams_are_chunked_by_default_and_json_uses_content_length() -> None:
    with serve(Faults()) as srv:
        assert exchange(srv).header("Transfer-Encoding") == "chunked"
    with TestServer(Reply.json(429, {"error": {"message": "slow"}})) as srv:
        got = exchange(srv)
    assert got.head.startswith("HTTP/1.1 429 Too Many Requests\r\n")
    assert got.header("Content-Length") == str(len(got.body))
    assert json.loads(got.body) == {"error": {"message": "slow"}}


def test_chunked_framing_with_fixed_chunk_size() -> None:
    with serve(Faults(framing="chunked", chunk_size=5)) as srv:
        got = exchange(srv)
    chunks = dechunk(got.body)
    assert b"".join(chunks) == PLAIN
    assert all(len(c) == 5 for c in chunks[:-1]) and 0 < len(chunks[-1]) <= 5


def test_close_delimited_framing() -> None:
    with serve(Faults(framing="close")) as srv:
        got = exchange(srv, request(close=False))
    assert got.header("Connection") == "close"
    assert got.header("Content-Length") is None and got.header("Transfer-Encoding") is None
    assert got.body == PLAIN and not got.reset


def test_keepalive_comments_before_and_between_frames() -> None:
    faults = Faults(keepalive_before=2, keepalive_every=1, keepalive_text="ping",
                    framing="content-length")
    with serve(faults, TINY) as srv:
        got = exchange(srv)
    ka = b": ping\n\n"
    assert got.body == ka + ka + TINY[0] + ka + TINY[1]


def test_keepalive_every_k_frames_with_crlf() -> None:
    frames = [b"data: %d\n\n" % n for n in range(5)]
    with serve(Faults(keepalive_every=2, eol="crlf", framing="content-length"), frames) as srv:
        got = exchange(srv)
    ka = b": keep-alive\r\n\r\n"
    f = [x.replace(b"\n", b"\r\n") for x in frames]
    assert got.body == f[0] + f[1] + ka + f[2] + f[3] + ka + f[4]


# -- drip --------------------------------------------------------------------------------------


def test_drip_sends_the_body_one_byte_per_write() -> None:
    with serve(Faults(drip=True, drip_delay=0.01, framing="content-length"), TINY) as srv:
        with connect(srv) as sock:
            sock.sendall(request())
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(65536)
            got = read_all(sock)
        rec = srv.wait_for_requests(1)[0]
    body = b"".join(TINY)
    assert head.partition(b"\r\n\r\n")[2] + got.data == body
    head_len = len(rec.wire) - len(body)
    assert rec.writes == [head_len] + [1] * len(body)
    # With 10 ms between bytes the client sees (nearly) every byte on its own.
    assert len(got.sizes) >= len(body) // 2


def test_drip_headers_too() -> None:
    with serve(Faults(drip=True, drip_headers=True, framing="chunked"), TINY) as srv:
        got = exchange(srv)
        rec = srv.wait_for_requests(1)[0]
    assert dechunk(got.body) == TINY
    assert rec.writes == [1] * len(got.data)


# -- disconnect -------------------------------------------------------------------------------


def test_disconnect_at_every_byte_offset_of_the_body() -> None:
    body = b"".join(TINY)
    for n in range(len(body) + 1):
        with serve(Faults(disconnect_after=n, framing="content-length"), TINY) as srv:
            got = exchange(srv)
            rec = srv.wait_for_requests(1)[0]
        assert got.header("Content-Length") == str(len(body))
        assert got.body == body[:n], n
        assert rec.outcome == "disconnected" and not got.reset


def test_disconnect_counts_chunk_framing_bytes() -> None:
    _, pieces = transfer_encode(TINY, "chunked")
    wire_body = b"".join(pieces)
    for n in (0, 1, 3, len(wire_body) - 3):
        with serve(Faults(disconnect_after=n, framing="chunked"), TINY) as srv:
            assert exchange(srv).body == wire_body[:n]


def test_disconnect_with_reset() -> None:
    faults = Faults(disconnect_after=4, reset=True, framing="content-length")
    with serve(faults, TINY) as srv, connect(srv) as sock:
        sock.sendall(request())
        time.sleep(0.3)  # let the data and the RST arrive
        got = read_all(sock)
    assert got.reset
    assert len(got.body) <= 4


def test_interrupted_replies_close_even_on_keep_alive_connections() -> None:
    with serve(Faults(disconnect_after=1000, framing="content-length")) as srv:
        got = exchange(srv, request(close=False))
        assert got.body == PLAIN and got.header("Connection") == "close"


# -- stall ------------------------------------------------------------------------------------


def test_stall_after_n_bytes_holds_until_the_client_gives_up() -> None:
    with serve(Faults(stall_after=20, stall_seconds=10, framing="content-length")) as srv:
        with connect(srv, timeout=0.5) as sock:
            sock.sendall(request())
            got = read_all(sock)
        assert got.timed_out and got.body == PLAIN[:20]
        started = time.monotonic()
        rec = srv.wait_for_requests(1, timeout=5)[0]
        assert time.monotonic() - started < 3
        assert rec.outcome == "stalled"


def test_stall_is_bounded_by_stall_seconds() -> None:
    with serve(Faults(stall_after=0, stall_seconds=0.3)) as srv:
        started = time.monotonic()
        got = exchange(srv, timeout=5)
        assert 0.25 < time.monotonic() - started < 3
    assert not got.timed_out and got.body == b"" and got.head.startswith("HTTP/1.1 200")


def test_stall_after_the_whole_close_delimited_body() -> None:
    faults = Faults(stall_after=10_000, stall_seconds=10, framing="close")
    with serve(faults) as srv, connect(srv, timeout=0.5) as sock:
        sock.sendall(request())
        got = read_all(sock)
    assert got.timed_out and got.body == PLAIN


def test_close_ends_a_stall_before_the_head_promptly() -> None:
    srv = serve(Faults(stall_before_head=True, stall_seconds=30)).start()
    with connect(srv, timeout=5) as sock:
        sock.sendall(request())
        deadline = time.monotonic() + 5
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.requests and not srv.requests[0].finished.is_set()
        started = time.monotonic()
        srv.close()
        assert time.monotonic() - started < 3
        got = read_all(sock)
    assert got.data == b"" and not got.timed_out


# -- HTTP handling -----------------------------------------------------------------------------


def test_keep_alive_serves_two_requests_on_one_connection() -> None:
    with serve(Faults(framing="content-length"), TINY) as srv:
        with connect(srv) as sock:
            for _ in range(2):
                sock.sendall(request(close=False))
                data = b""
                while b"\r\n\r\n" not in data:
                    data += sock.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                assert b"Connection: keep-alive" in head
                while len(body) < len(b"".join(TINY)):
                    body += sock.recv(65536)
                assert body == b"".join(TINY)
        reqs = srv.wait_for_requests(2)
        assert srv.connections == 1 and [r.connection for r in reqs] == [0, 0]


def test_pipelined_requests_are_answered_in_order() -> None:
    with TestServer([Reply.json(200, {"n": 1}), Reply.json(200, {"n": 2})]) as srv:
        got = exchange(srv, request(close=False) + request(close=True))
    assert got.data.count(b"HTTP/1.1 200 OK") == 2
    assert got.data.endswith(b'{"n":2}') and b'{"n":1}HTTP/1.1' in got.data


def test_http_1_0_request_gets_a_closed_connection() -> None:
    with serve(Faults(framing="content-length"), TINY) as srv:
        got = exchange(srv, request(close=False, version="HTTP/1.0"))
    assert got.header("Connection") == "close" and got.body == b"".join(TINY)


def test_request_is_recorded_with_authorization_and_raw_body() -> None:
    with serve(Faults(), TINY) as srv:
        exchange(srv, request(path="/v1/chat/completions?x=1"))
        rec = srv.wait_for_requests(1)[0]
    assert rec.authorization == "Bearer sk-raw" and rec.body == BODY
    assert rec.path == "/v1/chat/completions" and rec.query == "x=1"
    assert rec.headers[0] == ("Host", "127.0.0.1")


@pytest.mark.parametrize("raw,status", [
    ((b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"3\r\nabc\r\n0\r\n\r\n"), 400),
    (b"POST /v1/responses HTTP/1.1\r\nHost: x\r\n\r\n", 411),
    (b"POST /v1/responses HTTP/1.1\nHost: x\nContent-Length: 0\n\n", 400),
    (b"POST /v1/responses HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab", 400),
    (b"POST /v1/responses HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
    (b"GARBAGE\r\n\r\n", 400),
    (b"POST /v1/responses HTTP/1.1\r\nBad Header: x\r\n\r\n", 400),
    (b"POST /v1/responses HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    (b"POST /v1/responses HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 413),
], ids=["transfer-encoding", "no-length", "bare-lf", "two-lengths", "bad-length",
        "request-line", "header-name", "huge-head", "huge-body"])
def test_malformed_requests_are_rejected(raw: bytes, status: int) -> None:
    with serve(Faults(), TINY) as srv:
        got = exchange(srv, raw)
        assert got.head.startswith(f"HTTP/1.1 {status} ")
        assert "error" in json.loads(got.body)
        assert srv.requests == []


def test_incomplete_request_times_out_with_408() -> None:
    with serve(Faults(), TINY, read_timeout=0.3) as srv, connect(srv) as sock:
        sock.sendall(b"POST /v1/responses HTTP/1.1\r\nContent-Le")
        got = read_all(sock)
    assert got.head.startswith("HTTP/1.1 408 ")


def test_get_without_body_is_accepted() -> None:
    with TestServer(Reply.json(200, {"data": []})) as srv:
        got = exchange(srv, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert got.head.startswith("HTTP/1.1 200 ") and srv.requests[0].method == "GET"


def test_server_binds_loopback_only() -> None:
    with TestServer() as srv:
        assert srv.address == ("127.0.0.1", srv.port)
        assert srv.url().startswith("http://127.0.0.1:")


def test_tls_raw_client_refuses_wrong_host() -> None:
    with serve(Faults(), TINY, tls="wrong-host") as srv, pytest.raises(
        ssl.SSLCertVerificationError, match="Hostname mismatch"
    ):
        exchange(srv)


# -- fault parsing ------------------------------------------------------------------------------


def test_fault_specs_parse() -> None:
    f = Faults.parse(["crlf", "keepalive=3", "keepalive-before=17", "chunked", "chunk-size=9",
                      "drip=0.5", "disconnect=100", "reset", "stall=5", "stall-seconds=2"])
    assert f == Faults(eol="crlf", keepalive_every=3, keepalive_before=17, framing="chunked",
                       chunk_size=9, drip=True, drip_delay=0.5, disconnect_after=100,
                       reset=True, stall_after=5, stall_seconds=2.0)
    assert Faults.parse(["eol=CR", "framing=close", "drip-headers", "stall"]) == Faults(
        eol="cr", framing="close", drip=True, drip_headers=True, stall_after=0)
    assert Faults.parse([]).describe() == "none"
    assert "eol=crlf" in Faults(eol="crlf").describe()


@pytest.mark.parametrize("spec", ["bogus", "eol=lfcr", "disconnect", "keepalive=x",
                                  "framing=gzip", "disconnect=-1"])
def test_bad_fault_specs_are_refused(spec: str) -> None:
    with pytest.raises(TestServerError):
        Faults.parse([spec])
