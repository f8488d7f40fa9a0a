"""Dialogue scripts as JSON files, for serving by hand (`--script FILE`).

Format::

    {
      "repeat_last": false,
      "faults": ["eol=crlf"],
      "turns": [
        {"fixture": "responses/openai_gpt4o_function_call_wire.sse",
         "expect": {"path": "/v1/responses", "json": {"model": "gpt-4o"},
                    "headers": {"Authorization": "Bearer sk-test"}, "absent": ["max_tokens"]}},
        {"fixture": "responses/openai_gpt4o_after_function_call_output_wire.sse",
         "faults": ["drip=0.001"]},
        {"synth": "http503_retry_after"},
        {"status": 429, "json": {"error": {"message": "slow down"}},
         "headers": {"Retry-After": "1"}},
        {"chat_chunks": [{"choices": [{"index": 0, "delta": {"content": "Hi"}}]}], "done": true},
        {"responses_events": [{"type": "response.created", "response": {"id": "resp_1"}}]}
      ]
    }

Each turn gives exactly one of `fixture` (a path relative to the script file, or a name in the
corpus; a file of several streams becomes several turns), `synth` (a name from
:data:`agent_host.testserver.synth.SYNTHESIZED`), `json` (with `status`, default 200),
`chat_chunks` (with `done`, default true) or `responses_events` (with `done`, default false).
`faults` (a list of `--fault` strings) at the top applies to every turn; a turn's own `faults`
are added on top. `headers` adds response headers; `expect` adds request checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import TestServerError
from .faults import Faults
from .fixtures import fixture_replies, resolve_fixture
from .plans import (
    Expectation,
    Reply,
    Script,
    Turn,
    expect_header,
    expect_json,
    expect_no_key,
    expect_path,
    turn_for,
)
from .sse import chat_stream, responses_stream
from .synth import synth_reply

_SOURCES = ("fixture", "synth", "json", "chat_chunks", "responses_events")
_TURN_KEYS = set(_SOURCES) | {"status", "done", "faults", "headers", "expect"}
_EXPECT_KEYS = {"path", "json", "headers", "absent"}


def load_script(path: Path, extra_faults: Sequence[str] = ()) -> Script:
    """Read a script file.

    Args:
        path: The JSON file.
        extra_faults: `--fault` strings applied to every turn, after the file's own.

    Returns:
        The script.

    Raises:
        TestServerError: The file cannot be read or does not follow the format.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise TestServerError(f"cannot read script {path}: {err}") from None
    return script_from_data(data, path.parent, extra_faults)


def script_from_data(data: object, base: Path, extra_faults: Sequence[str] = ()) -> Script:
    """Build a script from parsed JSON (see the module text for the format).

    Args:
        data: The parsed document.
        base: Folder that relative fixture paths start from.
        extra_faults: `--fault` strings applied to every turn, last.

    Returns:
        The script.

    Raises:
        TestServerError: The document does not follow the format.
    """
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise TestServerError("script: expected an object with a 'turns' list")
    unknown = set(data) - {"turns", "faults", "repeat_last"}
    if unknown:
        raise TestServerError(f"script: unknown keys {sorted(unknown)}")
    common = _strings(data.get("faults", []), "faults")
    turns: list[Turn] = []
    for n, item in enumerate(data["turns"]):
        turns += _turns(item, n, base, [*common, *extra_faults])
    return Script(turns, repeat_last=bool(data.get("repeat_last", False)))


def _strings(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TestServerError(f"script: {what} must be a list of strings")
    return list(value)


def _turns(item: object, n: int, base: Path, common: list[str]) -> list[Turn]:
    if not isinstance(item, dict):
        raise TestServerError(f"script turn {n}: expected an object")
    unknown = set(item) - _TURN_KEYS
    sources = [k for k in _SOURCES if k in item]
    if unknown or len(sources) != 1:
        raise TestServerError(
            f"script turn {n}: needs exactly one of {list(_SOURCES)}"
            + (f"; unknown keys {sorted(unknown)}" if unknown else "")
        )
    faults = Faults.parse([*common, *_strings(item.get("faults", []), "faults")])
    replies = _replies(item, sources[0], base, faults, n)
    headers = item.get("headers", {})
    if not isinstance(headers, dict):
        raise TestServerError(f"script turn {n}: headers must be an object")
    checks = _expectations(item.get("expect", {}), n)
    return [
        turn_for(r.with_headers(*((str(k), str(v)) for k, v in headers.items())), *checks)
        for r in replies
    ]


def _replies(item: Mapping[str, object], source: str, base: Path, faults: Faults, n: int
             ) -> list[Reply]:
    value = item[source]
    if source == "fixture":
        if not isinstance(value, str):
            raise TestServerError(f"script turn {n}: fixture must be a string")
        local = base / value
        return fixture_replies(local if local.is_file() else resolve_fixture(value), faults)
    if source == "synth":
        if not isinstance(value, str):
            raise TestServerError(f"script turn {n}: synth must be a string")
        return [synth_reply(value, faults)]
    status = item.get("status", 200)
    if not isinstance(status, int):
        raise TestServerError(f"script turn {n}: status must be an integer")
    if source == "json":
        if not isinstance(value, dict):
            raise TestServerError(f"script turn {n}: json must be an object")
        return [Reply.json(status, value, faults=faults, label=f"turn {n}")]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TestServerError(f"script turn {n}: {source} must be a list of objects")
    if source == "chat_chunks":
        frames = chat_stream(value, done=bool(item.get("done", True)))
        return [Reply.sse(frames, status=status, faults=faults, api="chat", label=f"turn {n}")]
    frames = responses_stream(value, done=bool(item.get("done", False)))
    return [Reply.sse(frames, status=status, faults=faults, api="responses", label=f"turn {n}")]


def _expectations(spec: object, n: int) -> list[Expectation]:
    if not isinstance(spec, dict) or set(spec) - _EXPECT_KEYS:
        raise TestServerError(f"script turn {n}: expect must be an object with keys from "
                              f"{sorted(_EXPECT_KEYS)}")
    out: list[Expectation] = []
    if "path" in spec:
        out.append(expect_path(str(spec["path"])))
    if "json" in spec:
        if not isinstance(spec["json"], dict):
            raise TestServerError(f"script turn {n}: expect.json must be an object")
        out.append(expect_json(spec["json"]))
    if "headers" in spec:
        if not isinstance(spec["headers"], dict):
            raise TestServerError(f"script turn {n}: expect.headers must be an object")
        out += [expect_header(str(k), None if v is None else str(v))
                for k, v in spec["headers"].items()]
    if "absent" in spec:
        out.append(expect_no_key(*_strings(spec["absent"], "expect.absent")))
    return out
