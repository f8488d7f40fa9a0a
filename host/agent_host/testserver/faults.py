"""Fault modes of a reply and the byte-level writer that carries them out.

SSE-level faults (line endings, keep-alive comments) change the body; transport faults (framing,
drip, disconnect, stall) change how the body goes on the wire. Byte counts for `disconnect_after`
and `stall_after` are counted over the *body bytes on the wire*, i.e. everything after the blank
line that ends the response head, including chunk-size lines in chunked framing.
"""

from __future__ import annotations

import dataclasses
import socket
import struct
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ..errors import TestServerError
from .sse import LineEnding

Framing = Literal["content-length", "chunked", "close"]

#: How a response ended, as stored in :attr:`RecordedRequest.outcome`.
Outcome = Literal["complete", "disconnected", "stalled", "client-gone"]

_FRAMINGS: tuple[Framing, ...] = ("content-length", "chunked", "close")
_EOLS: tuple[LineEnding, ...] = ("lf", "crlf", "cr")


@dataclass(frozen=True)
class Faults:
    """What to do wrong (or merely differently) while sending one reply.

    Attributes:
        eol: Line ending of SSE bodies: "lf" (as recorded), "crlf" or "cr".
        keepalive_every: Insert a `: keep-alive` comment frame after every K frames (0: never).
        keepalive_before: Comment frames sent before the first frame (OpenRouter sent 17).
        keepalive_text: Text of the comment frames.
        framing: "chunked", "content-length" or "close" (no length; the server closes after the
            body). None picks chunked for event streams and content-length for other bodies.
        chunk_size: In chunked framing, bytes per chunk; 0 sends one chunk per SSE frame.
        drip: Send the body one byte per write (TCP_NODELAY is set, so each byte is one segment,
            and over TLS one record).
        drip_delay: Seconds to sleep between dripped bytes.
        drip_headers: Drip the response head too.
        disconnect_after: Close the connection after this many body bytes (0: right after the
            head). None: no disconnect.
        reset: Disconnect with a TCP RST (SO_LINGER 0) instead of a FIN.
        stall_after: Send this many body bytes (0: only the head), then hold the connection open
            without sending until the client closes it, `stall_seconds` pass or the server stops.
            A value at or beyond the body length stalls after the whole body, before the close.
        stall_before_head: Stall before sending anything at all.
        stall_seconds: Upper bound of a stall.
    """

    eol: LineEnding = "lf"
    keepalive_every: int = 0
    keepalive_before: int = 0
    keepalive_text: str = "keep-alive"
    framing: Framing | None = None
    chunk_size: int = 0
    drip: bool = False
    drip_delay: float = 0.0
    drip_headers: bool = False
    disconnect_after: int | None = None
    reset: bool = False
    stall_after: int | None = None
    stall_before_head: bool = False
    stall_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.eol not in _EOLS:
            raise TestServerError(f"eol must be one of {_EOLS}, not {self.eol!r}")
        if self.framing is not None and self.framing not in _FRAMINGS:
            raise TestServerError(f"framing must be one of {_FRAMINGS}, not {self.framing!r}")
        for name in ("keepalive_every", "keepalive_before", "chunk_size"):
            if getattr(self, name) < 0:
                raise TestServerError(f"{name} must not be negative")
        for name in ("disconnect_after", "stall_after"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise TestServerError(f"{name} must not be negative")
        if self.drip_delay < 0 or self.stall_seconds < 0:
            raise TestServerError("drip_delay and stall_seconds must not be negative")

    @property
    def interrupts(self) -> bool:
        """True when the reply will not end normally (disconnect or stall)."""
        return (
            self.disconnect_after is not None
            or self.stall_after is not None
            or self.stall_before_head
        )

    def framing_for(self, content_type: str) -> Framing:
        """The transfer framing used for a body of this content type.

        Args:
            content_type: The reply's Content-Type.

        Returns:
            The explicit framing, or the default for the content type.
        """
        if self.framing is not None:
            return self.framing
        return "chunked" if content_type.startswith("text/event-stream") else "content-length"

    @classmethod
    def parse(cls, specs: Iterable[str]) -> Faults:
        """Build faults from `KEY[=VALUE]` strings, as given to `--fault` on the command line.

        Keys: `eol=lf|crlf|cr`, `crlf`, `cr`, `keepalive=K`, `keepalive-before=K`,
        `keepalive-text=TEXT`, `framing=chunked|content-length|close`, `chunked`,
        `content-length`, `close`, `chunk-size=N`, `drip[=DELAY]`, `drip-headers`,
        `disconnect=N`, `reset`, `stall[=N]`, `stall-before-head`, `stall-seconds=S`.

        Args:
            specs: The strings.

        Returns:
            The faults.

        Raises:
            TestServerError: A key is unknown or a value does not parse.
        """
        fields: dict[str, object] = {}
        for spec in specs:
            key, has_value, value = spec.partition("=")
            key = key.strip().lower().replace("_", "-")
            try:
                _parse_one(fields, key, value if has_value else None)
            except ValueError as err:
                raise TestServerError(f"bad fault {spec!r}: {err}") from None
        return dataclasses.replace(cls(), **fields)  # type: ignore[arg-type]

    def describe(self) -> str:
        """A short text of the fields that differ from the defaults (for logs).

        Returns:
            For example "eol=crlf drip=True", or "none".
        """
        base = Faults()
        parts = [
            f"{f.name}={getattr(self, f.name)}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != getattr(base, f.name)
        ]
        return " ".join(parts) or "none"


#: The default: send as recorded, nothing wrong.
NO_FAULTS = Faults()


def _parse_one(fields: dict[str, object], key: str, value: str | None) -> None:
    """Store one parsed `--fault` item in `fields` (ValueError on a bad one)."""

    def need() -> str:
        if value is None or value == "":
            raise ValueError("needs a value")
        return value

    if key == "eol":
        fields["eol"] = need().lower()
    elif key in ("crlf", "cr", "lf"):
        fields["eol"] = key
    elif key in ("keepalive", "keepalive-every"):
        fields["keepalive_every"] = int(need())
    elif key == "keepalive-before":
        fields["keepalive_before"] = int(need())
    elif key == "keepalive-text":
        fields["keepalive_text"] = need()
    elif key == "framing":
        fields["framing"] = need().lower()
    elif key in _FRAMINGS:
        fields["framing"] = key
    elif key == "chunk-size":
        fields["chunk_size"] = int(need())
    elif key == "drip":
        fields["drip"] = True
        if value:
            fields["drip_delay"] = float(value)
    elif key == "drip-headers":
        fields["drip"] = True
        fields["drip_headers"] = True
    elif key == "disconnect":
        fields["disconnect_after"] = int(need())
    elif key == "reset":
        fields["reset"] = True
    elif key == "stall":
        fields["stall_after"] = int(value) if value else 0
    elif key == "stall-before-head":
        fields["stall_before_head"] = True
    elif key == "stall-seconds":
        fields["stall_seconds"] = float(need())
    else:
        raise ValueError("unknown fault")


def transfer_encode(
    segments: Sequence[bytes], framing: Framing, chunk_size: int = 0
) -> tuple[list[tuple[str, str]], list[bytes]]:
    """Apply the transfer framing to a body.

    Args:
        segments: The body in write units (SSE frames, or one piece).
        framing: "content-length", "chunked" or "close".
        chunk_size: In chunked framing, bytes per chunk (0: one chunk per segment).

    Returns:
        The framing headers and the body pieces as they go on the wire.
    """
    if framing == "content-length":
        return [("Content-Length", str(sum(len(s) for s in segments)))], list(segments)
    if framing == "close":
        return [("Connection", "close")], list(segments)
    datas: list[bytes]
    if chunk_size > 0:
        whole = b"".join(segments)
        datas = [whole[i : i + chunk_size] for i in range(0, len(whole), chunk_size)]
    else:
        datas = [s for s in segments if s]
    pieces = [b"%x\r\n%s\r\n" % (len(d), d) for d in datas]
    pieces.append(b"0\r\n\r\n")
    return [("Transfer-Encoding", "chunked")], pieces


class Conn(Protocol):
    """The part of a (TLS) socket the writer uses."""

    def sendall(self, data: bytes, /) -> None: ...

    def recv(self, bufsize: int, /) -> bytes: ...

    def settimeout(self, value: float | None, /) -> None: ...

    def setsockopt(self, level: int, optname: int, value: int | bytes, /) -> None: ...


def hold(conn: Conn, seconds: float, stop: threading.Event) -> None:
    """Keep a connection open without sending until the peer closes, time runs out or `stop`.

    Whatever the peer sends meanwhile is read and dropped.

    Args:
        conn: The connection.
        seconds: Upper bound.
        stop: Set when the server shuts down.
    """
    deadline = time.monotonic() + seconds
    conn.settimeout(0.05)
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            if not conn.recv(4096):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def set_reset_on_close(conn: Conn) -> None:
    """Make the next close send a TCP RST instead of a FIN.

    Args:
        conn: The connection.
    """
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def send_reply(
    conn: Conn,
    head: bytes,
    pieces: Sequence[bytes],
    faults: Faults,
    stop: threading.Event,
    wire: bytearray,
    writes: list[int],
) -> Outcome:
    """Write a response head and body with the transport faults applied.

    Args:
        conn: The connection (blocking, with a send timeout already set).
        head: Status line and headers, ending with the blank line.
        pieces: Body pieces as framed for the wire.
        faults: The faults.
        stop: Set when the server shuts down (ends drips and stalls early).
        wire: Every byte actually written is appended here.
        writes: The size of each write is appended here.

    Returns:
        "complete" when everything was sent; "disconnected" or "stalled" when a fault cut the
        body (the caller closes the connection); "client-gone" when a write failed.
    """
    try:
        if faults.stall_before_head:
            hold(conn, faults.stall_seconds, stop)
            return "stalled"
        _write(conn, head, faults.drip and faults.drip_headers, faults.drip_delay, stop, wire,
               writes)
        budget: int | None = None
        for limit in (faults.disconnect_after, faults.stall_after):
            if limit is not None:
                budget = limit if budget is None else min(budget, limit)
        sent = 0
        for piece in pieces:
            if budget is not None and sent + len(piece) > budget:
                piece = piece[: budget - sent]
            _write(conn, piece, faults.drip, faults.drip_delay, stop, wire, writes)
            sent += len(piece)
            if budget is not None and sent >= budget:
                break
        if stop.is_set():
            return "client-gone"
        if faults.disconnect_after is not None and sent >= faults.disconnect_after:
            if faults.reset:
                set_reset_on_close(conn)
            return "disconnected"
        if faults.stall_after is not None:
            hold(conn, faults.stall_seconds, stop)
            return "stalled"
        return "complete"
    except OSError:
        return "client-gone"


def _write(
    conn: Conn,
    data: bytes,
    drip: bool,
    delay: float,
    stop: threading.Event,
    wire: bytearray,
    writes: list[int],
) -> None:
    """Send `data` whole or one byte per write; record what went out."""
    if not data:
        return
    if not drip:
        conn.sendall(data)
        wire += data
        writes.append(len(data))
        return
    for i in range(len(data)):
        if stop.is_set():
            return
        conn.sendall(data[i : i + 1])
        wire += data[i : i + 1]
        writes.append(1)
        if delay > 0:
            time.sleep(delay)
