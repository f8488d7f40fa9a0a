"""The test server replays every fixture so that the openai SDK itself decodes what a plain
reading of the file says (text, tool calls, usage, finish, errors), over HTTP and HTTPS and
with the SSE-level and framing faults; synthesized deviations likewise; dialogues and recording.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import (
    SYNTHESIZED,
    Faults,
    Reply,
    Script,
    TestServer,
    Turn,
    expect_json,
    expected_outcome,
    fixture_files,
    fixture_replies,
    fixture_reply,
    fixture_script,
    outcome_of_body,
    resolve_fixture,
    synth_reply,
)
from agent_host.testserver.fixtures import read_sse

FILES = fixture_files()
STREAM_FILES = [p for p in FILES if p.suffix != ".json"]
ERROR_FILES = [p for p in FILES if p.suffix == ".json"]


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


# -- reading what the SDK decodes -----------------------------------------------------------


def client_for(srv: TestServer, host: str = "127.0.0.1") -> openai.OpenAI:
    """An SDK client for the server (trusting its CA over HTTPS), without retries."""
    verify: Any = srv.client_ssl_context() if srv.tls is not None else True
    return openai.OpenAI(
        base_url=srv.url("/v1", host=host),
        api_key="sk-test",
        max_retries=0,
        timeout=20.0,
        http_client=openai.DefaultHttpxClient(verify=verify),
    )


def _attr(obj: object, name: str) -> Any:
    """A field of an SDK object, which may also be a plain dict for shapes it does not know."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _usage(usage: object, keys: tuple[str, str, str]) -> dict[str, object] | None:
    if usage is None:
        return None
    names = ("input_tokens", "output_tokens", "total_tokens")
    return {n: _attr(usage, k) for n, k in zip(names, keys)}


def _api_error(err: openai.APIError) -> dict[str, object]:
    body = err.body if isinstance(err.body, dict) else {}
    return {"message": err.message, "type": body.get("type"), "code": body.get("code")}


def sdk_chat(client: openai.OpenAI) -> dict[str, object]:
    """Stream one Chat completion through the SDK and collect what it decoded."""
    turn: dict[str, object] = {"response_id": None, "text": "", "refusal": "", "usage": None,
                               "finish": None, "error": None, "tool_calls": []}
    calls: dict[int, dict[str, str]] = {}
    text: list[str] = []
    refusal: list[str] = []
    stream = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True,
        stream_options={"include_usage": True},
    )
    try:
        for chunk in stream:
            if chunk.id and not turn["response_id"]:
                turn["response_id"] = chunk.id
            if chunk.usage is not None:
                turn["usage"] = _usage(chunk.usage, ("prompt_tokens", "completion_tokens",
                                                     "total_tokens"))
            for choice in chunk.choices or []:
                if (choice.index or 0) != 0:
                    continue
                delta = choice.delta
                content: Any = delta.content
                if isinstance(content, str):
                    text.append(content)
                elif isinstance(content, list):
                    text += [p["text"] for p in content if p.get("type") == "text"]
                if delta.refusal:
                    refusal.append(delta.refusal)
                for pos, tc in enumerate(delta.tool_calls or []):
                    index = tc.index if tc.index is not None else pos
                    call = calls.setdefault(index, {"call_id": "", "name": "", "arguments": ""})
                    if tc.id and not call["call_id"]:
                        call["call_id"] = tc.id
                    fn = tc.function
                    if fn is not None and fn.name and not call["name"]:
                        call["name"] = fn.name
                    if fn is not None and fn.arguments:
                        call["arguments"] += fn.arguments
                if choice.finish_reason is not None:
                    turn["finish"] = choice.finish_reason
    except openai.APIError as err:
        turn["error"] = _api_error(err)
    turn["text"] = "".join(text)
    turn["refusal"] = "".join(refusal)
    turn["tool_calls"] = [calls[i] for i in sorted(calls)]
    return turn


def sdk_responses(client: openai.OpenAI, **request: Any) -> dict[str, object]:
    """Stream one Response through the SDK and collect what it decoded."""
    turn: dict[str, object] = {"response_id": None, "text": "", "refusal": "", "usage": None,
                               "finish": None, "error": None, "tool_calls": [],
                               "incomplete_reason": None, "sdk_raised": False}
    text: dict[object, str] = {}
    calls: dict[object, dict[str, str]] = {}
    params: dict[str, Any] = {"model": "gpt-test", "input": "hi", **request}
    stream = client.responses.create(stream=True, **params)

    def call(key: object) -> dict[str, str]:
        return calls.setdefault(key, {"call_id": "", "name": "", "arguments": ""})

    try:
        for ev in stream:
            etype = ev.type
            oi = _attr(ev, "output_index")
            key = oi if oi is not None else _attr(ev, "item_id")
            if etype in ("response.created", "response.in_progress"):
                turn["response_id"] = turn["response_id"] or ev.response.id  # type: ignore[union-attr]
            elif etype == "response.output_text.delta":
                part = (key, _attr(ev, "content_index"))
                text[part] = text.get(part, "") + ev.delta  # type: ignore[union-attr]
            elif etype == "response.refusal.delta":
                turn["refusal"] = str(turn["refusal"]) + ev.delta  # type: ignore[union-attr]
            elif etype in ("response.output_item.added", "response.output_item.done"):
                item = ev.item  # type: ignore[union-attr]
                if _attr(item, "type") == "function_call":
                    c = call(oi if oi is not None else _attr(item, "id"))
                    c["call_id"] = c["call_id"] or _attr(item, "call_id")
                    c["name"] = c["name"] or _attr(item, "name")
                    if etype.endswith(".done"):
                        c["arguments"] = _attr(item, "arguments")
            elif etype == "response.function_call_arguments.delta":
                call(key)["arguments"] += ev.delta  # type: ignore[union-attr]
            elif etype == "response.function_call_arguments.done":
                call(key)["arguments"] = ev.arguments  # type: ignore[union-attr]
            elif etype in ("response.completed", "response.incomplete", "response.failed"):
                resp = ev.response  # type: ignore[union-attr]
                turn["finish"] = resp.status
                turn["usage"] = _usage(resp.usage, ("input_tokens", "output_tokens",
                                                    "total_tokens"))
                if resp.incomplete_details is not None:
                    turn["incomplete_reason"] = resp.incomplete_details.reason
                if resp.error is not None and not turn["error"]:
                    turn["error"] = {"message": resp.error.message, "type": None,
                                     "code": resp.error.code}
            elif etype == "error":
                turn["error"] = {"message": ev.message, "type": None,  # type: ignore[union-attr]
                                 "code": ev.code}  # type: ignore[union-attr]
    except openai.APIError as err:
        turn["error"] = _api_error(err)
        turn["sdk_raised"] = True
    turn["text"] = "".join(text.values())
    turn["tool_calls"] = list(calls.values())
    return turn


def assert_same(sdk: dict[str, object], expected: dict[str, object]) -> None:
    """The SDK's decoding agrees with the plain reading of the file."""
    assert sdk["text"] == expected["text"]
    assert sdk["refusal"] == expected["refusal"]
    assert sdk["tool_calls"] == expected["tool_calls"]
    assert sdk["response_id"] == expected["response_id"]
    if expected["error"] is not None:
        err = sdk["error"]
        assert isinstance(err, dict)
        want = expected["error"]
        assert isinstance(want, dict)
        assert err["message"] == want["message"]
        assert err["code"] == want["code"]
    else:
        assert sdk["error"] is None
    if not sdk.get("sdk_raised"):
        # The SDK stops at an in-stream `error`; what follows it is only in the plain reading.
        assert sdk["usage"] == expected["usage"]
        assert sdk["finish"] == expected["finish"]
    if "incomplete_reason" in sdk:
        assert sdk["incomplete_reason"] == expected["incomplete_reason"]


def replay(srv: TestServer, api: str, turns: list[dict[str, object]]) -> None:
    client = client_for(srv)
    previous: str | None = None
    for n, expected in enumerate(turns):
        if api == "chat":
            got = sdk_chat(client)
        else:
            extra: dict[str, Any] = {}
            if previous is not None:
                # A continuation, as the device sends it after a tool call.
                extra = {"previous_response_id": previous, "input": [
                    {"type": "function_call_output", "call_id": "call_x", "output": "19"}]}
            got = sdk_responses(client, **extra)
            previous = str(got["response_id"])
        assert_same(got, expected), f"turn {n}"
    srv.wait_for_requests(len(turns))
    srv.check()


# -- the plain reader itself -----------------------------------------------------------------


def test_fixture_corpus_is_complete() -> None:
    assert len(FILES) == 30
    assert len(_ids([p for p in FILES if p.parent.name == "chat"])) == 17


def test_read_sse_rules() -> None:
    body = b": c\r\ndata: a\rdata:b\n\nevent: e\ndata: x\n\ndata: unterminated\n"
    assert list(read_sse(body)) == [("", "a\nb"), ("e", "x")]


def test_expected_outcome_of_known_files() -> None:
    tool = expected_outcome("chat/openai_gpt4o_tool_strict.sse")["turns"]
    assert isinstance(tool, list)
    assert tool[0]["tool_calls"] == [{"call_id": "call_CTf1nWJLqSeRgDqaCG27xZ74",
                                      "name": "get_weather",
                                      "arguments": '{"city":"San Francisco","state":"CA"}'}]
    assert tool[0]["finish"] == "tool_calls" and tool[0]["done"] is True
    glm = expected_outcome("mistral_glm_tool_incremental_empty_name.jsonl")["turns"]
    assert isinstance(glm, list) and glm[0]["tool_calls"][0]["name"] == "webSearchTool"
    index1 = expected_outcome("anthropic_gateway_tool_index1.sse")["turns"]
    assert isinstance(index1, list)
    # Its final `data: [DONE]` has no blank line after it, so it is not an event.
    assert index1[0]["done"] is False and index1[0]["text"] == "Reading it."
    codex = expected_outcome("openai_codexmax_reasoning_encrypted_tool_loop_4streams.jsonl")
    turns = codex["turns"]
    assert isinstance(turns, list) and len(turns) == 4
    assert [t["tool_calls"][0]["arguments"] for t in turns[:3]] == [
        '{"a":12,"b":7,"op":"add"}', '{"a":19,"b":3,"op":"multiply"}',
        '{"a":57,"b":10,"op":"multiply"}']
    assert turns[3]["text"] == "The final result is **570**."
    failed = expected_outcome("openai_error_event_then_failed.jsonl")["turns"]
    assert isinstance(failed, list)
    assert failed[0]["finish"] == "failed" and failed[0]["error"]["code"] == "insufficient_quota"
    quota = expected_outcome("responses/openai_http429_insufficient_quota.json")
    assert quota["status"] == 429 and quota["sdk_exception"] == "RateLimitError"


def test_jsonl_framing_follows_index_rules() -> None:
    chat = fixture_reply("chat/mistral_tool_whole_no_index.jsonl")
    lines = resolve_fixture("chat/mistral_tool_whole_no_index.jsonl").read_text().splitlines()
    assert chat.body == b"".join(b"data: " + x.encode() + b"\n\n" for x in lines) + (
        b"data: [DONE]\n\n")
    resp = fixture_reply("responses/azure_gpt51_text_effort_none.jsonl")
    frames = list(read_sse(resp.body))
    assert frames[0][0] == "response.created" and all(e == json.loads(d)["type"]
                                                      for e, d in frames)
    assert b"[DONE]" not in resp.body


def test_sse_fixture_is_sent_verbatim() -> None:
    for path in [p for p in FILES if p.suffix == ".sse"]:
        assert fixture_reply(path).body == path.read_bytes()
        assert b"".join(fixture_reply(path).wire_segments()) == path.read_bytes()


def test_four_stream_file_splits_at_response_created() -> None:
    replies = fixture_replies("openai_codexmax_reasoning_encrypted_tool_loop_4streams.jsonl")
    assert len(replies) == 4
    first_lines = [next(read_sse(r.body))[0] for r in replies]
    assert first_lines == ["response.created"] * 4
    with pytest.raises(TestServerError, match="4 streams"):
        fixture_reply("openai_codexmax_reasoning_encrypted_tool_loop_4streams.jsonl")


# -- every fixture through the SDK ------------------------------------------------------------


@pytest.mark.parametrize("tls", [None, "valid"], ids=["http", "https"])
@pytest.mark.parametrize("path", STREAM_FILES, ids=_ids(STREAM_FILES))
def test_sdk_decodes_every_stream_fixture(path: Path, tls: str | None) -> None:
    expected = expected_outcome(path)
    turns = expected["turns"]
    assert isinstance(turns, list) and turns
    with TestServer(fixture_script(path), tls=tls) as srv:  # type: ignore[arg-type]
        replay(srv, str(expected["api"]), turns)
        assert srv.connections >= 1
        assert all(r.tls is (tls is not None) for r in srv.requests)


@pytest.mark.parametrize("tls", [None, "valid"], ids=["http", "https"])
@pytest.mark.parametrize("path", ERROR_FILES, ids=_ids(ERROR_FILES))
def test_sdk_raises_matching_exception_for_error_bodies(path: Path, tls: str | None) -> None:
    expected = expected_outcome(path)
    http_error = expected["http_error"]
    assert isinstance(http_error, dict)
    exc_class = getattr(openai, str(expected["sdk_exception"]))
    with TestServer(fixture_reply(path), tls=tls) as srv:  # type: ignore[arg-type]
        client = client_for(srv)
        with pytest.raises(exc_class) as info:
            if expected["api"] == "chat":
                sdk_chat(client)
            else:
                sdk_responses(client)
        assert info.value.status_code == expected["status"]
        assert http_error["message"] in info.value.message
        assert isinstance(info.value.body, dict)
        assert info.value.body.get("code") == http_error["code"]
        srv.check()


FAULT_SETS = {
    "crlf-keepalive-content-length": Faults(eol="crlf", keepalive_every=1, keepalive_before=2,
                                            framing="content-length"),
    "cr-close": Faults(eol="cr", framing="close"),
    "chunks-of-7": Faults(framing="chunked", chunk_size=7),
}


@pytest.mark.parametrize("faults", FAULT_SETS.values(), ids=FAULT_SETS.keys())
@pytest.mark.parametrize("path", STREAM_FILES, ids=_ids(STREAM_FILES))
def test_sdk_decodes_fixtures_with_line_ending_and_framing_faults(path: Path, faults: Faults
                                                                  ) -> None:
    expected = expected_outcome(path)
    turns = expected["turns"]
    assert isinstance(turns, list)
    with TestServer(fixture_script(path, faults)) as srv:
        replay(srv, str(expected["api"]), turns)


@pytest.mark.parametrize("name", ["chat/openai_gpt4o_tool_strict.sse",
                                  "responses/openai_gpt4o_function_call_wire.sse"])
def test_sdk_decodes_a_drip_over_tls(name: str) -> None:
    expected = expected_outcome(name)
    turns = expected["turns"]
    assert isinstance(turns, list)
    with TestServer(fixture_script(name, Faults(drip=True, drip_headers=True)),
                    tls="valid") as srv:
        replay(srv, str(expected["api"]), turns)
        rec = srv.requests[0]
        assert set(rec.writes) == {1} and len(rec.writes) == len(rec.wire)


# -- synthesized deviations through the SDK -----------------------------------------------------

SYNTH_STREAMS = [s for s in SYNTHESIZED.values() if s.api is not None]
SYNTH_ERRORS = [s for s in SYNTHESIZED.values() if s.api is None]


def test_synthesized_catalog_covers_the_index_coverage_notes() -> None:
    names = set(SYNTHESIZED)
    for needed in ("chat_parallel_tool_calls", "responses_parallel_tool_calls",
                   "chat_n2_interleaved", "responses_data_before_event",
                   "responses_sorted_keys_type_last", "responses_changing_item_id",
                   "chat_keepalive_before_first_data", "chat_inline_error_after_200",
                   "chat_empty_id_continuation", "chat_no_finish_reason",
                   "responses_large_event", "responses_incomplete", "http401_invalid_api_key",
                   "http500_server_error", "http503_retry_after"):
        assert needed in names


def test_synthesized_streams_show_their_deviation() -> None:
    def frames(name: str) -> bytes:
        return synth_reply(name).body

    assert frames("responses_data_before_event").startswith(b"data: {")
    assert b"\nevent: response.created\n\n" in frames("responses_data_before_event")
    sorted_events = [json.loads(d) for _, d in read_sse(frames("responses_sorted_keys_type_last"))]
    assert all(list(ev) == sorted(ev) and list(ev)[-1] == "type" for ev in sorted_events)
    rotating = [json.loads(d) for _, d in read_sse(frames("responses_changing_item_id"))]
    ids = [ev["item_id"] for ev in rotating if "item_id" in ev]
    assert len(ids) == len(set(ids)) > 5
    big = max(len(d) for _, d in read_sse(frames("responses_large_event")))
    assert big > 40 * 1024
    assert frames("chat_keepalive_before_first_data").startswith(
        b": OPENROUTER PROCESSING\n\n" * 17 + b"data: ")
    no_finish = [json.loads(d) for _, d in read_sse(frames("chat_no_finish_reason"))
                 if d != "[DONE]"]
    assert all(c["choices"][0]["finish_reason"] is None and c["id"] == "" for c in no_finish)
    parallel = SYNTHESIZED["chat_parallel_tool_calls"].expected()["turns"]
    assert isinstance(parallel, list)
    assert [c["name"] for c in parallel[0]["tool_calls"]] == ["get_weather", "get_time"]
    n2 = SYNTHESIZED["chat_n2_interleaved"].expected()["turns"]
    assert isinstance(n2, list) and n2[0]["text"] == "Hello there."
    incomplete = SYNTHESIZED["responses_incomplete"].expected()["turns"]
    assert isinstance(incomplete, list)
    assert incomplete[0]["finish"] == "incomplete"
    assert incomplete[0]["incomplete_reason"] == "max_output_tokens"
    assert synth_reply("http503_retry_after").headers == (("Retry-After", "2"),)


@pytest.mark.parametrize("synth", SYNTH_STREAMS, ids=[s.name for s in SYNTH_STREAMS])
def test_sdk_decodes_synthesized_streams(synth: Any) -> None:
    expected = synth.expected()
    with TestServer(synth.reply(Faults(eol="crlf"))) as srv:
        replay(srv, synth.api, expected["turns"])


@pytest.mark.parametrize("synth", SYNTH_ERRORS, ids=[s.name for s in SYNTH_ERRORS])
def test_sdk_raises_for_synthesized_error_bodies(synth: Any) -> None:
    expected = synth.expected()
    with TestServer(synth.reply()) as srv:
        with pytest.raises(getattr(openai, expected["sdk_exception"])) as info:
            sdk_responses(client_for(srv))
        assert info.value.status_code == expected["status"]
        assert expected["http_error"]["message"] in info.value.message
        retry_after = dict(synth.reply().headers).get("Retry-After")
        assert info.value.response.headers.get("retry-after") == retry_after


# -- dialogues, expectations, recording -----------------------------------------------------------


def test_scripted_dialogue_function_call_then_text_with_expectations() -> None:
    call = fixture_reply("responses/openai_gpt4o_function_call_wire.sse")
    answer = fixture_reply("responses/openai_gpt4o_after_function_call_output_wire.sse")
    first = expected_outcome("responses/openai_gpt4o_function_call_wire.sse")["turns"]
    assert isinstance(first, list)
    response_id = first[0]["response_id"]
    script = Script([
        Turn(call, (expect_json({"model": "gpt-4o", "parallel_tool_calls": False}),)),
        Turn(answer, (expect_json({"previous_response_id": response_id}),)),
    ])
    tools = [{"type": "function", "name": "get_capital", "description": "Capital of a country",
              "parameters": {"type": "object", "properties": {"country": {"type": "string"}},
                             "required": ["country"], "additionalProperties": False},
              "strict": True}]
    with TestServer(script) as srv:
        client = client_for(srv)
        got = sdk_responses(client, model="gpt-4o", tools=tools, parallel_tool_calls=False,
                            instructions="Be brief.", reasoning={"effort": "low"}, store=True)
        assert got["tool_calls"] == [{"call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
                                      "name": "get_capital",
                                      "arguments": '{"country":"France"}'}]
        got = sdk_responses(client, model="gpt-4o", tools=tools, parallel_tool_calls=False,
                            instructions="Be brief.", previous_response_id=got["response_id"],
                            input=[{"type": "function_call_output",
                                    "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
                                    "output": "Paris"}])
        assert got["text"] == "The capital of France is Paris."
        srv.check()
        reqs = srv.wait_for_requests(2)
        assert [r.path for r in reqs] == ["/v1/responses", "/v1/responses"]
        assert reqs[1].json["input"][0]["output"] == "Paris"  # type: ignore[index]


def test_failed_expectation_is_answered_400_and_reported() -> None:
    text = fixture_reply("responses/azure_gpt51_text_effort_none.jsonl")
    with TestServer([Turn(text, (expect_json({"model": "gpt-5.1"}),))]) as srv:
        with pytest.raises(openai.BadRequestError, match="expectation failed"):
            sdk_responses(client_for(srv), model="gpt-4o")
        assert "body.model: expected 'gpt-5.1', got 'gpt-4o'" in srv.failures[0]
        with pytest.raises(TestServerError, match="expectation failed"):
            srv.check()


def test_wrong_endpoint_for_a_fixture_is_reported() -> None:
    with TestServer(fixture_reply("responses/azure_gpt51_text_effort_none.jsonl")) as srv:
        with pytest.raises(openai.BadRequestError):
            sdk_chat(client_for(srv))
        assert "expected POST .../responses" in srv.failures[0]


def test_script_used_up_answers_500_and_check_reports_unused_turns() -> None:
    reply = fixture_reply("chat/openai_gpt4o_finish_length.sse")
    with TestServer([reply]) as srv:
        sdk_chat(client_for(srv))
        with pytest.raises(openai.InternalServerError, match="no scripted reply left"):
            sdk_chat(client_for(srv))
    with TestServer([reply, reply]) as srv:
        sdk_chat(client_for(srv))
        with pytest.raises(TestServerError, match="only 1 of 2 scripted turns"):
            srv.check()
        srv.check(all_turns_used=False)


def test_requests_are_recorded_with_headers_and_body() -> None:
    with TestServer(fixture_reply("chat/openai_gpt4o_finish_length.sse")) as srv:
        sdk_chat(client_for(srv))
        rec = srv.wait_for_requests(1)[0]
        assert rec.method == "POST" and rec.path == "/v1/chat/completions"
        assert rec.authorization == "Bearer sk-test"
        assert rec.header("content-type") == "application/json"
        assert json.loads(rec.body) == rec.json
        assert rec.json["stream"] is True  # type: ignore[index]
        assert rec.status == 200 and rec.outcome == "complete" and rec.problems == []
        assert rec.wire.startswith(b"HTTP/1.1 200 OK\r\n")
        assert rec.to_dict()["target"] == "/v1/chat/completions"


def test_invalid_request_body_is_rejected_with_its_problems() -> None:
    with TestServer(fixture_reply("chat/openai_gpt4o_finish_length.sse")) as srv:
        client = client_for(srv)
        with pytest.raises(openai.BadRequestError, match="parallel_tool_calls"):
            client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True,
                extra_body={"parallel_tool_calls": "no"})
        assert srv.requests[0].problems
    with TestServer(fixture_reply("chat/openai_gpt4o_finish_length.sse"),
                    reject_invalid=False) as srv:
        client = client_for(srv)
        stream = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True,
            extra_body={"bogus_field": 1})
        assert [c for c in stream]
        assert "bogus_field: unknown key" in srv.failures[0]


def test_set_script_between_phases() -> None:
    with TestServer() as srv:
        with pytest.raises(openai.InternalServerError):
            sdk_chat(client_for(srv))
        srv.set_script(synth_reply("chat_no_finish_reason"))
        assert sdk_chat(client_for(srv))["text"] == "Snowflake says hi."


def test_tls_localhost_name_is_accepted() -> None:
    with TestServer(fixture_reply("chat/openai_gpt4o_finish_length.sse"), tls="valid") as srv:
        assert sdk_chat(client_for(srv, host="localhost"))["text"] == '{"'
        assert srv.ca_pem.read_text().startswith("-----BEGIN CERTIFICATE-----")


@pytest.mark.parametrize("mode,reason", [("wrong-host", "Hostname mismatch"),
                                         ("unknown-ca", "unable to get local issuer")])
def test_tls_wrong_host_and_unknown_ca_are_refused(mode: str, reason: str) -> None:
    with TestServer(fixture_reply("chat/openai_gpt4o_finish_length.sse"),
                    tls=mode) as srv:  # type: ignore[arg-type]
        with pytest.raises(openai.APIConnectionError) as info:
            sdk_chat(client_for(srv, host="localhost"))
        assert reason in repr(info.value.__cause__)
        assert srv.wait_for_tls_error()
        assert srv.requests == []


def test_ca_pem_needs_tls() -> None:
    with TestServer() as srv:
        with pytest.raises(TestServerError, match="no TLS"):
            _ = srv.ca_pem
        assert srv.url("/v1").startswith("http://127.0.0.1:")


def test_outcome_of_body_matches_for_reencoded_stream() -> None:
    reply = fixture_reply("chat/openai_gpt4o_text_usage.sse").with_faults(eol="cr")
    plain = outcome_of_body("chat", reply.body, "sse")
    cr = outcome_of_body("chat", b"".join(reply.wire_segments()), "sse")
    assert plain["turns"] == cr["turns"]


def _all_payload_sizes() -> Iterator[int]:
    for path in STREAM_FILES:
        for reply in fixture_replies(path):
            yield from (len(d) for _, d in read_sse(reply.body))


def test_largest_recorded_event_is_under_the_synthesized_one() -> None:
    assert max(_all_payload_sizes()) < 40 * 1024 < max(
        len(d) for _, d in read_sse(synth_reply("responses_large_event").body))


def test_reply_helpers() -> None:
    reply = Reply.json(503, {"error": {"message": "x"}}).with_headers(("Retry-After", "1"))
    assert reply.headers == (("Retry-After", "1"),) and not reply.is_sse
    assert reply.body == b'{"error":{"message":"x"}}'
