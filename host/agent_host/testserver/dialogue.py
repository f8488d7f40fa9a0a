"""Scripted tool dialogues: the model's side of a tool loop, one reply per provider turn.

A test of the device's tool loop plays the model: the first turn calls a tool, the next one
(after the device answered with the result) calls another or gives the final answer. These
builders make such replies for either wire protocol from the same few arguments, as OpenAI
streams them (Chat Completions chunks, or Responses events with a usage-bearing
`response.completed`), and read back what the device advertised in a request body::

    script = Script([
        tool_call_reply("responses", "tool_search", {"query": "read a file"}, "call_1",
                        response_id="resp_1"),
        text_reply("responses", "Done.", response_id="resp_2"),
    ])

Each reply carries its API, so a :class:`Script` built from bare replies also checks the
request path (:func:`~agent_host.testserver.plans.turn_for`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import TestServerError
from .plans import Api, Reply
from .sse import chat_stream, dumps, responses_stream
from .synth import ResponsesEvents, chat_chunk, chat_usage

#: Tokens each scripted turn reports unless told otherwise: (input, output).
DEFAULT_USAGE = (10, 5)


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model makes.

    Attributes:
        name: The tool's name.
        arguments: The arguments: a mapping (sent as compact JSON) or the exact text to
            send (for malformed arguments).
        call_id: The call id the device must echo in its continuation.
    """

    name: str
    arguments: Mapping[str, object] | str
    call_id: str

    @property
    def arguments_text(self) -> str:
        """The arguments exactly as they go on the wire."""
        return self.arguments if isinstance(self.arguments, str) else dumps(self.arguments)


def _usage_tokens(usage: tuple[int, int] | None) -> tuple[int, int] | None:
    if usage is not None and (usage[0] < 0 or usage[1] < 0):
        raise TestServerError(f"token counts cannot be negative: {usage}")
    return usage


def _split(text: str, pieces: int) -> list[str]:
    """`text` in `pieces` nearly equal deltas (at least one, never empty unless `text` is)."""
    if pieces <= 1 or len(text) < 2:
        return [text]
    size = -(-len(text) // min(pieces, len(text)))
    return [text[i:i + size] for i in range(0, len(text), size)]


def tool_calls_reply(api: Api, calls: Sequence[ToolCall], *, response_id: str = "resp_tool",
                     usage: tuple[int, int] | None = DEFAULT_USAGE, pieces: int = 2,
                     label: str = "") -> Reply:
    """One provider turn that makes every call in `calls` (more than one: parallel calls).

    Args:
        api: "chat" or "responses".
        calls: The calls, in order (Chat indexes 0, 1, ...; Responses output items).
        response_id: The Responses response id (the device's next previous_response_id), or
            the Chat chunk id.
        usage: (input, output) tokens of the turn, or None to report none.
        pieces: How many deltas each call's arguments stream in.
        label: Name for the server's log (default: the tool names).

    Returns:
        The reply.

    Raises:
        TestServerError: No calls, or negative token counts.
    """
    if not calls:
        raise TestServerError("tool_calls_reply needs at least one call")
    usage = _usage_tokens(usage)
    label = label or "calls:" + ",".join(c.name for c in calls)
    if api == "responses":
        ev = ResponsesEvents(response_id).start()
        for call in calls:
            ev.function_call(call.name, _split(call.arguments_text, pieces), call_id=call.call_id)
        return Reply.sse(responses_stream(ev.finish(usage=usage)), api="responses", label=label)
    chunks: list[dict[str, object]] = []
    for index, call in enumerate(calls):
        opening = {"index": index, "id": call.call_id, "type": "function",
                   "function": {"name": call.name, "arguments": ""}}
        delta: dict[str, object] = {"tool_calls": [opening]}
        if index == 0:
            delta = {"role": "assistant", "content": None, **delta}
        chunks.append(chat_chunk(delta, chunk_id=response_id))
        for piece in _split(call.arguments_text, pieces):
            chunks.append(chat_chunk({"tool_calls": [
                {"index": index, "function": {"arguments": piece}}]}, chunk_id=response_id))
    chunks.append(chat_chunk({}, finish="tool_calls", chunk_id=response_id))
    if usage is not None:
        chunks.append(chat_chunk(choices=[], usage=chat_usage(*usage), chunk_id=response_id))
    return Reply.sse(chat_stream(chunks), api="chat", label=label)


def tool_call_reply(api: Api, name: str, arguments: Mapping[str, object] | str,
                    call_id: str = "call_1", *, response_id: str = "resp_tool",
                    usage: tuple[int, int] | None = DEFAULT_USAGE) -> Reply:
    """One provider turn that calls one tool.

    Args:
        api: "chat" or "responses".
        name: The tool's name.
        arguments: A mapping (sent as compact JSON) or the exact argument text.
        call_id: The call id.
        response_id: The Responses response id, or the Chat chunk id.
        usage: (input, output) tokens of the turn, or None.

    Returns:
        The reply.
    """
    return tool_calls_reply(api, [ToolCall(name, arguments, call_id)], response_id=response_id,
                            usage=usage)


def text_reply(api: Api, text: str, *, response_id: str = "resp_text",
               usage: tuple[int, int] | None = DEFAULT_USAGE, pieces: int = 2) -> Reply:
    """One provider turn that answers with text and calls nothing (the final answer).

    Args:
        api: "chat" or "responses".
        text: The answer (not empty: an empty turn is a different case).
        response_id: The Responses response id, or the Chat chunk id.
        usage: (input, output) tokens of the turn, or None.
        pieces: How many deltas the text streams in.

    Returns:
        The reply.

    Raises:
        TestServerError: Empty text, or negative token counts.
    """
    if not text:
        raise TestServerError("text_reply needs some text")
    usage = _usage_tokens(usage)
    if api == "responses":
        ev = ResponsesEvents(response_id).start().message(_split(text, pieces))
        return Reply.sse(responses_stream(ev.finish(usage=usage)), api="responses",
                         label="text")
    chunks = [chat_chunk({"role": "assistant", "content": ""}, chunk_id=response_id)]
    chunks += [chat_chunk({"content": p}, chunk_id=response_id) for p in _split(text, pieces)]
    chunks.append(chat_chunk({}, finish="stop", chunk_id=response_id))
    if usage is not None:
        chunks.append(chat_chunk(choices=[], usage=chat_usage(*usage), chunk_id=response_id))
    return Reply.sse(chat_stream(chunks), api="chat", label="text")


# -- reading request bodies ---------------------------------------------------------------


def _body_dict(body: object) -> dict[str, object]:
    if not isinstance(body, dict):
        raise TestServerError(f"request body is not a JSON object: {str(body)[:80]}")
    return body


def advertised_tools(body: object, api: Api) -> list[dict[str, object]] | None:
    """The tools a request body advertises, each as its function definition.

    Both protocols are read into the same shape, `{"name", "description", "parameters"}`
    (plus `"strict"` for Responses), so tests can compare turns of either protocol.

    Args:
        body: The parsed request body.
        api: Its protocol.

    Returns:
        The definitions in order, or None when the body has no "tools" member.

    Raises:
        TestServerError: The member is not an array of function tools of that protocol.
    """
    fields = _body_dict(body)
    if "tools" not in fields:
        return None
    tools = fields["tools"]
    if not isinstance(tools, list):
        raise TestServerError(f"tools is not an array: {tools!r}"[:120])
    out: list[dict[str, object]] = []
    for tool in tools:
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise TestServerError(f"not a function tool: {tool!r}"[:120])
        if api == "chat":
            fn = tool.get("function")
            if set(tool) != {"type", "function"} or not isinstance(fn, dict):
                raise TestServerError(f"not a Chat function tool: {tool!r}"[:120])
            out.append(dict(fn))
        else:
            if "function" in tool:
                raise TestServerError(f"a Chat-form tool in a Responses body: {tool!r}"[:120])
            out.append({k: v for k, v in tool.items() if k != "type"})
    return out


def advertised_names(body: object, api: Api) -> list[str] | None:
    """The names of the tools a request body advertises, in order (None: no "tools").

    Args:
        body: The parsed request body.
        api: Its protocol.

    Returns:
        The names, or None.
    """
    tools = advertised_tools(body, api)
    return None if tools is None else [str(t.get("name")) for t in tools]


def chat_exchange(call: ToolCall, result: str) -> list[dict[str, object]]:
    """The two Chat messages a device sends for one answered call in later turns.

    Args:
        call: The call the model made.
        result: The tool message's content (the result JSON text the device sent).

    Returns:
        `[assistant message with tool_calls, tool message]`.
    """
    return [
        {"role": "assistant", "tool_calls": [{"id": call.call_id, "type": "function",
                                              "function": {"name": call.name,
                                                           "arguments": call.arguments_text}}]},
        {"role": "tool", "tool_call_id": call.call_id, "content": result},
    ]


def function_call_output(body: object) -> tuple[str, object]:
    """The call id and the parsed output of a Responses continuation's only input item.

    Args:
        body: The parsed request body of a continuation turn.

    Returns:
        (call_id, output parsed as JSON).

    Raises:
        TestServerError: The input is not exactly one function_call_output with JSON output.
    """
    items = _body_dict(body).get("input")
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
        raise TestServerError(f"expected one input item, got {items!r}"[:160])
    item = items[0]
    if set(item) != {"type", "call_id", "output"} or item["type"] != "function_call_output":
        raise TestServerError(f"not a function_call_output item: {item!r}"[:160])
    try:
        output = json.loads(str(item["output"]))
    except ValueError as err:
        raise TestServerError(f"function_call_output is not JSON: {err}") from None
    return str(item["call_id"]), output
