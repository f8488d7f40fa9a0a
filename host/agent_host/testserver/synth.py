"""Synthesized replies for the deviations that the corpus has no recording of.

INDEX.md's coverage notes and OPENAI_PROTOCOL.md describe server behaviour that no file of
the recorded corpus (`recorded/`) shows; each is built here from Python dicts, following the
described shape. They are *not* recordings. Line endings (CRLF, CR) are not listed here: they
are a fault (:attr:`Faults.eol`) that applies to any reply.

Use :data:`SYNTHESIZED` (name -> :class:`Synth`) or :func:`synth_reply`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..errors import TestServerError
from .faults import NO_FAULTS, Faults
from .fixtures import Format, outcome_of_body
from .plans import Api, Reply
from .sse import chat_stream, comment_frame, responses_stream

_MODEL = "gpt-test-synth"
_CREATED = 1760000000


# -- Chat Completions chunks --------------------------------------------------------------


def chat_chunk(
    delta: Mapping[str, object] | None = None,
    *,
    finish: str | None = None,
    index: int = 0,
    chunk_id: str = "chatcmpl-synth0001",
    usage: Mapping[str, object] | None = None,
    choices: Sequence[Mapping[str, object]] | None = None,
    created: int = _CREATED,
    model: str = _MODEL,
) -> dict[str, object]:
    """A `chat.completion.chunk` object.

    Args:
        delta: The delta of the single choice (ignored when `choices` is given).
        finish: Its finish_reason.
        index: Its index.
        chunk_id: The chunk `id`.
        usage: Usage object; the chunk has `usage` only when given.
        choices: Explicit choices (e.g. `[]` for a usage chunk).
        created: The `created` time.
        model: The model name.

    Returns:
        The chunk.
    """
    chunk: dict[str, object] = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": list(choices) if choices is not None else [
            {"index": index, "delta": dict(delta or {}), "logprobs": None, "finish_reason": finish}
        ],
    }
    if usage is not None:
        chunk["usage"] = dict(usage)
    return chunk


def chat_usage(prompt: int, completion: int) -> dict[str, int]:
    """A Chat usage object.

    Args:
        prompt: Prompt tokens.
        completion: Completion tokens.

    Returns:
        `{"prompt_tokens", "completion_tokens", "total_tokens"}`.
    """
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _chat_text_chunks(pieces: Sequence[str]) -> list[dict[str, object]]:
    first = chat_chunk({"role": "assistant", "content": ""})
    return [first] + [chat_chunk({"content": p}) for p in pieces]


# -- Responses events ---------------------------------------------------------------------


class ResponsesEvents:
    """Builds the events of one Responses stream in OpenAI's order, numbering them.

    Args:
        response_id: The response id.
        sequence: Add `sequence_number` to each event.
    """

    def __init__(self, response_id: str = "resp_synth0001", *, sequence: bool = True) -> None:
        self.response_id = response_id
        self.sequence = sequence
        self.events: list[dict[str, object]] = []
        self.output: list[dict[str, object]] = []

    def add(self, etype: str, **fields: object) -> dict[str, object]:
        """Append one event.

        Args:
            etype: Its `type`.
            **fields: Its other fields.

        Returns:
            The event.
        """
        ev: dict[str, object] = {"type": etype, **fields}
        if self.sequence:
            ev["sequence_number"] = len(self.events)
        self.events.append(ev)
        return ev

    def response(self, status: str, **extra: object) -> dict[str, object]:
        """The `response` object of lifecycle events.

        Args:
            status: Its status.
            **extra: More fields (usage, error, incomplete_details).

        Returns:
            The object.
        """
        out: list[dict[str, object]] = list(self.output) if status != "in_progress" else []
        return {"id": self.response_id, "object": "response", "created_at": _CREATED,
                "status": status, "model": _MODEL, "output": out, "parallel_tool_calls": False,
                "tools": [], "error": None, "incomplete_details": None, "usage": None, **extra}

    def start(self) -> ResponsesEvents:
        """Add `response.created` and `response.in_progress`.

        Returns:
            self.
        """
        self.add("response.created", response=self.response("in_progress"))
        self.add("response.in_progress", response=self.response("in_progress"))
        return self

    def message(self, pieces: Sequence[str], *, item_ids: Iterator[str] | None = None
                ) -> ResponsesEvents:
        """Add a message item with one output_text part streamed in `pieces`.

        Args:
            pieces: The text deltas.
            item_ids: Where to take the `item_id` of each event from (default: one fixed id);
                GitHub Copilot changes it on every event.

        Returns:
            self.
        """
        index = len(self.output)
        fixed = f"msg_synth{index:04d}"

        def iid() -> str:
            return next(item_ids) if item_ids is not None else fixed

        text = "".join(pieces)
        part: dict[str, object] = {"type": "output_text", "text": "", "annotations": [],
                                   "logprobs": []}
        item: dict[str, object] = {"id": fixed, "type": "message", "status": "in_progress", "role": "assistant",
                "content": []}
        self.add("response.output_item.added", output_index=index, item=item)
        self.add("response.content_part.added", item_id=iid(), output_index=index,
                 content_index=0, part=part)
        for piece in pieces:
            self.add("response.output_text.delta", item_id=iid(), output_index=index,
                     content_index=0, delta=piece, logprobs=[])
        self.add("response.output_text.done", item_id=iid(), output_index=index,
                 content_index=0, text=text, logprobs=[])
        done_part = dict(part, text=text)
        self.add("response.content_part.done", item_id=iid(), output_index=index,
                 content_index=0, part=done_part)
        done_item = dict(item, status="completed", content=[done_part])
        self.output.append(done_item)
        self.add("response.output_item.done", output_index=index, item=done_item)
        return self

    def function_call(self, name: str, pieces: Sequence[str], *, call_id: str | None = None,
                      item_ids: Iterator[str] | None = None) -> ResponsesEvents:
        """Add a function_call item whose arguments stream in `pieces`.

        Args:
            name: Function name.
            pieces: Argument deltas.
            call_id: The call id (default derived from the output index).
            item_ids: As for :meth:`message`.

        Returns:
            self.
        """
        index = len(self.output)
        fixed = f"fc_synth{index:04d}"
        cid = call_id or f"call_synth{index:04d}"

        def iid() -> str:
            return next(item_ids) if item_ids is not None else fixed

        args = "".join(pieces)
        item: dict[str, object] = {"id": fixed, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": cid, "name": name}
        self.add("response.output_item.added", output_index=index, item=item)
        for piece in pieces:
            self.add("response.function_call_arguments.delta", item_id=iid(),
                     output_index=index, delta=piece)
        self.add("response.function_call_arguments.done", item_id=iid(), output_index=index,
                 arguments=args)
        done_item = dict(item, status="completed", arguments=args)
        self.output.append(done_item)
        self.add("response.output_item.done", output_index=index, item=done_item)
        return self

    def finish(self, status: str = "completed", *, usage: tuple[int, int] | None = (12, 7),
               **extra: object) -> list[dict[str, object]]:
        """Add the terminal event (`response.<status>`).

        Args:
            status: "completed", "incomplete" or "failed".
            usage: (input, output) tokens, or None for `usage: null`.
            **extra: More fields of the response object.

        Returns:
            All events.
        """
        use = None if usage is None else {
            "input_tokens": usage[0], "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage[1], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage[0] + usage[1]}
        self.add(f"response.{status}", response=self.response(status, usage=use, **extra))
        return self.events


# -- the catalog --------------------------------------------------------------------------


@dataclass(frozen=True)
class Synth:
    """One synthesized reply.

    Attributes:
        name: Catalog name.
        api: The API it belongs to, or None for an HTTP error that either API may get.
        description: What deviation it shows and where it is described.
        build: Makes the reply (called with the faults to send it with).
    """

    name: str
    api: Api | None
    description: str
    build: Callable[[Faults], Reply]

    def reply(self, faults: Faults = NO_FAULTS) -> Reply:
        """The reply.

        Args:
            faults: How to send it.

        Returns:
            The reply, labelled with the catalog name.
        """
        return self.build(faults)

    def expected(self) -> dict[str, object]:
        """The plain reading of the reply (same shape as :func:`expected_outcome`).

        Returns:
            The outcome dict.
        """
        reply = self.reply()
        fmt: Format = "sse" if reply.is_sse else "json"
        return outcome_of_body(self.api or "chat", reply.body, fmt, reply.status, name=self.name)


SYNTHESIZED: dict[str, Synth] = {}


def _register(name: str, api: Api | None, description: str
              ) -> Callable[[Callable[[Faults], Reply]], Callable[[Faults], Reply]]:
    def wrap(fn: Callable[[Faults], Reply]) -> Callable[[Faults], Reply]:
        SYNTHESIZED[name] = Synth(name, api, description, fn)
        return fn

    return wrap


def synth_reply(name: str, faults: Faults = NO_FAULTS) -> Reply:
    """The synthesized reply of that name.

    Args:
        name: A key of :data:`SYNTHESIZED`.
        faults: How to send it.

    Returns:
        The reply.

    Raises:
        TestServerError: Unknown name.
    """
    try:
        return SYNTHESIZED[name].reply(faults)
    except KeyError:
        raise TestServerError(
            f"no synthesized reply {name!r}; known: {', '.join(sorted(SYNTHESIZED))}"
        ) from None


def _chat(name: str, chunks: list[dict[str, object]], faults: Faults, *, done: bool = True
          ) -> Reply:
    return Reply.sse(chat_stream(chunks, done=done), faults=faults, api="chat", label=name)


def _resp(name: str, segments: list[bytes], faults: Faults) -> Reply:
    return Reply.sse(segments, faults=faults, api="responses", label=name)


@_register("chat_parallel_tool_calls", "chat",
           "two tool calls in one turn, index 0 then 1, each opened with id and name "
           "(PROTOCOL 3: 'Parallel calls use indexes 0, 1, ...')")
def _chat_parallel(faults: Faults) -> Reply:
    def call(index: int, cid: str, name: str) -> dict[str, object]:
        return {"index": index, "id": cid, "type": "function",
                "function": {"name": name, "arguments": ""}}

    def args(index: int, text: str) -> dict[str, object]:
        return {"index": index, "function": {"arguments": text}}

    chunks = [
        chat_chunk({"role": "assistant", "content": None, "tool_calls": [
            call(0, "call_synthA", "get_weather")]}),
        chat_chunk({"tool_calls": [args(0, '{"city":')]}),
        chat_chunk({"tool_calls": [args(0, '"Paris"}')]}),
        chat_chunk({"tool_calls": [call(1, "call_synthB", "get_time")]}),
        chat_chunk({"tool_calls": [args(1, '{"tz":"Europe/Paris"}')]}),
        chat_chunk({}, finish="tool_calls"),
        chat_chunk(choices=[], usage=chat_usage(40, 30)),
    ]
    return _chat("chat_parallel_tool_calls", chunks, faults)


@_register("responses_parallel_tool_calls", "responses",
           "two function_call items in one response, output_index 0 and 1")
def _resp_parallel(faults: Faults) -> Reply:
    ev = ResponsesEvents().start()
    ev.function_call("get_weather", ['{"city":', '"Paris"}'])
    ev.function_call("get_time", ['{"tz":"Europe/Paris"}'])
    return _resp("responses_parallel_tool_calls", responses_stream(ev.finish()), faults)


@_register("chat_n2_interleaved", "chat",
           "n=2: choices 0 and 1 interleaved, told apart by index (PROTOCOL 3)")
def _chat_n2(faults: Faults) -> Reply:
    chunks = [
        chat_chunk({"role": "assistant", "content": ""}, index=0),
        chat_chunk({"role": "assistant", "content": ""}, index=1),
        chat_chunk({"content": "Hello"}, index=0),
        chat_chunk({"content": "Hi"}, index=1),
        chat_chunk({"content": " there."}, index=0),
        chat_chunk({"content": "!"}, index=1),
        chat_chunk({}, index=0, finish="stop"),
        chat_chunk({}, index=1, finish="stop"),
        chat_chunk(choices=[], usage=chat_usage(9, 6)),
    ]
    return _chat("chat_n2_interleaved", chunks, faults)


def _text_events(pieces: Sequence[str] = ("The answer", " is 42.")) -> list[dict[str, object]]:
    return ResponsesEvents().start().message(pieces).finish()


@_register("responses_data_before_event", "responses",
           "each frame has `data:` before `event:` (Bedrock 'mantle', PROTOCOL 2)")
def _resp_data_first(faults: Faults) -> Reply:
    return _resp("responses_data_before_event",
                 responses_stream(_text_events(), data_first=True), faults)


@_register("responses_sorted_keys_type_last", "responses",
           "JSON keys sorted alphabetically, so `type` comes last (Bedrock 'mantle', PROTOCOL 2)")
def _resp_sorted(faults: Faults) -> Reply:
    return _resp("responses_sorted_keys_type_last",
                 responses_stream(_text_events(), sort_keys=True), faults)


@_register("responses_changing_item_id", "responses",
           "item_id changes on every event of the same item; output_index stays "
           "(GitHub Copilot, PROTOCOL 2)")
def _resp_item_ids(faults: Faults) -> Reply:
    counter = iter(f"item_rot{n:04d}" for n in range(10_000))
    ev = ResponsesEvents().start()
    ev.function_call("lookup", ['{"q":', '"zephyr', ' rtos"}'], item_ids=counter)
    ev.message(["Looking", " it up."], item_ids=counter)
    return _resp("responses_changing_item_id", responses_stream(ev.finish()), faults)


@_register("chat_keepalive_before_first_data", "chat",
           "17 `: OPENROUTER PROCESSING` comment frames before the first data (OpenRouter, "
           "PROTOCOL 5)")
def _chat_keepalive(faults: Faults) -> Reply:
    comments = [comment_frame("OPENROUTER PROCESSING")] * 17
    body = chat_stream(_chat_text_chunks(["Four", "."]) + [
        chat_chunk({}, finish="stop"), chat_chunk(choices=[], usage=chat_usage(11, 2))])
    return Reply.sse(comments + body, faults=faults, api="chat",
                     label="chat_keepalive_before_first_data")


@_register("chat_inline_error_after_200", "chat",
           "HTTP 200, two text deltas, then a chunk with a top-level `error` whose code is the "
           "integer 502, no [DONE] (OpenRouter mid-stream error, PROTOCOL 5)")
def _chat_inline_error(faults: Faults) -> Reply:
    err = chat_chunk({"content": ""}, finish="error")
    err["error"] = {"code": 502, "message": "Provider disconnected unexpectedly"}
    chunks = _chat_text_chunks(["Partial", " answer"]) + [err]
    return _chat("chat_inline_error_after_200", chunks, faults, done=False)


@_register("chat_inline_error_then_done", "chat",
           "HTTP 200, then `data: {\"error\":{message,type,code}}` and `data: [DONE]` (vLLM, "
           "PROTOCOL 5)")
def _chat_inline_error_done(faults: Faults) -> Reply:
    chunks: list[dict[str, object]] = [{"error": {
        "message": "The decoder prompt (length 9000) is longer than the maximum model length",
        "type": "BadRequestError", "code": 400}}]
    return _chat("chat_inline_error_then_done", chunks, faults)


@_register("chat_empty_id_continuation", "chat",
           "tool-call continuation deltas repeat `id:\"\"` and `type` (Alibaba/Qwen, PROTOCOL 5)")
def _chat_empty_id(faults: Faults) -> Reply:
    def cont(text: str) -> dict[str, object]:
        return {"index": 0, "id": "", "type": "function", "function": {"arguments": text}}

    chunks = [
        chat_chunk({"role": "assistant", "content": "", "tool_calls": [
            {"index": 0, "id": "call_qwen01", "type": "function",
             "function": {"name": "get_weather", "arguments": ""}}]}),
        chat_chunk({"tool_calls": [cont('{"city": ')]}),
        chat_chunk({"tool_calls": [cont('"Hangzhou"}')]}),
        chat_chunk({}, finish="tool_calls"),
        chat_chunk(choices=[], usage=chat_usage(30, 12)),
    ]
    return _chat("chat_empty_id_continuation", chunks, faults)


@_register("chat_no_finish_reason", "chat",
           "`id:\"\"`, `created:0`, `role` on every chunk and no finish_reason at all, then "
           "[DONE] (Snowflake Cortex, PROTOCOL 5)")
def _chat_no_finish(faults: Faults) -> Reply:
    chunks = [chat_chunk({"role": "assistant", "content": p}, chunk_id="", created=0)
              for p in ["Snow", "flake", " says hi."]]
    return _chat("chat_no_finish_reason", chunks, faults)


@_register("responses_large_event", "responses",
           "45,000 characters of text, so `output_text.done`, `output_item.done` and "
           "`response.completed` are each single events over 40 KB (PROTOCOL 2 event sizes)")
def _resp_large(faults: Faults) -> Reply:
    pieces = [f"{n:05d} " + "x" * 994 for n in range(45)]
    return _resp("responses_large_event", responses_stream(_text_events(pieces)), faults)


@_register("responses_incomplete", "responses",
           "text, then `response.incomplete` with reason max_output_tokens and usage "
           "(PROTOCOL 2)")
def _resp_incomplete(faults: Faults) -> Reply:
    ev = ResponsesEvents().start().message(["Once upon", " a time"])
    events = ev.finish("incomplete", usage=(20, 16),
                       incomplete_details={"reason": "max_output_tokens"})
    return _resp("responses_incomplete", responses_stream(events), faults)


@_register("responses_error_event_flat", "responses",
           "HTTP 200, then an `error` event in the documented flat shape (top-level code and "
           "message, server_is_overloaded) and the end of the stream (PROTOCOL 2, eca#559)")
def _resp_error_flat(faults: Faults) -> Reply:
    ev = ResponsesEvents().start()
    ev.add("error", code="server_is_overloaded",
           message="The server is overloaded. Please try again later.", param=None)
    return _resp("responses_error_event_flat", responses_stream(ev.events), faults)


def _openai_error(message: str, etype: str, code: str | None, param: str | None = None
                  ) -> dict[str, object]:
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


def _http(name: str, status: int, body: Mapping[str, object], faults: Faults,
          headers: Sequence[tuple[str, str]] = ()) -> Reply:
    return Reply.json(status, body, headers=headers, faults=faults, label=name)


@_register("http401_invalid_api_key", None,
           "401 with OpenAI's body for a wrong key (PROTOCOL 4)")
def _h401(faults: Faults) -> Reply:
    return _http("http401_invalid_api_key", 401, _openai_error(
        "Incorrect API key provided: sk-test***********1234. You can find your API key at "
        "https://platform.openai.com/account/api-keys.", "invalid_request_error",
        "invalid_api_key"), faults)


@_register("http403_unsupported_region", None, "403 in OpenAI's shape (PROTOCOL 4)")
def _h403(faults: Faults) -> Reply:
    return _http("http403_unsupported_region", 403, _openai_error(
        "Country, region, or territory not supported", "request_forbidden",
        "unsupported_country_region_territory"), faults)


@_register("http404_model_not_found", None, "404 for an unknown model (PROTOCOL 4)")
def _h404(faults: Faults) -> Reply:
    return _http("http404_model_not_found", 404, _openai_error(
        "The model `gpt-nonexistent` does not exist or you do not have access to it.",
        "invalid_request_error", "model_not_found"), faults)


@_register("http429_rate_limit", None,
           "429 rate limit (retrying helps) with Retry-After, unlike the recorded "
           "insufficient_quota 429 (PROTOCOL 4)")
def _h429(faults: Faults) -> Reply:
    return _http("http429_rate_limit", 429, _openai_error(
        "Rate limit reached for gpt-test in organization org-test on requests per min (RPM): "
        "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests",
        "rate_limit_exceeded"), faults, [("Retry-After", "20")])


@_register("http500_server_error", None, "500 server error (PROTOCOL 4)")
def _h500(faults: Faults) -> Reply:
    return _http("http500_server_error", 500, _openai_error(
        "The server had an error while processing your request. Sorry about that!",
        "server_error", None), faults)


@_register("http503_retry_after", None,
           "503 overloaded with `Retry-After: 2` (PROTOCOL 4: honour Retry-After)")
def _h503(faults: Faults) -> Reply:
    return _http("http503_retry_after", 503, _openai_error(
        "The engine is currently overloaded, please try again later.", "server_error", None),
        faults, [("Retry-After", "2")])


@_register("http503_llamacpp_loading", None,
           "503 in llama.cpp's shape: integer `code` equal to the status, type "
           "unavailable_error (PROTOCOL 5)")
def _h503_llama(faults: Faults) -> Reply:
    return _http("http503_llamacpp_loading", 503, {"error": {
        "code": 503, "message": "Loading model", "type": "unavailable_error"}}, faults)


@_register("http400_previous_response_not_found", None,
           "400 when chaining to a response that does not exist (PROTOCOL 4)")
def _h400_prev(faults: Faults) -> Reply:
    return _http("http400_previous_response_not_found", 400, _openai_error(
        "Previous response with id 'resp_missing' not found.", "invalid_request_error",
        "previous_response_not_found", "previous_response_id"), faults)


@_register("http400_vllm_flat", None,
           "400 with an old vLLM flat body (no `error` wrapper, PROTOCOL 5)")
def _h400_flat(faults: Faults) -> Reply:
    return _http("http400_vllm_flat", 400, {
        "object": "error", "message": "max_tokens must be at least 1, got 0.",
        "type": "BadRequestError", "param": None, "code": 400}, faults)


def sse_text_frames(pieces: Sequence[str]) -> list[bytes]:
    """Frames of a minimal Chat text stream (handy for fault tests).

    Args:
        pieces: The content deltas.

    Returns:
        The frames, ending with `data: [DONE]`.
    """
    return chat_stream(_chat_text_chunks(pieces) + [chat_chunk({}, finish="stop")])

