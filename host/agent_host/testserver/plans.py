"""What the test server answers (replies, turns, scripts) and what it records (requests)."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import TestServerError
from .faults import NO_FAULTS, Faults, Outcome
from .sse import apply_sse_options, dumps

Api = Literal["chat", "responses"]

#: Path suffix of each API's endpoint.
API_PATHS: dict[str, str] = {"chat": "/chat/completions", "responses": "/responses"}

REASONS: dict[int, str] = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(frozen=True)
class Reply:
    """One HTTP response: status, headers, body and the faults to send it with.

    Attributes:
        status: HTTP status code.
        segments: The body in write units; for event streams, one LF-form SSE frame each.
        content_type: The Content-Type header.
        headers: Extra headers, in order (e.g. `("Retry-After", "2")`).
        faults: How to send it.
        api: "chat" or "responses" when the reply belongs to one API; a turn built from it
            then expects the request path to end with that API's endpoint.
        label: A name for logs (the fixture file name, or the synthesized stream's name).
    """

    status: int = 200
    segments: tuple[bytes, ...] = ()
    content_type: str = "text/event-stream"
    headers: tuple[tuple[str, str], ...] = ()
    faults: Faults = NO_FAULTS
    api: Api | None = None
    label: str = ""

    @property
    def is_sse(self) -> bool:
        """True for an event-stream body."""
        return self.content_type.startswith("text/event-stream")

    @property
    def body(self) -> bytes:
        """The body as recorded or built, before any fault is applied."""
        return b"".join(self.segments)

    def wire_segments(self) -> list[bytes]:
        """The body with the SSE-level faults (line endings, keep-alive comments) applied.

        Returns:
            The write units, in order.
        """
        if not self.is_sse:
            return list(self.segments)
        f = self.faults
        return apply_sse_options(
            self.segments,
            eol=f.eol,
            keepalive_every=f.keepalive_every,
            keepalive_before=f.keepalive_before,
            keepalive_text=f.keepalive_text,
        )

    def with_faults(self, faults: Faults | None = None, **changes: object) -> Reply:
        """A copy sent with other faults.

        Args:
            faults: Replacement faults (default: the current ones).
            **changes: Fields of :class:`Faults` to change on top.

        Returns:
            The new reply.
        """
        base = faults if faults is not None else self.faults
        return dataclasses.replace(self, faults=dataclasses.replace(base, **changes))  # type: ignore[arg-type]

    def with_headers(self, *headers: tuple[str, str]) -> Reply:
        """A copy with more headers.

        Args:
            *headers: (name, value) pairs appended to the current ones.

        Returns:
            The new reply.
        """
        return dataclasses.replace(self, headers=self.headers + tuple(headers))

    @classmethod
    def sse(
        cls,
        segments: Iterable[bytes],
        *,
        status: int = 200,
        headers: Iterable[tuple[str, str]] = (),
        faults: Faults = NO_FAULTS,
        api: Api | None = None,
        label: str = "",
    ) -> Reply:
        """An event-stream reply from frames (see :mod:`agent_host.testserver.sse`).

        Args:
            segments: LF-form frames.
            status: HTTP status.
            headers: Extra headers.
            faults: How to send it.
            api: The API the stream belongs to.
            label: Name for logs.

        Returns:
            The reply.
        """
        return cls(status, tuple(segments), "text/event-stream", tuple(headers), faults, api, label)

    @classmethod
    def json(
        cls,
        status: int,
        body: Mapping[str, object] | bytes,
        *,
        headers: Iterable[tuple[str, str]] = (),
        faults: Faults = NO_FAULTS,
        api: Api | None = None,
        label: str = "",
    ) -> Reply:
        """A JSON reply, typically an error body.

        Args:
            status: HTTP status.
            body: The body; a mapping is serialised on one line.
            headers: Extra headers.
            faults: How to send it.
            api: The API the reply belongs to.
            label: Name for logs.

        Returns:
            The reply.
        """
        raw = body if isinstance(body, bytes) else dumps(body).encode("utf-8")
        return cls(status, (raw,), "application/json", tuple(headers), faults, api, label)


@dataclass
class RecordedRequest:
    """One request as the server received it, and what it sent back.

    Attributes:
        index: 0-based position among all requests the server received.
        connection: 0-based number of the connection it came on.
        method: Request method.
        target: Request target as sent (path and query).
        version: "HTTP/1.1" or "HTTP/1.0".
        headers: Header (name, value) pairs in the order received, names as sent.
        body: Raw body bytes.
        tls: True when it came over TLS.
        status: Status code answered (0 until the answer is chosen).
        outcome: How the answer ended ("complete", "disconnected", "stalled", "client-gone"),
            empty while it is being sent.
        wire: Every byte sent in answer (head and body, as they went out).
        writes: Size of each write call that sent them (all 1 for a drip).
        problems: Validation and expectation failures found in this request.
        label: Label of the reply that answered.
    """

    index: int
    connection: int
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    tls: bool
    status: int = 0
    outcome: Outcome | Literal[""] = ""
    wire: bytearray = field(default_factory=bytearray)
    writes: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    label: str = ""
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def path(self) -> str:
        """The target without its query string."""
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        """The query string (without `?`), or empty."""
        return self.target.partition("?")[2]

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header, matched without regard to case.

        Args:
            name: Header name.
            default: Returned when absent.

        Returns:
            The value or `default`.
        """
        low = name.lower()
        return next((v for k, v in self.headers if k.lower() == low), default)

    def header_all(self, name: str) -> list[str]:
        """Every value of a header, in order.

        Args:
            name: Header name (any case).

        Returns:
            The values.
        """
        low = name.lower()
        return [v for k, v in self.headers if k.lower() == low]

    @property
    def authorization(self) -> str | None:
        """The Authorization header as sent, or None."""
        return self.header("authorization")

    @property
    def json(self) -> object:
        """The body parsed as JSON.

        Raises:
            TestServerError: The body is not valid UTF-8 JSON.
        """
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise TestServerError(f"request {self.index} body is not JSON: {err}") from None

    @property
    def json_or_none(self) -> object:
        """The body parsed as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait until the answer has been sent (or cut).

        Args:
            timeout: Seconds to wait at most.

        Returns:
            True when finished.
        """
        return self.finished.wait(timeout)

    def to_dict(self) -> dict[str, object]:
        """A JSON-friendly summary (for `--record` files and messages).

        Returns:
            method, target, headers, body (text), status, outcome and problems.
        """
        return {
            "index": self.index,
            "connection": self.connection,
            "method": self.method,
            "target": self.target,
            "headers": [list(h) for h in self.headers],
            "body": self.body.decode("utf-8", "replace"),
            "status": self.status,
            "outcome": self.outcome,
            "problems": list(self.problems),
            "label": self.label,
        }


#: A per-turn check; it raises (AssertionError or any Exception) with a message when unmet.
Expectation = Callable[[RecordedRequest], None]


@dataclass(frozen=True)
class Turn:
    """One step of a scripted dialogue: the checks on the request and the reply to send.

    Attributes:
        reply: What to answer.
        expect: Checks on the request; a failing check is recorded and the server answers 400
            with the failure text instead of `reply`.
    """

    reply: Reply
    expect: tuple[Expectation, ...] = ()


def turn_for(reply: Reply, *expect: Expectation) -> Turn:
    """A turn that also checks the request path when the reply belongs to an API.

    Args:
        reply: The reply.
        *expect: Further checks.

    Returns:
        The turn.
    """
    checks = (expect_path(API_PATHS[reply.api]),) if reply.api is not None else ()
    return Turn(reply, checks + tuple(expect))


class Script:
    """The replies of a dialogue, handed out one per request, in order.

    Args:
        turns: Turns (or bare replies, which get :func:`turn_for` checks).
        repeat_last: Keep answering with the last turn once the script is used up; otherwise
            a request past the end is answered 500 and recorded as a failure.
    """

    def __init__(self, turns: Iterable[Turn | Reply], *, repeat_last: bool = False) -> None:
        self.turns: tuple[Turn, ...] = tuple(
            t if isinstance(t, Turn) else turn_for(t) for t in turns
        )
        self.repeat_last = repeat_last
        self._next = 0
        self._lock = threading.Lock()

    @classmethod
    def repeat(cls, reply: Reply | Turn) -> Script:
        """A script that gives every request the same answer.

        Args:
            reply: The answer.

        Returns:
            The script.
        """
        return cls([reply], repeat_last=True)

    def next_turn(self) -> Turn | None:
        """Take the next turn (thread-safe).

        Returns:
            The turn, or None when the script is used up.
        """
        with self._lock:
            if self._next < len(self.turns):
                turn = self.turns[self._next]
                self._next += 1
                return turn
            if self.repeat_last and self.turns:
                return self.turns[-1]
            return None

    @property
    def used(self) -> int:
        """How many turns have been handed out (not counting repeats)."""
        with self._lock:
            return self._next

    @property
    def finished(self) -> bool:
        """True when every turn has been handed out."""
        return self.used >= len(self.turns)


def as_script(plan: Script | Reply | Turn | Sequence[Turn | Reply] | None) -> Script:
    """Turn whatever was given to the server into a script.

    Args:
        plan: A script; one reply or turn (given to every request); or a sequence of them
            (a dialogue); None for an empty script.

    Returns:
        The script.
    """
    if plan is None:
        return Script([])
    if isinstance(plan, Script):
        return plan
    if isinstance(plan, (Reply, Turn)):
        return Script.repeat(plan)
    return Script(plan)


def expect_path(suffix: str) -> Expectation:
    """Check that the request is a POST whose path ends with `suffix`.

    Args:
        suffix: E.g. "/responses".

    Returns:
        The check.
    """

    def check(req: RecordedRequest) -> None:
        if req.method != "POST" or not req.path.endswith(suffix):
            raise AssertionError(f"expected POST .../{suffix.lstrip('/')}, got {req.method} "
                                 f"{req.path}")

    return check


def expect_json(subset: Mapping[str, object]) -> Expectation:
    """Check that the JSON body contains `subset` (nested mappings compared key by key).

    Args:
        subset: Expected keys and values; a nested mapping matches a superset of itself.

    Returns:
        The check.
    """

    def check(req: RecordedRequest) -> None:
        problems = _subset_problems(subset, req.json_or_none, "body")
        if problems:
            raise AssertionError("; ".join(problems))

    return check


def expect_no_key(*keys: str) -> Expectation:
    """Check that the JSON body has none of these top-level keys.

    Args:
        *keys: The keys that must be absent.

    Returns:
        The check.
    """

    def check(req: RecordedRequest) -> None:
        body = req.json_or_none
        present = [k for k in keys if isinstance(body, dict) and k in body]
        if present:
            raise AssertionError(f"body must not have {present}")

    return check


def expect_header(name: str, value: str | None) -> Expectation:
    """Check a request header's value (None: the header must be absent).

    Args:
        name: Header name.
        value: Expected value, or None for absent.

    Returns:
        The check.
    """

    def check(req: RecordedRequest) -> None:
        got = req.header(name)
        if got != value:
            raise AssertionError(f"header {name}: expected {value!r}, got {got!r}")

    return check


def _subset_problems(want: object, got: object, where: str) -> list[str]:
    """Differences between an expected subset and a value."""
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return [f"{where}: expected an object, got {type(got).__name__}"]
        out: list[str] = []
        for key, value in want.items():
            if key not in got:
                out.append(f"{where}.{key}: missing")
            else:
                out.extend(_subset_problems(value, got[key], f"{where}.{key}"))
        return out
    if want != got or type(want) is not type(got):
        return [f"{where}: expected {want!r}, got {got!r}"]
    return []
