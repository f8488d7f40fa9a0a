"""Check request bodies against the `openai` SDK's own request types.

The SDK describes request bodies as TypedDicts (`ResponseCreateParamsStreaming`,
`CompletionCreateParamsStreaming`, ...). A body is checked twice:

1. with pydantic's `TypeAdapter` in strict mode (pydantic is a dependency of the SDK), which is
   how the SDK's own models judge values (no `"no"` for a bool, no `"1"` for an int);
2. by a walk over the same type hints that also rejects keys the types do not name, at every
   level (pydantic ignores unknown TypedDict keys), and finds the right member of each union.

The SDK's Responses type leaves `model` and `input` optional (a stored prompt can supply them);
a device always sends both, so they are required here by default.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from collections.abc import Iterator, Sequence
from typing import Any, Literal, get_args, get_origin

from ..errors import RequestInvalidError
from .plans import API_PATHS, Api

#: Keys required beyond what the SDK's types require, per API.
EXTRA_REQUIRED: dict[str, tuple[str, ...]] = {"responses": ("model", "input"), "chat": ()}

_LIST_ORIGINS = {
    list,
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
}
_DICT_ORIGINS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}
_MAX_UNION_DETAIL = 3
_MAX_PYDANTIC_LINES = 8


def sdk_request_type(api: Api, stream: bool = True) -> Any:
    """The SDK's TypedDict for a request body.

    Args:
        api: "chat" or "responses".
        stream: The streaming variant (else the non-streaming one).

    Returns:
        The TypedDict class.

    Raises:
        RequestInvalidError: The openai package is not installed.
    """
    try:
        if api == "chat":
            from openai.types.chat import completion_create_params as chat

            return chat.CompletionCreateParamsStreaming if stream else (
                chat.CompletionCreateParamsNonStreaming
            )
        from openai.types.responses import response_create_params as resp

        return resp.ResponseCreateParamsStreaming if stream else (
            resp.ResponseCreateParamsNonStreaming
        )
    except ImportError:  # pragma: no cover - depends on the environment
        raise RequestInvalidError(
            "request validation needs the openai package: pip install 'zephyr-agent-host[test]'"
        ) from None


def api_for_path(path: str) -> Api | None:
    """Which API a request path belongs to.

    Args:
        path: Request path (query allowed).

    Returns:
        "chat", "responses" or None.
    """
    bare = path.partition("?")[0].rstrip("/")
    for api, suffix in API_PATHS.items():
        if bare.endswith(suffix):
            return typing.cast(Api, api)
    return None


def request_problems(
    body: object, api: Api, *, required: Sequence[str] | None = None
) -> list[str]:
    """Everything wrong with a request body, judged by the SDK's types.

    Args:
        body: The parsed JSON body.
        api: "chat" or "responses".
        required: Top-level keys that must be present beyond the SDK's own required keys
            (default: :data:`EXTRA_REQUIRED` of the API).

    Returns:
        One line per problem; empty when the body is valid.
    """
    if not isinstance(body, dict):
        return [f"body: expected a JSON object, got {_kind(body)}"]
    stream = body.get("stream") is True
    td = sdk_request_type(api, stream)
    problems = [
        f"body.{key}: missing (required by the device contract)"
        for key in (EXTRA_REQUIRED[api] if required is None else required)
        if key not in body
    ]
    walked = _walk(body, td, "body")
    strict = _pydantic_problems(td, body)
    problems += walked
    if strict and walked:
        problems.append(
            f"pydantic (strict) also rejects the body: {len(strict)} error(s), first: {strict[0]}"
        )
    elif strict:
        problems += [f"{p} (pydantic strict)" for p in strict[:_MAX_PYDANTIC_LINES]]
        if len(strict) > _MAX_PYDANTIC_LINES:
            problems.append(f"... {len(strict)} pydantic errors in all")
    return problems


def check_request(body: object, api: Api, *, required: Sequence[str] | None = None) -> None:
    """Raise unless a request body is valid for the SDK's types.

    Args:
        body: The parsed JSON body.
        api: "chat" or "responses".
        required: See :func:`request_problems`.

    Raises:
        RequestInvalidError: With every problem, one per line.
    """
    problems = request_problems(body, api, required=required)
    if problems:
        raise RequestInvalidError(f"{api} request body is invalid:\n  " + "\n  ".join(problems))


def check_responses_request(body: object) -> None:
    """Check a Responses request body (see :func:`check_request`).

    Args:
        body: The parsed JSON body.
    """
    check_request(body, "responses")


def check_chat_request(body: object) -> None:
    """Check a Chat Completions request body (see :func:`check_request`).

    Args:
        body: The parsed JSON body.
    """
    check_request(body, "chat")


def _te() -> Any:
    """typing_extensions (an openai dependency), imported only when validating."""
    import typing_extensions

    return typing_extensions


# -- pydantic ------------------------------------------------------------------------------


@functools.cache
def _adapter(td: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(td)


def _pydantic_problems(td: Any, body: dict[str, object]) -> list[str]:
    """Strict pydantic validation; each error as "body.<loc>: <message>"."""
    from pydantic import ValidationError

    try:
        validated = _adapter(td).validate_python(body, strict=True)
    except ValidationError as err:
        return _pydantic_lines(err, "body")
    # Iterable[...] fields validate lazily: draining them runs their validators.
    return _drain(validated, "body")


def _pydantic_lines(err: Any, where: str) -> list[str]:
    return [
        f"{where}." + ".".join(str(part) for part in e["loc"]) + f": {e['msg']}"
        for e in err.errors()
    ]


def _drain(value: object, where: str) -> list[str]:
    from pydantic import ValidationError

    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _drain(item, f"{where}.{key}")]
    if isinstance(value, (list, tuple)):
        return [p for i, item in enumerate(value) for p in _drain(item, f"{where}.{i}")]
    if isinstance(value, Iterator):
        out: list[str] = []
        try:
            items = list(value)
        except ValidationError as err:
            return _pydantic_lines(err, where)
        for i, item in enumerate(items):
            out += _drain(item, f"{where}.{i}")
        return out
    return []


# -- the walk -----------------------------------------------------------------------------


@functools.cache
def _fields(td: Any) -> tuple[dict[str, Any], frozenset[str]]:
    """(key -> type without Required/NotRequired, required keys) of a TypedDict."""
    hints = typing.get_type_hints(td, include_extras=True)
    inherited: dict[str, bool] = {}
    for base in getattr(td, "__orig_bases__", ()):
        if _te().is_typeddict(base):
            base_types, base_required = _fields(base)
            for key in base_types:
                inherited[key] = key in base_required
    types_out: dict[str, Any] = {}
    required: set[str] = set()
    total = bool(getattr(td, "__total__", True))
    for key, hint in hints.items():
        wrapper = get_origin(hint)
        if wrapper is typing.Annotated:
            hint = get_args(hint)[0]
            wrapper = get_origin(hint)
        if wrapper is _te().Required:
            is_required = True
            hint = get_args(hint)[0]
        elif wrapper is _te().NotRequired:
            is_required = False
            hint = get_args(hint)[0]
        elif key in inherited:
            is_required = inherited[key]
        else:
            is_required = total
        types_out[key] = hint
        if is_required:
            required.add(key)
    return types_out, frozenset(required)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _walk(value: object, tp: Any, where: str) -> list[str]:
    """Problems of `value` against type `tp` (empty list: it fits)."""
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Annotated or origin in (_te().Required, _te().NotRequired):
        return _walk(value, args[0], where)
    if tp is Any or tp is object:
        return []
    if tp is None or tp is type(None):
        return [] if value is None else [f"{where}: expected null, got {_kind(value)}"]
    if origin is typing.Union or origin is types.UnionType:
        return _walk_union(value, args, where)
    if origin is Literal or origin is _te().Literal:
        if any(value == a and type(value) is type(a) for a in args):
            return []
        shown = ", ".join(repr(a) for a in args[:8]) + (", ..." if len(args) > 8 else "")
        return [f"{where}: {value!r} is not one of {shown}"]
    if _te().is_typeddict(tp):
        return _walk_typeddict(value, tp, where)
    if origin in _LIST_ORIGINS or tp in (list, collections.abc.Iterable):
        if not isinstance(value, list):
            return [f"{where}: expected an array, got {_kind(value)}"]
        item_tp = args[0] if args else Any
        out: list[str] = []
        for i, item in enumerate(value):
            out += _walk(item, item_tp, f"{where}[{i}]")
        return out
    if origin in _DICT_ORIGINS or tp in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {_kind(value)}"]
        val_tp = args[1] if len(args) == 2 else Any
        out = []
        for key, item in value.items():
            out += _walk(item, val_tp, f"{where}.{key}")
        return out
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: expected a boolean, got {_kind(value)}"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer, got {_kind(value)}"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected a number, got {_kind(value)}"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{where}: expected a string, got {_kind(value)}"]
    return [f"{where}: type {tp!r} cannot be checked on JSON ({_kind(value)} given)"]


def _walk_typeddict(value: object, td: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected an object ({td.__name__}), got {_kind(value)}"]
    fields, required = _fields(td)
    out = [f"{where}.{key}: missing (required by {td.__name__})"
           for key in sorted(required) if key not in value]
    for key, item in value.items():
        if key not in fields:
            out.append(f"{where}.{key}: unknown key (not in {td.__name__})")
        else:
            out += _walk(item, fields[key], f"{where}.{key}")
    return out


def _walk_union(value: object, members: tuple[Any, ...], where: str) -> list[str]:
    results: list[tuple[int, list[str], Any]] = []
    for member in members:
        problems = _walk(value, member, where)
        if not problems:
            return []
        results.append((_rank(value, member, problems), problems, member))
    results.sort(key=lambda r: (r[0], len(r[1])))
    best_rank, best, member = results[0]
    name = getattr(member, "__name__", repr(member))
    if len(results) > 1 and best_rank == 0:
        best = [p if name in p else f"{p} (closest type: {name})" for p in best]
    if len(best) > _MAX_UNION_DETAIL:
        best = best[:_MAX_UNION_DETAIL] + [f"{where}: ... ({len(best)} problems in all)"]
    return best


def _rank(value: object, member: Any, problems: list[str]) -> int:
    """How well a union member suits a value, for choosing which member's problems to show.

    0: an object whose `type`/`role` literal matches the member's; 1: the JSON kind fits
    (object, array, string, ...); 2: the kind does not fit.
    """
    if isinstance(value, dict) and _te().is_typeddict(member):
        fields, _ = _fields(member)
        for tag in ("type", "role"):
            if tag in value and tag in fields and get_origin(fields[tag]) is Literal:
                return 0 if value[tag] in get_args(fields[tag]) else 1
        return 1
    return 1 if _kind_fits(value, member) else 2


def _kind_fits(value: object, tp: Any) -> bool:
    """Whether a value has the JSON kind a type expects (ignoring what is inside)."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _kind_fits(value, get_args(tp)[0])
    if isinstance(value, list):
        return origin in _LIST_ORIGINS or tp in (list, collections.abc.Iterable)
    if isinstance(value, dict):
        return bool(_te().is_typeddict(tp)) or origin in _DICT_ORIGINS or tp in (
            dict, collections.abc.Mapping)
    if isinstance(value, str):
        return tp is str or origin is Literal
    return True
