"""The tool-dialogue builders (agent_host.testserver.dialogue): the openai SDK decodes each
reply into the call or the text it was built from, and the body readers accept the device's
shapes and refuse others."""

from __future__ import annotations

import json

import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import (
    Script,
    TestServer,
    ToolCall,
    advertised_names,
    advertised_tools,
    chat_exchange,
    function_call_output,
    outcome_of_body,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from test_testserver import client_for, sdk_chat, sdk_responses

APIS = ["chat", "responses"]


@pytest.mark.parametrize("api", APIS)
def test_the_sdk_decodes_what_each_reply_was_built_from(api: str) -> None:
    args = {"path": "notes.txt", "content": 'a "quoted" line\n'}
    replies = [
        tool_call_reply(api, "storage_write", args, "call_1", response_id="resp_1",
                        usage=(11, 3)),
        tool_calls_reply(api, [ToolCall("a", {"x": 1}, "call_a"),
                               ToolCall("b", '{"y":', "call_b")], response_id="resp_2"),
        text_reply(api, "All done.", response_id="resp_3", usage=None),
    ]
    want_calls = [
        [{"call_id": "call_1", "name": "storage_write",
          "arguments": json.dumps(args, separators=(",", ":"))}],
        [{"call_id": "call_a", "name": "a", "arguments": '{"x":1}'},
         {"call_id": "call_b", "name": "b", "arguments": '{"y":'}],
        [],
    ]
    with TestServer(Script(replies)) as srv:
        client = client_for(srv)
        for n, reply in enumerate(replies):
            got = sdk_chat(client) if api == "chat" else sdk_responses(client)
            plain = outcome_of_body(api, reply.body, "sse")["turns"]
            assert isinstance(plain, list) and len(plain) == 1
            assert got["tool_calls"] == plain[0]["tool_calls"] == want_calls[n]
            assert got["text"] == plain[0]["text"] == ("All done." if n == 2 else "")
            assert got["response_id"] == f"resp_{n + 1}"
        assert got["usage"] is None
        srv.wait_for_requests(3)
        srv.check()


def test_usage_is_reported_per_turn() -> None:
    for api in APIS:
        reply = tool_call_reply(api, "t", {}, usage=(7, 2))
        turn = outcome_of_body(api, reply.body, "sse")["turns"][0]
        assert turn["usage"] == {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}


def test_builders_refuse_what_cannot_be_a_turn() -> None:
    with pytest.raises(TestServerError):
        tool_calls_reply("chat", [])
    with pytest.raises(TestServerError):
        text_reply("responses", "")
    with pytest.raises(TestServerError):
        text_reply("chat", "x", usage=(-1, 0))


def test_reading_the_advertised_tools() -> None:
    fn = {"name": "t", "description": "d", "parameters": {"type": "object"}}
    chat = {"tools": [{"type": "function", "function": fn}]}
    responses = {"tools": [{"type": "function", **fn, "strict": False}]}
    assert advertised_tools(chat, "chat") == [fn]
    assert advertised_tools(responses, "responses") == [{**fn, "strict": False}]
    assert advertised_names(chat, "chat") == ["t"]
    assert advertised_names({"model": "m"}, "chat") is None
    with pytest.raises(TestServerError):
        advertised_tools(chat, "responses")  # the Chat form in a Responses body
    with pytest.raises(TestServerError):
        advertised_tools(responses, "chat")
    with pytest.raises(TestServerError):
        advertised_tools({"tools": {}}, "chat")


def test_reading_a_continuation() -> None:
    body = {"input": [{"type": "function_call_output", "call_id": "c1", "output": '{"a":1}'}]}
    assert function_call_output(body) == ("c1", {"a": 1})
    for bad in ({"input": []}, {"input": [{"role": "user", "content": "x"}]},
                {"input": [{"type": "function_call_output", "call_id": "c", "output": "{"}]}):
        with pytest.raises(TestServerError):
            function_call_output(bad)
    call = ToolCall("t", {"k": "v"}, "c2")
    assert chat_exchange(call, '{"ok":true}') == [
        {"role": "assistant", "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "t", "arguments": '{"k":"v"}'}}]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"ok":true}'},
    ]
