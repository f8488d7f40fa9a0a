"""The OpenAI-compatible test server: a raw-socket HTTP/1.1 server on 127.0.0.1.

It has its own minimal request parser and response writer so that every byte it sends is under
the test's control (see :mod:`agent_host.testserver.faults`). One thread accepts connections and
one thread serves each connection; every wait is bounded, and :meth:`TestServer.close` ends
stalls and drips and closes every connection.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import TestServerError
from . import embeddings
from .faults import Outcome, send_reply, transfer_encode
from .plans import REASONS, RecordedRequest, Reply, Script, Turn, as_script
from .tls import CaFiles, TlsMaterial, TlsMode, make_tls
from .validate import api_for_path, request_problems

if TYPE_CHECKING:
    from typing_extensions import Self

#: The only address the server binds.
HOST = "127.0.0.1"

MAX_HEAD = 64 * 1024
MAX_HEADERS = 100
_BODY_METHODS = {"POST", "PUT", "PATCH"}
_POLL = 0.05

Plan = Script | Reply | Turn | Sequence[Turn | Reply] | None


@dataclass
class _Rejection:
    """A request the parser refused (answered, then the connection is closed)."""

    status: int
    message: str


class _Reader:
    """Reads requests off one connection, with bounded waits."""

    def __init__(self, sock: socket.socket, stop: threading.Event, read_timeout: float,
                 idle_timeout: float, max_body: int) -> None:
        self.sock = sock
        self.stop = stop
        self.read_timeout = read_timeout
        self.idle_timeout = idle_timeout
        self.max_body = max_body
        self.buf = bytearray()

    def _fill(self, deadline: float) -> bool:
        """Read more bytes; False on EOF, timeout or shutdown."""
        self.sock.settimeout(_POLL)
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return False
            if not data:
                return False
            self.buf += data
            return True
        return False

    def read(self) -> tuple[str, str, str, list[tuple[str, str]], bytes] | _Rejection | None:
        """Read one request.

        Returns:
            (method, target, version, headers, body); a rejection; or None when the client
            closed (or went quiet) between requests.
        """
        deadline = time.monotonic() + self.idle_timeout
        while not self.buf:
            if not self._fill(deadline):
                return None
        deadline = time.monotonic() + self.read_timeout
        while True:
            crlf = self.buf.find(b"\r\n\r\n")
            bare = self.buf.find(b"\n\n")
            if bare >= 0 and (crlf < 0 or bare < crlf):
                return _Rejection(400, "request head lines must end with CRLF")
            if crlf >= 0:
                break
            if len(self.buf) > MAX_HEAD:
                return _Rejection(431, f"request head larger than {MAX_HEAD} bytes")
            if not self._fill(deadline):
                if self.stop.is_set() or not self.buf:
                    return None
                return _Rejection(408, "request head incomplete")
        if crlf + 4 > MAX_HEAD:
            return _Rejection(431, f"request head larger than {MAX_HEAD} bytes")
        head = bytes(self.buf[:crlf]).decode("latin-1")
        del self.buf[: crlf + 4]
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] not in ("HTTP/1.1", "HTTP/1.0") or not parts[1]:
            return _Rejection(400, f"bad request line {lines[0][:100]!r}")
        method, target, version = parts
        if len(lines) - 1 > MAX_HEADERS:
            return _Rejection(431, f"more than {MAX_HEADERS} header lines")
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip() or " " in name:
                return _Rejection(400, f"bad header line {line[:100]!r}")
            headers.append((name, value.strip(" \t")))
        names = {n.lower() for n, _ in headers}
        if "transfer-encoding" in names:
            return _Rejection(400, "request Transfer-Encoding is not supported: send Content-Length")
        lengths = {v for n, v in headers if n.lower() == "content-length"}
        if len(lengths) > 1 or any(not v.isdigit() for v in lengths):
            return _Rejection(400, f"bad Content-Length {sorted(lengths)}")
        if not lengths:
            if method in _BODY_METHODS:
                return _Rejection(411, f"{method} without Content-Length")
            return method, target, version, headers, b""
        length = int(next(iter(lengths)))
        if length > self.max_body:
            return _Rejection(413, f"body of {length} bytes exceeds {self.max_body}")
        while len(self.buf) < length:
            if not self._fill(deadline):
                return None if self.stop.is_set() else _Rejection(408, "request body incomplete")
        body = bytes(self.buf[:length])
        del self.buf[:length]
        return method, target, version, headers, body


class TestServer:
    """An OpenAI-compatible HTTP(S) server on 127.0.0.1 that answers from a script.

    Every request is recorded (:attr:`requests`), checked against the openai SDK's request types
    when its path is an API endpoint, checked against the turn's expectations, and answered with
    the next turn's reply. Use it as a context manager::

        with TestServer(fixture_reply("openai_gpt4o_text_usage.sse")) as srv:
            client = openai.OpenAI(base_url=srv.url("/v1"), api_key="test")
            ...
            srv.check()

    Args:
        plan: A :class:`Script`; a :class:`Reply` or :class:`Turn` given to every request; a
            sequence of them (a dialogue, one per request); or None (every request fails until
            :meth:`set_script`).
        tls: None for plain HTTP, or a TLS mode ("valid", "wrong-host", "unknown-ca").
        port: TCP port on 127.0.0.1; 0 picks a free one (see :attr:`port`).
        validate: Check request bodies of API paths against the SDK's request types.
        reject_invalid: Answer a request that fails validation or an expectation with HTTP 400
            (OpenAI's error shape, the problems as message) instead of the scripted reply. The
            failure is recorded either way.
        read_timeout: Seconds allowed to receive a whole request once it has started.
        idle_timeout: Seconds a kept-alive connection may wait for its next request.
        send_timeout: Seconds a single write may block.
        max_body: Largest request body accepted (bytes).
        tls_dir: Where to write the TLS files (default: a temporary directory removed on close).
        tls_ca: An existing CA to sign the server certificate with (and to report as
            :attr:`ca_pem`) instead of a new one per server: the CA a firmware image was built
            to trust (docs/tls.md). Only with `tls`.
        log: Called with one line per request (e.g. `print`); None for silence.
        embeddings_fault: How `/v1/embeddings` answers wrongly (one of
            :data:`~agent_host.testserver.embeddings.EMBEDDINGS_FAULTS`), or None for
            correct, deterministic vectors. Embeddings requests are answered outside the
            script (they use no turn) and recorded like the others.
    """

    __test__ = False  # not a pytest test class despite the name

    def __init__(
        self,
        plan: Plan = None,
        *,
        tls: TlsMode | None = None,
        port: int = 0,
        validate: bool = True,
        reject_invalid: bool = True,
        read_timeout: float = 10.0,
        idle_timeout: float = 30.0,
        send_timeout: float = 30.0,
        max_body: int = 16 * 1024 * 1024,
        tls_dir: Path | None = None,
        tls_ca: CaFiles | None = None,
        log: Callable[[str], None] | None = None,
        embeddings_fault: str | None = None,
    ) -> None:
        if tls_ca is not None and tls is None:
            raise TestServerError("tls_ca needs a TLS mode (tls='valid', ...)")
        self._script = as_script(plan)
        self.tls_mode = tls
        self._want_port = port
        self.validate = validate
        self.reject_invalid = reject_invalid
        self.read_timeout = read_timeout
        self.idle_timeout = idle_timeout
        self.send_timeout = send_timeout
        self.max_body = max_body
        self._tls_dir = tls_dir
        self._tls_ca = tls_ca
        self._log = log
        self.embeddings_fault = embeddings_fault
        self.tls: TlsMaterial | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._ssl_ctx: ssl.SSLContext | None = None
        self._listener: socket.socket | None = None
        self._port = 0
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._failures: list[str] = []
        self._tls_errors: list[str] = []
        self._open: dict[int, socket.socket] = {}
        self._threads: list[threading.Thread] = []
        self._accepted = 0
        self._accept_thread: threading.Thread | None = None

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> Self:
        """Create the TLS material (if any), bind 127.0.0.1 and start accepting.

        Returns:
            self.

        Raises:
            TestServerError: Already started, or the port cannot be bound.
        """
        if self._listener is not None:
            raise TestServerError("test server already started")
        if self.tls_mode is not None:
            directory = self._tls_dir
            if directory is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="agent-testserver-")
                directory = Path(self._tmp.name)
            self.tls = make_tls(self.tls_mode, directory, self._tls_ca)
            self._ssl_ctx = self.tls.server_context()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((HOST, self._want_port))
            listener.listen(64)
        except OSError as err:
            listener.close()
            raise TestServerError(f"cannot listen on {HOST}:{self._want_port}: {err}") from None
        listener.settimeout(_POLL)
        self._listener = listener
        self._port = listener.getsockname()[1]
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name=f"testserver-accept-{self._port}", daemon=True
        )
        self._accept_thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, end stalls and drips, close every connection, remove temp files."""
        self._stop.set()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
        with self._cond:
            socks = list(self._open.values())
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in list(self._threads):
            thread.join(timeout=5)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound TCP port (after :meth:`start`)."""
        if not self._port:
            raise TestServerError("test server not started")
        return self._port

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) the listening socket is bound to."""
        if self._listener is None:
            raise TestServerError("test server not started")
        host, port = self._listener.getsockname()[:2]
        return str(host), int(port)

    @property
    def scheme(self) -> str:
        """"https" with TLS, else "http"."""
        return "https" if self.tls_mode is not None else "http"

    @property
    def base_url(self) -> str:
        """E.g. "http://127.0.0.1:40123" (no trailing slash)."""
        return f"{self.scheme}://{HOST}:{self.port}"

    def url(self, path: str = "", host: str = HOST) -> str:
        """A URL on this server.

        Args:
            path: Path to append, e.g. "/v1" or "/v1/responses".
            host: Host name to put in the URL: "127.0.0.1" or "localhost" (both are on the
                valid certificate); the server itself only listens on 127.0.0.1.

        Returns:
            The URL.
        """
        return f"{self.scheme}://{host}:{self.port}{path}"

    @property
    def ca_pem(self) -> Path:
        """PEM file of the CA a client must trust (HTTPS only).

        For "valid" and "wrong-host" it signed the server's certificate; for "unknown-ca" it
        did not. With `tls_ca` it is that CA's certificate file.
        """
        if self.tls is None:
            raise TestServerError("ca_pem: the server has no TLS (pass tls='valid')")
        return self.tls.ca_pem

    def client_ssl_context(self) -> ssl.SSLContext:
        """An SSL context that trusts :attr:`ca_pem` only, for Python clients in tests.

        Returns:
            The context (chain and host name are checked).
        """
        if self.tls is None:
            raise TestServerError("client_ssl_context: the server has no TLS")
        return self.tls.client_context()

    # -- script and records ----------------------------------------------------------------

    @property
    def script(self) -> Script:
        """The script in use."""
        return self._script

    def set_script(self, plan: Plan) -> None:
        """Answer the following requests from a new plan.

        Args:
            plan: As for the constructor.
        """
        self._script = as_script(plan)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order of arrival."""
        with self._cond:
            return list(self._requests)

    @property
    def failures(self) -> list[str]:
        """Validation and expectation failures, one line per problem."""
        with self._cond:
            return list(self._failures)

    @property
    def tls_errors(self) -> list[str]:
        """TLS handshakes that failed (e.g. a client that refused the certificate)."""
        with self._cond:
            return list(self._tls_errors)

    @property
    def connections(self) -> int:
        """How many connections have been accepted."""
        with self._cond:
            return self._accepted

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until `count` requests have arrived and been answered (or cut).

        Args:
            count: How many.
            timeout: Seconds to wait at most.

        Returns:
            The first `count` requests.

        Raises:
            TestServerError: Not there in time.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                done = [r for r in self._requests[:count] if r.finished.is_set()]
                if len(done) >= count:
                    return self._requests[:count]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TestServerError(
                        f"waited {timeout} s for {count} answered request(s), have "
                        f"{len(self._requests)} ({len(done)} answered)"
                    )
                self._cond.wait(min(left, _POLL))

    def wait_for_tls_error(self, timeout: float = 10.0) -> str:
        """Wait until a TLS handshake has failed.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            The first failure text.

        Raises:
            TestServerError: None in time.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._tls_errors:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TestServerError(f"no failed TLS handshake within {timeout} s")
                self._cond.wait(min(left, _POLL))
            return self._tls_errors[0]

    def check(self, *, all_turns_used: bool = True) -> None:
        """Raise if any request failed validation or an expectation, or turns are left.

        Args:
            all_turns_used: Also require that every scripted turn was served.

        Raises:
            TestServerError: With every failure.
        """
        problems = self.failures
        script = self._script
        if all_turns_used and not script.finished:
            problems.append(f"only {script.used} of {len(script.turns)} scripted turns served")
        if problems:
            raise TestServerError("test server saw problems:\n  " + "\n  ".join(problems))

    # -- serving ---------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._cond:
                number = self._accepted
                self._accepted += 1
                self._open[number] = sock
                thread = threading.Thread(
                    target=self._serve_connection, args=(sock, number),
                    name=f"testserver-conn-{number}", daemon=True,
                )
                self._threads.append(thread)
            thread.start()

    def _serve_connection(self, raw: socket.socket, number: int) -> None:
        sock = raw
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._ssl_ctx is not None:
                raw.settimeout(self.read_timeout)
                try:
                    sock = self._ssl_ctx.wrap_socket(raw, server_side=True)
                except (ssl.SSLError, OSError) as err:
                    with self._cond:
                        self._tls_errors.append(f"connection {number}: {err}")
                        self._cond.notify_all()
                    return
                with self._cond:
                    self._open[number] = sock
            reader = _Reader(sock, self._stop, self.read_timeout, self.idle_timeout,
                             self.max_body)
            while not self._stop.is_set():
                if not self._serve_one(sock, reader, number):
                    break
        finally:
            with self._cond:
                self._open.pop(number, None)
            with contextlib.suppress(OSError):
                sock.close()

    def _record(self, number: int, method: str, target: str, version: str,
                headers: list[tuple[str, str]], body: bytes) -> RecordedRequest:
        with self._cond:
            rec = RecordedRequest(len(self._requests), number, method, target, version,
                                  headers, body, self._ssl_ctx is not None)
            self._requests.append(rec)
            self._cond.notify_all()
        return rec

    def _serve_one(self, sock: socket.socket, reader: _Reader, number: int) -> bool:
        """Serve one request; True when the connection stays open for another."""
        got = reader.read()
        if got is None:
            return False
        if isinstance(got, _Rejection):
            self._send_simple(sock, got.status, got.message)
            self._note(f"conn {number}: rejected {got.status} {got.message}")
            return False
        method, target, version, headers, body = got
        rec = self._record(number, method, target, version, headers, body)
        try:
            reply, problems = self._choose(rec)
            if problems:
                rec.problems += problems
                with self._cond:
                    self._failures += [f"request {rec.index} ({method} {rec.path}): {p}"
                                       for p in problems]
                if self.reject_invalid and reply.label != "problem":
                    reply = _problem_reply(problems)
            rec.status = reply.status
            rec.label = reply.label
            keep = self._send(sock, rec, reply)
            self._note(f"{method} {target} -> {reply.status} {reply.label or ''} "
                       f"[{rec.outcome}, {len(rec.wire)} bytes]"
                       + (f" problems: {'; '.join(problems)}" if problems else ""))
            return keep
        finally:
            with self._cond:
                rec.finished.set()
                self._cond.notify_all()

    @property
    def embeddings_fault(self) -> str | None:
        """How `/v1/embeddings` answers wrongly, or None (see the constructor)."""
        return self._embeddings_fault

    @embeddings_fault.setter
    def embeddings_fault(self, fault: str | None) -> None:
        if fault is not None and fault not in embeddings.EMBEDDINGS_FAULTS:
            raise TestServerError(f"embeddings_fault must be one of "
                                  f"{embeddings.EMBEDDINGS_FAULTS} or None, not {fault!r}")
        self._embeddings_fault = fault

    def _choose(self, rec: RecordedRequest) -> tuple[Reply, list[str]]:
        problems: list[str] = []
        if rec.method == "POST" and embeddings.is_embeddings_path(rec.path):
            if self.validate:
                body = rec.json_or_none
                problems += (["body is not JSON"] if body is None
                             else embeddings.request_problems(body))
            return embeddings.answer(rec, self._embeddings_fault), problems
        api = api_for_path(rec.path)
        if self.validate and api is not None and rec.method == "POST":
            body = rec.json_or_none
            if body is None:
                problems.append("body is not JSON")
            else:
                problems += request_problems(body, api)
        turn = self._script.next_turn()
        if turn is None:
            problems.append("no scripted reply left for this request")
            return _problem_reply(problems, status=500), problems
        for check in turn.expect:
            try:
                check(rec)
            except Exception as err:  # noqa: BLE001 - any failing check is reported as text
                problems.append(f"expectation failed: {err}")
        return turn.reply, problems

    def _send(self, sock: socket.socket, rec: RecordedRequest, reply: Reply) -> bool:
        faults = reply.faults
        framing = faults.framing_for(reply.content_type)
        framing_headers, pieces = transfer_encode(reply.wire_segments(), framing,
                                                  faults.chunk_size)
        wants_close = (rec.header("connection") or "").lower() == "close"
        keep = (
            rec.version == "HTTP/1.1" and not wants_close and framing != "close"
            and not faults.interrupts
        )
        head = _head(reply, framing_headers, keep)
        sock.settimeout(self.send_timeout)
        outcome: Outcome = send_reply(sock, head, pieces, faults, self._stop, rec.wire,
                                      rec.writes)
        rec.outcome = outcome
        if outcome == "complete" and not keep:
            _graceful_close(sock)
        return keep and outcome == "complete"

    def _send_simple(self, sock: socket.socket, status: int, message: str) -> None:
        reply = Reply.json(status, _error_body(message, "invalid_request_error"))
        framing_headers, pieces = transfer_encode(reply.segments, "content-length")
        with contextlib.suppress(OSError):
            sock.settimeout(self.send_timeout)
            sock.sendall(_head(reply, framing_headers, keep=False) + b"".join(pieces))
            _graceful_close(sock)

    def _note(self, line: str) -> None:
        if self._log is not None:
            self._log(line)


def _error_body(message: str, etype: str) -> dict[str, object]:
    return {"error": {"message": message, "type": etype, "param": None, "code": None}}


def _problem_reply(problems: list[str], status: int = 400) -> Reply:
    message = "test server: " + "; ".join(problems)
    etype = "invalid_request_error" if status < 500 else "server_error"
    return Reply.json(status, _error_body(message, etype), label="problem")


def _head(reply: Reply, framing_headers: list[tuple[str, str]], keep: bool) -> bytes:
    reason = REASONS.get(reply.status, "Status")
    headers = [("Content-Type", reply.content_type)]
    if reply.is_sse:
        headers.append(("Cache-Control", "no-cache"))
    headers += framing_headers
    if not any(n.lower() == "connection" for n, _ in framing_headers):
        headers.append(("Connection", "keep-alive" if keep else "close"))
    headers += list(reply.headers)
    lines = [f"HTTP/1.1 {reply.status} {reason}"] + [f"{n}: {v}" for n, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _graceful_close(sock: socket.socket) -> None:
    """End a connection after a complete answer: TLS close_notify, then FIN."""
    with contextlib.suppress(OSError, ValueError):
        sock.settimeout(1.0)
        if isinstance(sock, ssl.SSLSocket):
            sock.unwrap().shutdown(socket.SHUT_WR)
        else:
            sock.shutdown(socket.SHUT_WR)

