"""Request-body validation against the openai SDK's own request types."""

from __future__ import annotations

import copy
from typing import Any

import openai
import pytest
from agent_host.errors import RequestInvalidError
from agent_host.testserver import (
    TestServer,
    check_chat_request,
    check_responses_request,
    fixture_reply,
    request_problems,
)
from agent_host.testserver.validate import api_for_path, sdk_request_type

TOOL_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}},
               "required": ["path"], "additionalProperties": False}

# What the device sends on a Responses continuation after a tool call.
GOOD_RESPONSES: dict[str, Any] = {
    "model": "gpt-5.1",
    "instructions": "You are an agent on a microcontroller.",
    "input": [
        {"role": "user", "content": "read a.txt"},
        {"type": "function_call", "call_id": "call_1", "name": "read_file",
         "arguments": "{\"path\":\"a.txt\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
    ],
    "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
               "parameters": TOOL_SCHEMA, "strict": True}],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "reasoning": {"effort": "none"},
    "previous_response_id": "resp_123",
    "store": True,
    "stream": True,
}

GOOD_CHAT: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
    ],
    "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read",
                                                "parameters": TOOL_SCHEMA, "strict": True}}],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "reasoning_effort": "none",
    "stream": True,
    "stream_options": {"include_usage": True},
    "max_completion_tokens": 4096,
}


def changed(body: dict[str, Any], path: str, value: object = ..., *, drop: bool = False
            ) -> dict[str, Any]:
    out = copy.deepcopy(body)
    keys = path.split(".")
    node: Any = out
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last: Any = int(keys[-1]) if isinstance(node, list) else keys[-1]
    if drop:
        del node[last]
    else:
        node[last] = value
    return out


def test_sdk_types_are_the_streaming_typeddicts() -> None:
    assert sdk_request_type("responses").__name__ == "ResponseCreateParamsStreaming"
    assert sdk_request_type("chat").__name__ == "CompletionCreateParamsStreaming"
    assert sdk_request_type("chat", stream=False).__name__ == "CompletionCreateParamsNonStreaming"


def test_good_bodies_pass() -> None:
    assert request_problems(GOOD_RESPONSES, "responses") == []
    assert request_problems(GOOD_CHAT, "chat") == []
    check_responses_request(GOOD_RESPONSES)
    check_chat_request(GOOD_CHAT)
    assert request_problems({"model": "m", "input": "hi", "stream": True}, "responses") == []


@pytest.mark.parametrize("api,body,needle", [
    ("responses", changed(GOOD_RESPONSES, "parallel_tool_calls", "no"),
     "body.parallel_tool_calls: expected a boolean"),
    ("chat", changed(GOOD_CHAT, "parallel_tool_calls", "no"),
     "body.parallel_tool_calls: expected a boolean"),
    ("responses", changed(GOOD_RESPONSES, "model", drop=True), "body.model: missing"),
    ("chat", changed(GOOD_CHAT, "model", drop=True), "body.model: missing"),
    ("responses", changed(GOOD_RESPONSES, "input", drop=True), "body.input: missing"),
    ("chat", changed(GOOD_CHAT, "messages", drop=True), "body.messages: missing"),
    ("responses", changed(GOOD_RESPONSES, "max_tokens", 5), "body.max_tokens: unknown key"),
    ("responses", changed(GOOD_RESPONSES, "reasoning.effort", "extreme"),
     "body.reasoning.effort: 'extreme' is not one of"),
    ("chat", changed(GOOD_CHAT, "reasoning_effort", "extreme"), "body.reasoning_effort"),
    ("responses", changed(GOOD_RESPONSES, "stream", "true"), "body.stream"),
    ("responses", changed(GOOD_RESPONSES, "store", 1), "body.store: expected a boolean"),
    ("chat", changed(GOOD_CHAT, "max_completion_tokens", "4096"),
     "body.max_completion_tokens: expected an integer"),
    # A Chat-style nested tool sent to Responses.
    ("responses", changed(GOOD_RESPONSES, "tools.0",
                          {"type": "function", "function": {"name": "x", "parameters": {}}}),
     "body.tools[0].name: missing"),
    # A Responses-style flat tool sent to Chat.
    ("chat", changed(GOOD_CHAT, "tools.0", GOOD_RESPONSES["tools"][0]),
     "body.tools[0].name: unknown key"),
    ("chat", changed(GOOD_CHAT, "messages.3.tool_call_id", drop=True),
     "body.messages[3].tool_call_id: missing"),
    ("chat", changed(GOOD_CHAT, "messages.1.colour", "red"),
     "body.messages[1].colour: unknown key"),
    ("responses", changed(GOOD_RESPONSES, "input.2.type", "tool_result"), "body.input[2]"),
    ("chat", changed(GOOD_CHAT, "stream_options.include_usage", "yes"),
     "body.stream_options.include_usage: expected a boolean"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_bad_bodies_are_rejected(api: str, body: dict[str, Any], needle: str) -> None:
    problems = request_problems(body, api)  # type: ignore[arg-type]
    assert any(needle in p for p in problems), problems
    with pytest.raises(RequestInvalidError, match="invalid"):
        (check_chat_request if api == "chat" else check_responses_request)(body)


def test_strict_pydantic_catches_what_lax_mode_would_coerce() -> None:
    problems = request_problems(changed(GOOD_CHAT, "parallel_tool_calls", "no"), "chat")
    assert any("pydantic" in p for p in problems)


def test_non_object_body() -> None:
    assert request_problems([1, 2], "chat") == ["body: expected a JSON object, got an array"]


def test_required_keys_can_be_overridden() -> None:
    body = {"input": "hi", "stream": True}
    assert request_problems(body, "responses", required=()) == []
    assert request_problems(body, "responses") == [
        "body.model: missing (required by the device contract)"]


def test_api_for_path() -> None:
    assert api_for_path("/v1/responses") == "responses"
    assert api_for_path("/openai/v1/chat/completions?api-version=v1") == "chat"
    assert api_for_path("/v1/models") is None


def test_bodies_the_sdk_sends_are_valid() -> None:
    """What the SDK itself serialises passes, including tools, continuations and reasoning."""
    text = fixture_reply("responses/azure_gpt51_text_effort_none.jsonl")
    chat = fixture_reply("chat/openai_gpt4o_finish_length.sse")
    with TestServer([text, chat]) as srv:
        client = openai.OpenAI(base_url=srv.url("/v1"), api_key="k", max_retries=0)
        list(client.responses.create(
            model=GOOD_RESPONSES["model"], input=GOOD_RESPONSES["input"],
            instructions=GOOD_RESPONSES["instructions"], tools=GOOD_RESPONSES["tools"],
            tool_choice="auto", parallel_tool_calls=False, reasoning={"effort": "none"},
            previous_response_id="resp_123", store=True, stream=True))
        list(client.chat.completions.create(
            model=GOOD_CHAT["model"], messages=GOOD_CHAT["messages"], tools=GOOD_CHAT["tools"],
            tool_choice="auto", parallel_tool_calls=False, reasoning_effort="none",
            stream=True, stream_options={"include_usage": True}, max_completion_tokens=4096))
        reqs = srv.wait_for_requests(2)
        srv.check()
    assert all(r.problems == [] for r in reqs)
    assert request_problems(reqs[0].json, "responses") == []
    assert request_problems(reqs[1].json, "chat") == []
    assert reqs[0].json == GOOD_RESPONSES
