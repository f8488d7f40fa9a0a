"""The recorded stream corpus: turning files into replies, and reading them plainly.

The corpus is package data, `recorded/` beside this module (`chat/`, `responses/` and INDEX.md,
which gives every file's source and licence); `$AGENT_OPENAI_FIXTURES` names another folder.

Replay rules (from the corpus INDEX.md):

* `.sse` is sent verbatim (it is the recorded body).
* `.jsonl` Chat: `data: <line>` and a blank line per line, then `data: [DONE]`.
* `.jsonl` Responses: `event: <type>`, `data: <line>` and a blank line per line, no `[DONE]`.
  A file that holds several streams (a `response.created` line starts each) becomes one reply
  per stream, to be served as a dialogue.
* `.json` is an error body, sent with the status in its name (`..._http400_...` is 400).

:func:`expected_outcome` is an independent plain reading of a file (it shares no code with the
server's framing) and is the oracle for replay tests: the text, tool calls, usage, finish and
errors a correct client must report.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from ..errors import TestServerError
from .faults import NO_FAULTS, Faults
from .plans import Api, Reply, Script, turn_for
from .sse import split_frames

Format = Literal["sse", "jsonl", "json"]

#: Environment variable that names another corpus folder instead of the packaged one.
FIXTURES_ENV = "AGENT_OPENAI_FIXTURES"
#: The packaged corpus: this folder of the package (package data, see pyproject.toml).
RECORDED = "recorded"

_FORMATS: dict[str, Format] = {".sse": "sse", ".jsonl": "jsonl", ".json": "json"}
_STATUS_IN_NAME = re.compile(r"http(\d{3})")

#: The openai SDK's exception class for each HTTP status (>= 500: InternalServerError).
SDK_ERROR_CLASSES: dict[int, str] = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


def sdk_error_class(status: int) -> str:
    """Name of the openai SDK exception raised for an HTTP error status.

    Args:
        status: The HTTP status (>= 400).

    Returns:
        E.g. "BadRequestError"; "InternalServerError" for 5xx; "APIStatusError" otherwise.
    """
    if status >= 500:
        return "InternalServerError"
    return SDK_ERROR_CLASSES.get(status, "APIStatusError")


def packaged_fixtures_dir() -> Path:
    """The corpus installed with this package: `agent_host/testserver/recorded/`.

    Returns:
        The directory (in a checkout: `host/agent_host/testserver/recorded/`).
    """
    return Path(str(resources.files(__package__ or "agent_host.testserver") / RECORDED))


def fixtures_dir() -> Path:
    """Where the recorded corpus is: `$AGENT_OPENAI_FIXTURES` when set (a folder laid out like
    the corpus: `chat/`, `responses/`), else the copy installed with this package
    (:func:`packaged_fixtures_dir`).

    Returns:
        The directory.

    Raises:
        TestServerError: The folder the environment names does not exist, or the packaged
            corpus is missing (an installation without its package data).
    """
    env = os.environ.get(FIXTURES_ENV)
    if env:
        path = Path(env)
        if not path.is_dir():
            raise TestServerError(
                f"{FIXTURES_ENV}={env}: no such directory (unset it to use the recorded "
                f"streams installed with agent_host, {packaged_fixtures_dir()})"
            )
        return path
    path = packaged_fixtures_dir()
    if not (path / "INDEX.md").is_file():
        raise TestServerError(
            f"the recorded streams are missing from {path} (agent_host installed without its "
            f"package data?); set {FIXTURES_ENV} to a copy of the corpus"
        )
    return path


def fixture_files(api: Api | None = None) -> list[Path]:
    """Every replayable file of the corpus, sorted.

    Args:
        api: Only this API's folder ("chat" or "responses"); None for both.

    Returns:
        The `.sse`, `.jsonl` and `.json` files.
    """
    root = fixtures_dir()
    folders = [api] if api else ["chat", "responses"]
    return sorted(p for f in folders for p in (root / f).iterdir() if p.suffix in _FORMATS)


def resolve_fixture(name: str | Path) -> Path:
    """A fixture path from an absolute/relative path or a name inside the corpus.

    Args:
        name: E.g. "chat/openai_gpt4o_text_usage.sse", or just the file name.

    Returns:
        The existing file.

    Raises:
        TestServerError: No such file.
    """
    path = Path(name)
    if path.is_file():
        return path
    root = fixtures_dir()
    for cand in (root / path, root / "chat" / path, root / "responses" / path):
        if cand.is_file():
            return cand
    raise TestServerError(f"no fixture {name} (looked in {root})")


def fixture_format(path: Path) -> Format:
    """The corpus format of a file, from its suffix.

    Args:
        path: The file.

    Returns:
        "sse", "jsonl" or "json".

    Raises:
        TestServerError: Unknown suffix.
    """
    try:
        return _FORMATS[path.suffix]
    except KeyError:
        raise TestServerError(f"{path.name}: not a fixture (.sse, .jsonl or .json)") from None


def fixture_api(path: Path) -> Api:
    """Which API a file belongs to: its folder (`chat/`, `responses/`), else its content.

    Args:
        path: The file.

    Returns:
        "chat" or "responses".
    """
    if path.parent.name in ("chat", "responses"):
        return "chat" if path.parent.name == "chat" else "responses"
    text = path.read_text(encoding="utf-8", errors="replace")
    return "chat" if "chat.completion.chunk" in text else "responses"


def fixture_status(path: Path) -> int:
    """HTTP status a file is served with: `httpNNN` in an error file's name, else 200.

    Args:
        path: The file.

    Returns:
        The status.

    Raises:
        TestServerError: A `.json` file without `httpNNN` in its name.
    """
    match = _STATUS_IN_NAME.search(path.name)
    if match:
        return int(match.group(1))
    if fixture_format(path) == "json":
        raise TestServerError(f"{path.name}: error body without httpNNN in its name")
    return 200


def _jsonl_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _split_responses_lines(lines: list[str]) -> list[list[str]]:
    """Cut concatenated Responses streams at each `response.created` event."""
    streams: list[list[str]] = []
    for line in lines:
        starts = json.loads(line).get("type") == "response.created"
        if not streams or (starts and streams[-1]):
            streams.append([])
        streams[-1].append(line)
    return streams


def fixture_replies(
    name: str | Path, faults: Faults = NO_FAULTS, *, api: Api | None = None
) -> list[Reply]:
    """The replies that replay a fixture file: one per recorded stream.

    Args:
        name: The file (see :func:`resolve_fixture`).
        faults: How to send each reply.
        api: Override the API (default: :func:`fixture_api`).

    Returns:
        One reply, or one per stream for a file of concatenated Responses streams.
    """
    path = resolve_fixture(name)
    fmt = fixture_format(path)
    which = api or fixture_api(path)
    label = path.name
    if fmt == "json":
        return [
            Reply.json(fixture_status(path), path.read_bytes(), faults=faults, api=which,
                       label=label)
        ]
    if fmt == "sse":
        segments = split_frames(path.read_bytes())
        return [Reply.sse(segments, faults=faults, api=which, label=label)]
    lines = _jsonl_lines(path)
    if which == "chat":
        return [Reply.sse(_chat_frames(lines), faults=faults, api=which, label=label)]
    streams = _split_responses_lines(lines)
    return [
        Reply.sse(_responses_frames(s), faults=faults, api=which,
                  label=label if len(streams) == 1 else f"{label}#{i + 1}")
        for i, s in enumerate(streams)
    ]


def _chat_frames(lines: list[str]) -> list[bytes]:
    """`data: <line>` frames with the line's bytes kept as recorded, then `data: [DONE]`."""
    return [f"data: {line}\n\n".encode() for line in lines] + [b"data: [DONE]\n\n"]


def _responses_frames(lines: list[str]) -> list[bytes]:
    """`event: <type>` + `data: <line>` frames, the line's bytes kept as recorded."""
    out = []
    for line in lines:
        etype = json.loads(line)["type"]
        out.append(f"event: {etype}\ndata: {line}\n\n".encode())
    return out


def fixture_reply(name: str | Path, faults: Faults = NO_FAULTS) -> Reply:
    """The single reply that replays a fixture file.

    Args:
        name: The file.
        faults: How to send it.

    Returns:
        The reply.

    Raises:
        TestServerError: The file holds several streams (use :func:`fixture_script`).
    """
    replies = fixture_replies(name, faults)
    if len(replies) != 1:
        raise TestServerError(f"{name} holds {len(replies)} streams: serve fixture_script()")
    return replies[0]


def fixture_script(name: str | Path, faults: Faults = NO_FAULTS, *, repeat_last: bool = False
                   ) -> Script:
    """A dialogue that serves each stream of a fixture file to successive requests.

    Args:
        name: The file.
        faults: How to send each reply.
        repeat_last: Keep serving the last stream after the script is used up.

    Returns:
        The script (turns check the request path of the file's API).
    """
    return Script([turn_for(r) for r in fixture_replies(name, faults)], repeat_last=repeat_last)


# -- the plain reader ---------------------------------------------------------------------


def read_sse(body: bytes) -> Iterator[tuple[str, str]]:
    """Plain SSE parsing (WHATWG rules): yields (event, data) per dispatched event.

    Lines end at CRLF, LF or CR; `:` lines are comments; one space after the colon is dropped;
    several `data:` lines join with LF; a final event without its blank line is dropped.

    Args:
        body: The raw body.

    Yields:
        (event type or "", data) pairs.
    """
    text = body.decode("utf-8")
    lines = re.split(r"\r\n|\r|\n", text)
    # The piece after the last terminator is an unterminated line: it cannot end an event.
    lines.pop()
    event = ""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)


def _payloads(body: bytes, fmt: Format) -> list[str]:
    if fmt == "jsonl":
        return [x for x in body.decode("utf-8").splitlines() if x.strip()]
    return [data for _, data in read_sse(body)]


def _empty_turn() -> dict[str, object]:
    return {
        "response_id": None,
        "text": "",
        "text_done": "",
        "refusal": "",
        "tool_calls": [],
        "usage": None,
        "reasoning_tokens": None,
        "finish": None,
        "incomplete_reason": None,
        "error": None,
        "done": False,
    }


def _error_fields(err: object) -> dict[str, object]:
    if not isinstance(err, dict):
        return {"message": str(err), "type": None, "code": None}
    return {"message": err.get("message"), "type": err.get("type"), "code": err.get("code")}


def _reasoning_tokens(usage: dict[str, object], details: str) -> object:
    """The reasoning tokens of a usage object (under Chat's `completion_tokens_details` or
    Responses' `output_tokens_details`), or None when it reports none."""
    inner = usage.get(details)
    return inner.get("reasoning_tokens") if isinstance(inner, dict) else None


def _read_chat(payloads: list[str]) -> dict[str, object]:
    turn = _empty_turn()
    text: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    for payload in payloads:
        if payload == "[DONE]":
            turn["done"] = True
            break
        obj = json.loads(payload)
        if obj.get("error"):
            turn["error"] = _error_fields(obj["error"])
            break
        if obj.get("id") and not turn["response_id"]:
            turn["response_id"] = obj["id"]
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str):
                text.append(content)
            elif isinstance(content, list):
                text += [p["text"] for p in content
                         if isinstance(p, dict) and p.get("type") == "text"]
            if isinstance(delta.get("refusal"), str):
                refusal.append(delta["refusal"])
            for pos, tc in enumerate(delta.get("tool_calls") or []):
                index = tc.get("index", pos)
                call = calls.setdefault(index, {"call_id": "", "name": "", "arguments": ""})
                fn = tc.get("function") or {}
                if tc.get("id") and not call["call_id"]:
                    call["call_id"] = tc["id"]
                if fn.get("name") and not call["name"]:
                    call["name"] = fn["name"]
                if isinstance(fn.get("arguments"), str):
                    call["arguments"] += fn["arguments"]
            if choice.get("finish_reason") is not None:
                turn["finish"] = choice["finish_reason"]
        usage = obj.get("usage")
        if isinstance(usage, dict):
            turn["usage"] = {
                "input_tokens": usage.get("prompt_tokens"),
                "output_tokens": usage.get("completion_tokens"),
                "total_tokens": usage.get("total_tokens"),
            }
            turn["reasoning_tokens"] = _reasoning_tokens(usage, "completion_tokens_details")
    turn["text"] = turn["text_done"] = "".join(text)
    turn["refusal"] = "".join(refusal)
    turn["tool_calls"] = [calls[i] for i in sorted(calls)]
    return turn


@dataclass
class _ResponsesTurn:
    """What a plain reading collects from one Responses stream."""

    turn: dict[str, object] = field(default_factory=_empty_turn)
    text: dict[object, str] = field(default_factory=dict)
    done_text: dict[object, str] = field(default_factory=dict)
    refusal: dict[object, str] = field(default_factory=dict)
    calls: dict[object, dict[str, str]] = field(default_factory=dict)

    def call(self, key: object) -> dict[str, str]:
        return self.calls.setdefault(key, {"call_id": "", "name": "", "arguments": ""})

    def close(self) -> dict[str, object]:
        self.turn["text"] = "".join(self.text.values())
        self.turn["text_done"] = "".join(self.done_text.get(k, v) for k, v in self.text.items())
        self.turn["refusal"] = "".join(self.refusal.values())
        self.turn["tool_calls"] = list(self.calls.values())
        return self.turn


def _read_responses(payloads: list[str]) -> list[dict[str, object]]:
    done: list[dict[str, object]] = []
    cur = _ResponsesTurn()
    for payload in payloads:
        turn = cur.turn
        if payload == "[DONE]":
            turn["done"] = True
            continue
        ev = json.loads(payload)
        etype = ev.get("type")
        if etype == "response.created" and (turn["response_id"] or turn["finish"]):
            done.append(cur.close())
            cur = _ResponsesTurn()
            turn = cur.turn
        part = (ev.get("output_index", ev.get("item_id")), ev.get("content_index", 0))
        call_key = ev.get("output_index", ev.get("item_id"))
        if etype in ("response.created", "response.in_progress", "response.queued"):
            rid = (ev.get("response") or {}).get("id")
            if rid and not turn["response_id"]:
                turn["response_id"] = rid
        elif etype == "response.output_text.delta":
            cur.text[part] = cur.text.get(part, "") + ev.get("delta", "")
        elif etype == "response.output_text.done":
            cur.done_text[part] = ev.get("text", "")
            if not cur.text.get(part):
                cur.text[part] = cur.done_text[part]
        elif etype == "response.refusal.delta":
            cur.refusal[part] = cur.refusal.get(part, "") + ev.get("delta", "")
        elif etype == "response.refusal.done":
            if not cur.refusal.get(part):
                cur.refusal[part] = ev.get("refusal", "")
        elif etype in ("response.output_item.added", "response.output_item.done"):
            item = ev.get("item") or {}
            if item.get("type") == "function_call":
                call = cur.call(ev.get("output_index", item.get("id") or item.get("call_id")))
                call["call_id"] = call["call_id"] or item.get("call_id", "")
                call["name"] = call["name"] or item.get("name", "")
                if etype.endswith(".done") and isinstance(item.get("arguments"), str):
                    call["arguments"] = item["arguments"]
        elif etype == "response.function_call_arguments.delta":
            cur.call(call_key)["arguments"] += ev.get("delta", "")
        elif etype == "response.function_call_arguments.done":
            if isinstance(ev.get("arguments"), str):
                cur.call(call_key)["arguments"] = ev["arguments"]
        elif etype in ("response.completed", "response.incomplete", "response.failed"):
            _read_terminal(turn, etype, ev.get("response") or {})
        elif etype == "error":
            nested = ev.get("error")
            turn["error"] = _error_fields(nested) if isinstance(nested, dict) else {
                "message": ev.get("message"), "type": None, "code": ev.get("code")}
    done.append(cur.close())
    return done


def _read_terminal(turn: dict[str, object], etype: str, resp: dict[str, object]) -> None:
    turn["finish"] = resp.get("status") or etype.rpartition(".")[2]
    if resp.get("id") and not turn["response_id"]:
        turn["response_id"] = resp["id"]
    usage = resp.get("usage")
    if isinstance(usage, dict):
        turn["usage"] = {
            "input_tokens": usage.get("input_tokens"),
            "output_tokens": usage.get("output_tokens"),
            "total_tokens": usage.get("total_tokens"),
        }
        turn["reasoning_tokens"] = _reasoning_tokens(usage, "output_tokens_details")
    details = resp.get("incomplete_details")
    if isinstance(details, dict):
        turn["incomplete_reason"] = details.get("reason")
    if resp.get("error") and not turn["error"]:
        turn["error"] = _error_fields(resp["error"])


def outcome_of_body(
    api: Api, body: bytes, fmt: Format, status: int = 200, *, name: str = ""
) -> dict[str, object]:
    """Plain reading of a response body (see :func:`expected_outcome`).

    Args:
        api: "chat" or "responses".
        body: The body: an SSE stream (`sse`), one JSON payload per line (`jsonl`) or an
            error body (`json`).
        fmt: Which of the three.
        status: The HTTP status it is served with.
        name: A name to put in the result.

    Returns:
        The outcome dict.
    """
    out: dict[str, object] = {
        "file": name,
        "api": api,
        "format": fmt,
        "status": status,
        "turns": [],
        "http_error": None,
        "sdk_exception": None,
    }
    if status >= 400 or fmt == "json":
        parsed = json.loads(body.decode("utf-8"))
        err = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        out["http_error"] = _error_fields(err)
        out["sdk_exception"] = sdk_error_class(status)
        return out
    payloads = _payloads(body, fmt)
    out["turns"] = [_read_chat(payloads)] if api == "chat" else _read_responses(payloads)
    return out


def expected_outcome(path: str | Path) -> dict[str, object]:
    """What a correct client reports for a fixture file, from a plain reading of it.

    Args:
        path: The file (see :func:`resolve_fixture`).

    Returns:
        A dict with:

        * `file`, `api` ("chat"/"responses"), `format` ("sse"/"jsonl"/"json"), `status`;
        * `http_error`: for error bodies, `{"message", "type", "code"}` (from `error`, or the
          whole body), else None; `sdk_exception`: the openai SDK's exception class name for
          that status ("BadRequestError", "RateLimitError", ...), else None;
        * `turns`: one dict per stream (several for a file of concatenated streams), each with
          `response_id` (Responses id, or the first non-empty Chat `id`), `text` (visible
          text: Chat `delta.content` strings and `text` parts of content arrays, choice 0 only;
          Responses `output_text` deltas, or the `.done` text of a part with no delta),
          `text_done` (Responses: each part's `output_text.done` text where there is one, which
          can be longer than its deltas in the vercel recordings; Chat: same as `text`),
          `refusal`, `tool_calls` (`[{"call_id", "name", "arguments"}]` in index order; an empty
          id or name never overwrites a real one; Responses arguments from `output_item.done`
          or `.done` over the deltas), `usage` (`{"input_tokens", "output_tokens",
          "total_tokens"}` or None; Chat's prompt/completion tokens mapped),
          `reasoning_tokens` (Chat `completion_tokens_details.reasoning_tokens`, Responses
          `output_tokens_details.reasoning_tokens`, or None), `finish` (Chat
          `finish_reason`; Responses terminal status "completed"/"incomplete"/"failed"; None
          when absent), `incomplete_reason`, `error` (`{"message", "type", "code"}` from an
          in-stream error: a Chat payload with `error` ends the reading, as the SDK does; a
          Responses `error` event, nested or flat, or `response.failed`'s error) and `done`
          (a terminated `data: [DONE]` was seen).
    """
    file = resolve_fixture(path)
    fmt = fixture_format(file)
    return outcome_of_body(
        fixture_api(file), file.read_bytes(), fmt, fixture_status(file), name=file.name
    )
