"""Server-sent-event frames: building them from Python values and re-encoding recorded bodies.

A body is kept as a list of *segments*, each one SSE frame (its lines and the blank line that ends
it) in LF form. The writer re-encodes line endings and inserts keep-alive comments per segment, and
each segment is one write unit on the wire (one chunk in chunked framing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

LineEnding = Literal["lf", "crlf", "cr"]

EOL_BYTES: dict[str, bytes] = {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}


def dumps(value: object, *, sort_keys: bool = False) -> str:
    """One-line JSON the way OpenAI sends it: no spaces after separators, UTF-8 kept.

    Args:
        value: Any JSON-serialisable value.
        sort_keys: Sort object keys (Bedrock's "mantle" endpoint does, so `type` comes last).

    Returns:
        The JSON text, without line breaks.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)


def frame(lines: Sequence[str]) -> bytes:
    """Encode one frame in LF form: each line, then the blank line that dispatches the event.

    Args:
        lines: Field or comment lines without terminators (none may contain CR or LF).

    Returns:
        The frame bytes.

    Raises:
        ValueError: A line contains a line break.
    """
    for line in lines:
        if "\n" in line or "\r" in line:
            raise ValueError(f"SSE line contains a line break: {line[:60]!r}")
    return "".join(line + "\n" for line in lines).encode("utf-8") + b"\n"


def data_frame(
    data: str | Mapping[str, object],
    *,
    event: str | None = None,
    event_id: str | None = None,
    data_first: bool = False,
    sort_keys: bool = False,
    space: bool = True,
) -> bytes:
    """Encode one event: optional `event:` and `id:` lines and one `data:` line.

    Args:
        data: The payload; a mapping is serialised with :func:`dumps`.
        event: The `event:` field, or None for a data-only frame.
        event_id: The `id:` field, or None.
        data_first: Put `data:` before `event:` (Bedrock "mantle" order).
        sort_keys: Sort the JSON keys of a mapping payload.
        space: Put one space after each field colon (`data: x`); False sends `data:x`.

    Returns:
        The frame bytes in LF form.
    """
    payload = data if isinstance(data, str) else dumps(data, sort_keys=sort_keys)
    sep = ": " if space else ":"
    data_line = "data" + sep + payload
    head: list[str] = []
    if event is not None:
        head.append("event" + sep + event)
    if event_id is not None:
        head.append("id" + sep + event_id)
    return frame([data_line, *head] if data_first else [*head, data_line])


def comment_frame(text: str = "keep-alive") -> bytes:
    """Encode a comment frame (`: text` and a blank line), as servers send for keep-alive.

    Args:
        text: The comment text.

    Returns:
        The frame bytes in LF form.
    """
    return frame([": " + text])


def chat_stream(chunks: Iterable[Mapping[str, object]], *, done: bool = True) -> list[bytes]:
    """Frames of a Chat Completions stream: `data: <chunk>` per chunk, then `data: [DONE]`.

    Args:
        chunks: The `chat.completion.chunk` objects (or any payloads, e.g. an `error` object).
        done: End with `data: [DONE]`.

    Returns:
        One segment per frame.
    """
    out = [data_frame(chunk) for chunk in chunks]
    if done:
        out.append(data_frame("[DONE]"))
    return out


def responses_stream(
    events: Iterable[Mapping[str, object]],
    *,
    event_lines: bool = True,
    data_first: bool = False,
    sort_keys: bool = False,
    done: bool = False,
) -> list[bytes]:
    """Frames of a Responses stream: `event: <type>` and `data: <json>` per event.

    Args:
        events: The event objects; each must have a string `type`.
        event_lines: Send `event:` lines (OpenAI does; OpenRouter does not).
        data_first: Put `data:` before `event:`.
        sort_keys: Sort JSON keys so that `type` comes late.
        done: End with `data: [DONE]` (OpenRouter does; OpenAI does not).

    Returns:
        One segment per frame.

    Raises:
        ValueError: An event has no string `type`.
    """
    out: list[bytes] = []
    for ev in events:
        etype = ev.get("type")
        if not isinstance(etype, str):
            raise TypeError(f"Responses event without a string type: {dumps(ev)[:80]}")
        out.append(
            data_frame(
                ev,
                event=etype if event_lines else None,
                data_first=data_first,
                sort_keys=sort_keys,
            )
        )
    if done:
        out.append(data_frame("[DONE]"))
    return out


def split_frames(body: bytes) -> list[bytes]:
    """Cut an LF-form SSE body into frames at each blank line, keeping every byte.

    The pieces concatenate back to `body` exactly; a trailing piece without its blank line (an
    unterminated final event) is kept as the last piece.

    Args:
        body: The raw body.

    Returns:
        The frames in order.
    """
    out: list[bytes] = []
    start = 0
    while start < len(body):
        end = body.find(b"\n\n", start)
        if end < 0:
            out.append(body[start:])
            break
        out.append(body[start : end + 2])
        start = end + 2
    return out


def reencode(segment: bytes, eol: LineEnding) -> bytes:
    """Replace every LF in an LF-form segment by the chosen line ending.

    Args:
        segment: LF-only SSE bytes (JSON payloads escape their own line breaks, so every LF is a
            line terminator).
        eol: "lf", "crlf" or "cr".

    Returns:
        The re-encoded bytes.
    """
    return segment if eol == "lf" else segment.replace(b"\n", EOL_BYTES[eol])


def apply_sse_options(
    segments: Sequence[bytes],
    *,
    eol: LineEnding = "lf",
    keepalive_every: int = 0,
    keepalive_before: int = 0,
    keepalive_text: str = "keep-alive",
) -> list[bytes]:
    """Insert keep-alive comment frames and re-encode line endings.

    Args:
        segments: LF-form frames.
        eol: Line ending to send.
        keepalive_every: Insert a comment frame after every K frames (0: never).
        keepalive_before: Comment frames sent before the first frame.
        keepalive_text: Text of each comment.

    Returns:
        The segments to write, in order.
    """
    comment = comment_frame(keepalive_text)
    out = [comment] * keepalive_before
    for n, seg in enumerate(segments, start=1):
        out.append(seg)
        if keepalive_every > 0 and n % keepalive_every == 0 and n < len(segments):
            out.append(comment)
    return [reencode(seg, eol) for seg in out]
