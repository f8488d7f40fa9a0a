"""`agent ask` against the OpenAI-compatible test server: every recorded stream, the request
bodies, HTTP errors, faults, TLS, cancellation and the bounds."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testing.twister_device import TwisterDevices
from agent_host.testing.twister_tls import image_test_ca
from agent_host.testserver import (
    SYNTHESIZED,
    Faults,
    Reply,
    Script,
    TestServer,
    TlsMode,
    Turn,
    expected_outcome,
    fixture_files,
    fixture_reply,
    fixture_script,
    fixtures_dir,
    text_reply,
)
from agent_host.testserver.plans import Api
from agent_host.testserver.sse import chat_stream, data_frame, responses_stream
from agent_host.testserver.synth import ResponsesEvents, chat_chunk, chat_usage

END = b"[Esc or Ctrl-X returns to the shell]"
API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}

#: CONFIG_AGENT_PROVIDER_PRETYPE_BYTES of the simulator (app/Kconfig default)
PRETYPE = 1024


def ask(dut: SimDevice, prompt: str, timeout: float = 30.0) -> list[str]:
    """Run `agent ask`, return its output lines, and leave the frontend with Esc."""
    mark = len(dut.transcript)
    dut.write(f"agent ask {prompt}\r".encode())
    out = dut.read_until(END, timeout, start=mark)
    dut.write(b"\x1b")
    dut.read_until(PROMPT, timeout, start=mark + len(out))
    lines = out[: out.rfind(END)].decode(errors="replace").split("\r\n")
    return lines[1:]  # the first line is the echo


def configure(dut: SimDevice, url: str, key: str | None = "sk-test") -> None:
    assert dut.exec_command(f"agent config endpoint {url}")[0].startswith("endpoint set")
    assert dut.exec_command("agent config model test-model") == ["model set to test-model"]
    if key is None:
        dut.exec_command("agent config key clear")
    else:
        assert dut.exec_command(f"agent config key {key}") == ["key set"]


def answer_text(lines: list[str]) -> str:
    """The streamed answer: the output without tool-call, error and usage lines."""
    body = [x for x in lines if not x.startswith(("[tool call] ", "agent: ", "tokens: "))]
    return "\n".join(body).rstrip("\n")


def check_turn(lines: list[str], expected: dict[str, object], turn: dict[str, object] | None
               ) -> None:
    """What `agent ask` printed for one turn, against the plain reading of the stream."""
    text = "\n".join(lines)
    if expected["http_error"] is not None:
        err = expected["http_error"]
        assert isinstance(err, dict)
        line = next(x for x in lines if x.startswith("agent: "))
        assert line.startswith(f"agent: HTTP {expected['status']} "), line
        assert str(err["message"])[:150] in line
        return
    assert turn is not None
    if turn["error"] is not None:
        err = turn["error"]
        assert isinstance(err, dict)
        line = next(x for x in lines if x.startswith("agent: "))
        assert str(err["message"])[:100] in line, line
        return
    want_text = str(turn["text"] or "") + str(turn["refusal"] or "")
    if turn["finish"] in ("incomplete", "length", "content_filter"):
        # Cut by a limit or a filter (Responses' response.incomplete, Chat's finish_reason):
        # the partial answer, then the line that marks it as such.
        reason = turn["incomplete_reason"] if turn["finish"] == "incomplete" else turn["finish"]
        shown = [x for x in lines if x]
        assert shown[-1] == f"agent: the response is incomplete: {reason}", text
        assert answer_text(lines) == want_text.rstrip("\n"), text
        return
    if len(want_text.encode()) > 16384:
        # The spec's bound: 16 KiB of model output per turn, then a clear stop.
        assert "agent: model output reached the limit of this turn; the rest was not read" in lines
        shown = answer_text(lines).replace("\n", "\r\n").encode()
        assert want_text.replace("\n", "\r\n").encode().startswith(shown)
        return
    assert answer_text(lines) == want_text.rstrip("\n"), text
    calls = [x for x in lines if x.startswith("[tool call] ")]
    tool_calls = turn["tool_calls"]
    assert isinstance(tool_calls, list)
    assert len(calls) == len(tool_calls), text
    for line, call in zip(calls, tool_calls, strict=True):
        assert line.startswith(f"[tool call] {call['name']} ")
        if len(call["arguments"]) <= 200:
            assert line == f"[tool call] {call['name']} {call['arguments']}"
    usage = turn["usage"]
    if isinstance(usage, dict):
        assert token_line(usage, turn["reasoning_tokens"]) in lines, text
    errors = [x for x in lines if x.startswith("agent: ")]
    if not tool_calls:
        assert not errors, text
    elif len(tool_calls) > 1:
        # The tool loop takes one call at a time (spec): the request fails after the turn.
        assert errors == [
            (f"agent: the model asked for {len(tool_calls)} tool calls at once; only one at a"
             " time is supported")
        ], text
    else:
        # The recorded tools are not this device's: the loop refuses the call.
        assert errors == [f"agent: the model called an unknown tool: {tool_calls[0]['name']}"], text


def token_line(usage: dict[str, object], reasoning: object) -> str:
    """The `tokens:` line for one turn's usage: output includes the reasoning tokens, shown
    apart when the server reported some; a server that counts them beside the output (total =
    input + output + reasoning) has them folded into the output, so the sum adds up."""
    tin, tout, total = (int(str(usage[k])) for k in ("input_tokens", "output_tokens",
                                                      "total_tokens"))
    if not isinstance(reasoning, int) or reasoning == 0:
        return f"tokens: input {tin}, output {tout}, total {total}"
    if tin + tout != total and tin + tout + reasoning == total:
        tout += reasoning
    return f"tokens: input {tin}, output {tout} (reasoning {reasoning}), total {total}"


def has_blank_line(path: Path) -> bool:
    """Whether an answer of @path has an empty line, which the Twister harness's line reader
    drops (QEMU and boards)."""
    turns = expected_outcome(path)["turns"] or []
    assert isinstance(turns, list)
    texts = [str(t["text"] or "") + str(t["refusal"] or "") for t in turns if t is not None]
    return any("\n\n" in x.rstrip("\n") or x.startswith("\n") for x in texts)


FIXTURES = [
    pytest.param(p, id=f"{p.parent.name}/{p.name}",
                 marks=[pytest.mark.needs_raw_console("the answer has an empty line")]
                 if has_blank_line(p)
                 else [])
    for p in fixture_files()
]


@pytest.mark.parametrize("path", FIXTURES)
def test_every_fixture_matches_the_plain_reading(sims, path: Path) -> None:
    expected = expected_outcome(path)
    turns = expected["turns"] or [None]
    assert isinstance(turns, list)
    with TestServer(fixture_script(path)) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[str(expected["api"])]))
        for turn in turns:
            check_turn(ask(dut, "hello"), expected, turn)
        srv.check()


@pytest.mark.parametrize("name", sorted(SYNTHESIZED))
def test_every_synthesized_deviation(sims, name: str) -> None:
    synth = SYNTHESIZED[name]
    expected = synth.expected()
    api = synth.api or "chat"
    turns = expected["turns"] or [None]
    assert isinstance(turns, list) and len(turns) == 1
    with TestServer(Script.repeat(synth.reply())) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        check_turn(ask(dut, "hello"), expected, turns[0])


def test_responses_request_body_and_headers(sims) -> None:
    script = fixture_script("responses/azure_gpt51_text_effort_none.jsonl", repeat_last=True)
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/responses"))
        assert dut.exec_command("agent config reasoning xhigh") == ["reasoning set to xhigh"]
        ask(dut, """'What is "2+2"?'""")  # the shell's quoting; JSON escaping follows
        req = srv.wait_for_requests(1)[0]
        body = req.json
        assert isinstance(body, dict)
        assert body["model"] == "test-model"
        assert body["input"] == [{"role": "user", "content": 'What is "2+2"?'}]
        assert body["instructions"].startswith("You are the assistant inside a Zephyr RTOS device")
        assert body["reasoning"] == {"effort": "xhigh"}
        assert body["parallel_tool_calls"] is False
        assert body["store"] is True and body["stream"] is True
        assert "previous_response_id" not in body
        assert req.authorization == "Bearer sk-test"
        assert req.header("accept") == "text/event-stream"
        assert req.header("content-type") == "application/json"
        assert req.header("content-length") == str(len(req.body))
        assert req.header("host") == f"127.0.0.1:{srv.port}"
        srv.check()  # the body matches the openai SDK's own request types


def test_chat_request_body_without_key(sims) -> None:
    script = fixture_script("chat/openai_gpt4o_text_usage.sse", repeat_last=True)
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"), key=None)
        ask(dut, "hi there")
        req = srv.wait_for_requests(1)[0]
        body = req.json
        assert isinstance(body, dict)
        assert body["messages"][0]["role"] == "system"
        assert body["messages"][1] == {"role": "user", "content": "hi there"}
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        # Only the official OpenAI endpoint gets reasoning_effort.
        assert "reasoning_effort" not in body and "reasoning" not in body
        assert req.authorization is None
        srv.check()


def test_prompt_bounds(sims) -> None:
    script = fixture_script("chat/openai_gpt4o_text_usage.sse", repeat_last=True)
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        prompt = "p" * 1023
        ask(dut, prompt)
        assert srv.wait_for_requests(1)[0].json["messages"][1]["content"] == prompt
        out = dut.exec_command("agent ask " + "p" * 1024)
        assert out == ["agent: the prompt is too long (at most 1023 bytes)"]
        # Words are joined with single spaces.
        ask(dut, "two   words")
        assert srv.wait_for_requests(2)[1].json["messages"][1]["content"] == "two words"
        assert len(srv.requests) == 2


def test_ask_needs_endpoint_model_and_prompt(dut: SimDevice) -> None:
    assert dut.exec_command("agent ask hello") == [
        "agent: no endpoint: set one with agent config endpoint URL"]
    dut.exec_command("agent config endpoint http://127.0.0.1:9/v1/responses")
    assert dut.exec_command("agent ask hello") == [
        "agent: no model: set one with agent config model NAME"]
    assert dut.exec_command("agent ask") == ["agent: usage: agent ask PROMPT"]


def test_connection_refused_is_one_clear_line(dut: SimDevice) -> None:
    configure(dut, "http://127.0.0.1:9/v1/chat/completions")
    lines = ask(dut, "hello")
    assert "agent: connection refused by 127.0.0.1:9" in lines


@pytest.mark.parametrize(
    "faults",
    [
        Faults(eol="crlf"),
        Faults(eol="cr"),
        Faults(keepalive_every=1),
        Faults(keepalive_before=20),
        Faults(framing="chunked", chunk_size=3),
        Faults(framing="content-length"),
        Faults(framing="close"),
        Faults(drip=True),
    ],
    ids=["crlf", "cr", "keepalive-every", "keepalive-before", "chunked-3", "content-length",
         "close", "drip"],
)
@pytest.mark.parametrize("name", ["chat/openai_gpt4o_tool_single.sse",
                                  "responses/openai_gpt4o_function_call_wire.sse"])
def test_fault_modes_give_the_same_outcome(sims, faults: Faults, name: str) -> None:
    expected = expected_outcome(name)
    api = str(expected["api"])
    with TestServer(Script.repeat(fixture_reply(name, faults))) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        turns = expected["turns"]
        assert isinstance(turns, list)
        check_turn(ask(dut, "hello", timeout=60), expected, turns[0])


def pools(dut: SimDevice) -> list[str]:
    return [x for x in dut.exec_command("agent status") if x.startswith("pool:")]


def all_free(lines: list[str]) -> bool:
    """Every pool line reads N/N free."""
    return all(re.search(r" (\d+)/\1 free", x) for x in lines) and len(lines) >= 2


def test_escape_cancels_a_stalled_request_promptly(sims) -> None:
    reply = fixture_reply("chat/openai_gpt4o_json_object_long.sse",
                          Faults(stall_after=600, stall_seconds=20))
    with TestServer(Script.repeat(reply)) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        mark = len(dut.transcript)
        dut.write(b"agent ask hello\r")
        deadline = time.monotonic() + 10
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.requests, "the request never reached the server"
        time.sleep(0.3)  # the head and the first bytes are in; the body stalls
        t0 = time.monotonic()
        dut.write(b"\x1b")
        cancelled = b"agent: cancelled\r\n"
        dut.read_until(cancelled, 5, start=mark)
        # The prompt may have come in the same read: look after the line, not after the read.
        dut.read_until(PROMPT, 5, start=dut.transcript.index(cancelled, mark) + len(cancelled))
        assert time.monotonic() - t0 < 1.5
        assert END not in dut.transcript[mark:]  # Esc while running returns straight away
        assert all_free(pools(dut))


def test_per_io_timeout(sims) -> None:
    reply = fixture_reply("chat/openai_gpt4o_text_usage.sse", Faults(stall_after=300,
                                                                    stall_seconds=30))
    with TestServer(Script.repeat(reply)) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        t0 = time.monotonic()
        lines = ask(dut, "hello", timeout=40)
        elapsed = time.monotonic() - t0
        assert "agent: no data from 127.0.0.1 for 15 s" in lines
        assert 14.5 < elapsed < 25
        assert all_free(pools(dut))


@pytest.mark.sim_only("shortens the request deadline with the simulator's "
                      "--request-deadline-ms; the firmware's is CONFIG_AGENT_REQUEST_DEADLINE_S")
def test_request_deadline(sims) -> None:
    """The spec's request deadline (90 s, shortened to 2 s here) ends a stream that keeps
    sending, slower than the deadline but never idle for the per-I/O timeout; a stream that
    ends within it is read whole."""
    dut = sims.start(["--request-deadline-ms=2000"])
    quick = text_reply("chat", "On time.").with_faults(
        Faults(keepalive_before=10, drip=True, drip_delay=0.001))
    with TestServer(Script.repeat(quick)) as srv:
        configure(dut, srv.url("/v1/chat/completions"))
        t0 = time.monotonic()
        lines = ask(dut, "hello")
        assert answer_text(lines) == "On time.", lines
        assert time.monotonic() - t0 < 2.5
    slow = text_reply("chat", "Too late.").with_faults(
        Faults(keepalive_before=400, drip=True, drip_delay=0.002))
    with TestServer(Script.repeat(slow)) as srv:
        dut.exec_command(f"agent config endpoint {srv.url('/v1/chat/completions')}")
        t0 = time.monotonic()
        lines = ask(dut, "hello", timeout=20)
        elapsed = time.monotonic() - t0
        assert "agent: the request took longer than 2 s" in lines
        assert "Too late." not in answer_text(lines)
        assert 1.9 < elapsed < 4.5
        assert all_free(pools(dut))


def test_empty_stateless_turn_is_retried_once(sims) -> None:
    empty = Reply.sse([
        (b'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"},'
         b'"finish_reason":null}]}\n\n'),
        b'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ], api="chat")
    text = fixture_reply("chat/vllm_crusoe_llama33_usage.sse")
    with TestServer(Script([Turn(empty), Turn(text)])) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        lines = ask(dut, "count")
        assert answer_text(lines) == "1, 2, 3, 4, 5"
        assert len(srv.requests) == 2
        # The body was given back once sent and built again for the retry: the same bytes.
        assert srv.requests[0].body == srv.requests[1].body
        srv.check()
    with TestServer(Script.repeat(empty)) as srv:
        dut.exec_command(f"agent config endpoint {srv.url('/v1/chat/completions')}")
        lines = ask(dut, "count")
        assert "agent: invalid response: the provider returned an empty turn twice" in lines
        assert len(srv.requests) == 2


def test_a_cut_at_every_byte_offset(sims) -> None:
    """No crash, one clear error line (or the whole answer), and every pool block back."""
    name = "chat/mistral_tool_whole_no_index.jsonl"
    expected = expected_outcome(name)
    turns = expected["turns"]
    assert isinstance(turns, list)
    body_len = len(fixture_reply(name, Faults(framing="content-length")).body)
    dut = sims.start()
    outcomes = {"complete": 0, "error": 0}
    with TestServer() as srv:
        configure(dut, srv.url("/v1/chat/completions"))
        for cut in range(body_len + 1):
            faults = Faults(framing="content-length", disconnect_after=cut)
            srv.set_script(Script.repeat(fixture_reply(name, faults)))
            lines = ask(dut, "weather")
            errors = [x for x in lines if x.startswith("agent: ")]
            if cut >= body_len:
                check_turn(lines, expected, turns[0])
                outcomes["complete"] += 1
                continue
            assert len(errors) == 1, (cut, lines)
            assert errors[0] in (
                "agent: the connection closed before the turn ended",
                "agent: the connection closed before the response ended",
            ), (cut, errors)
            assert not any(x.startswith("[tool call]") for x in lines), (cut, lines)
            outcomes["error"] += 1
    assert outcomes == {"complete": 1, "error": body_len}
    assert all_free(pools(dut))
    print(f"cut points tested: {body_len + 1}")


# HTTPS: on the simulator each server has a new CA, given to the simulator with --ca; under
# Twister (the scenario agent.e2e.tls) the image has the build's test CA compiled in, and the
# server signs with that one (agent_host.testing.twister_tls).
# The same line on both: Zephyr's TLS sockets report every failed handshake as -ECONNABORTED,
# and the firmware's port tells a refused certificate from Mbed TLS's verification flags
# (app/src/port/zephyr/net.c, docs/tls.md). The alert the client sent, which the server logs,
# says which check failed (OpenSSL and Mbed TLS send the same ones).
REFUSED = "agent: TLS: the certificate of localhost is not trusted"
ALERT = {"wrong-host": "SSLV3_ALERT_BAD_CERTIFICATE", "unknown-ca": "TLSV1_ALERT_UNKNOWN_CA"}


def https_server(sims, plan: Script, mode: TlsMode) -> TestServer:
    """A test server in TLS mode @mode, signed with the CA of the image under Twister."""
    ca = image_test_ca(sims.build_dir) if isinstance(sims, TwisterDevices) else None
    return TestServer(plan, tls=mode, tls_ca=ca)


def start_trusting(sims, srv: TestServer):
    """A device that trusts @srv's CA: given with --ca, or compiled into the Twister image."""
    if isinstance(sims, TwisterDevices):
        return sims.start()
    return sims.start(["--ca", str(srv.ca_pem)])


@pytest.mark.tls
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_https_with_the_test_ca(sims, host: str) -> None:
    name = "responses/openai_gpt4o_function_call_wire.sse"
    expected = expected_outcome(name)
    turns = expected["turns"]
    assert isinstance(turns, list)
    with https_server(sims, Script.repeat(fixture_reply(name)), "valid") as srv:
        dut = start_trusting(sims, srv)
        configure(dut, srv.url("/v1/responses", host=host))
        check_turn(ask(dut, "hello"), expected, turns[0])
        assert srv.requests[0].tls
        srv.check()


@pytest.mark.tls
@pytest.mark.parametrize("mode", ["wrong-host", "unknown-ca"])
def test_https_refuses_an_untrusted_server(sims, mode: TlsMode) -> None:
    reply = fixture_reply("chat/openai_gpt4o_text_usage.sse")
    with https_server(sims, Script.repeat(reply), mode) as srv:
        dut = start_trusting(sims, srv)
        configure(dut, srv.url("/v1/chat/completions", host="localhost"))
        lines = ask(dut, "hello")
        assert REFUSED in lines, lines
        assert srv.requests == []  # nothing was sent to an untrusted server
        error = srv.wait_for_tls_error()
        assert ALERT[mode] in error, error


@pytest.mark.tls
@pytest.mark.sim_only("a Twister image with TLS always has the build's test CA; a CA it lacks "
                      "is test_https_refuses_an_untrusted_server[unknown-ca]")
def test_https_without_the_ca_is_refused(sims) -> None:
    with TestServer(Script.repeat(fixture_reply("chat/openai_gpt4o_text_usage.sse")),
                    tls="valid") as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions", host="localhost"))
        assert REFUSED in ask(dut, "hello")
        assert srv.requests == []


def test_a_prompt_of_many_words(sims) -> None:
    words = " ".join(f"w{i}" for i in range(200))  # 200 words, 889 bytes
    with TestServer(Script.repeat(fixture_reply("chat/vllm_crusoe_llama33_usage.sse"))) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        ask(dut, words)
        assert srv.wait_for_requests(1)[0].json["messages"][1]["content"] == words


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        (lambda: SYNTHESIZED["http401_invalid_api_key"].reply(),
         "agent: HTTP 401 authentication failed (check agent config key): "),
        (lambda: SYNTHESIZED["http403_unsupported_region"].reply(), "agent: HTTP 403 forbidden: "),
        (lambda: SYNTHESIZED["http404_model_not_found"].reply(),
         "agent: HTTP 404 not found (check the endpoint URL and the model): "),
        (lambda: Reply.json(429, (fixtures_dir() / "responses/openai_http429_insufficient_quota.json"
                                  ).read_bytes()),
         "agent: HTTP 429 insufficient quota; retrying will not help: You exceeded"),
        (lambda: SYNTHESIZED["http429_rate_limit"].reply(), "agent: HTTP 429 rate limited"),
        (lambda: SYNTHESIZED["http500_server_error"].reply(), "agent: HTTP 500 server error: "),
        (lambda: SYNTHESIZED["http503_retry_after"].reply(),
         "agent: HTTP 503 service unavailable, retry after 2 s: "),
        (lambda: Reply.json(502, b"<html>Bad Gateway</html>"),
         "agent: HTTP 502 server error: <html>Bad Gateway</html>"),
    ],
    ids=["401", "403", "404", "429-quota", "429-rate", "500", "503-retry-after", "502-html"],
)
def test_http_errors_are_one_clear_line(sims, reply, line: str) -> None:
    with TestServer(Script.repeat(reply())) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        lines = ask(dut, "hello")
        errors = [x for x in lines if x.startswith("agent: ")]
        assert len(errors) == 1 and errors[0].startswith(line), lines
        assert len(errors[0]) < 400
        assert all_free(pools(dut))


def test_ctrl_x_also_leaves_the_frontend(sims) -> None:
    with TestServer(Script.repeat(fixture_reply("chat/vllm_crusoe_llama33_usage.sse"))) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        mark = len(dut.transcript)
        dut.write(b"agent ask count\r")
        out = dut.read_until(END, 20, start=mark)
        dut.write(b"\x1b[A")  # a cursor key is not Esc: the frontend stays
        time.sleep(0.3)
        assert PROMPT not in dut.transcript[mark + len(out):]
        dut.write(b"\x18")
        dut.read_until(PROMPT, 5, start=mark + len(out))
        assert dut.exec_command("agent config model") == ["model: test-model"]


def sixteen_kib_answer() -> str:
    """16384 bytes of text in 256 numbered lines of 64 bytes, no empty line (the Twister
    harness drops those): any lost, doubled or moved piece shows in the comparison."""
    lines = []
    for i in range(256):
        body = f"{i:03d} " + "".join(chr(ord("a") + (i + j) % 26) for j in range(59))
        lines.append(body)
    text = "\n".join(lines)
    return text + "." * (16384 - len(text))


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_16_kib_answer_arrives_byte_exact(sims, api: str) -> None:
    """The spec's most model output per turn (16 KiB), streamed in 512 deltas, shows on the
    console exactly: nothing lost while the worker's output competes with the shell thread
    (on the firmware the shell drops output that waits longer than CONFIG_SHELL_TX_TIMEOUT_MS
    unless that is 0, app/prj.conf)."""
    text = sixteen_kib_answer()
    assert len(text.encode()) == 16384
    with TestServer(Script.repeat(text_reply(api, text, pieces=512))) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        lines = ask(dut, "the long answer", timeout=120.0)
    assert not [x for x in lines if x.startswith("agent: ")], lines[-3:]
    assert answer_text(lines) == text


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_one_byte_over_16_kib_is_cut_with_a_message(sims, api: str) -> None:
    """16 KiB + 1 byte of model output: the first 16384 bytes show exactly, then the limit's
    message; the byte over the bound never reaches the console."""
    text = sixteen_kib_answer() + "Z"
    with TestServer(Script.repeat(text_reply(api, text, pieces=512))) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        lines = ask(dut, "the long answer", timeout=120.0)
    assert "agent: model output reached the limit of this turn; the rest was not read" in lines
    assert answer_text(lines) == text[:16384]


# ---- Issue 12: the stream protocol (items 6e, 7, 10, 11, 12, 14) ------------------------------


def test_a_200_answer_that_is_not_an_event_stream(sims) -> None:
    """A login page or a proxy's notice with status 200 says so, with its Content-Type (it
    used to say that the stream ended)."""
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Wi-Fi</body></html>"
    reply = Reply(200, (page,), "text/html; charset=utf-8", api="chat")
    with TestServer(Script.repeat(reply)) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        lines = ask(dut, "hello")
        errors = [x for x in lines if x.startswith("agent: ")]
        assert errors == [
            "agent: the server did not send an event stream (HTTP 200, Content-Type: text/html;"
            " charset=utf-8): " + page.decode()], lines
        assert len(srv.requests) == 1
        assert all_free(pools(dut))


def sorted_keys_text(api: str, text: str) -> Reply:
    """One turn whose text comes in a single delta with the JSON keys sorted: before the
    event's `type` (Responses) or the choice's `index` (Chat), as Bedrock's endpoint sends."""
    if api == "responses":
        ev = ResponsesEvents("resp_sorted").start().message([text])
        return Reply.sse(responses_stream(ev.finish(), sort_keys=True), api="responses")
    chunks = [chat_chunk({"content": text}), chat_chunk({}, finish="stop")]
    return Reply.sse([data_frame(c, sort_keys=True) for c in chunks] + [data_frame("[DONE]")],
                     api="chat")


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("size", "shown"), [(PRETYPE, PRETYPE), (PRETYPE + 1, PRETYPE),
                                           (8192, PRETYPE)])
def test_text_before_its_key_is_shown_whole_or_its_cut_said(sims, api: str, size: int,
                                                            shown: int) -> None:
    """Text held until its event is known waits in a pre-type block (PRETYPE bytes): up to that
    it is shown whole, beyond it the line says how much was not shown (8 KiB used to lose half
    without a word)."""
    text = "".join(chr(ord("a") + i % 26) for i in range(size))
    with TestServer(Script.repeat(sorted_keys_text(api, text))) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        lines = ask(dut, "hello")
        errors = [x for x in lines if x.startswith("agent: ")]
        got = answer_text(lines).replace("\n", "")  # the console wraps long lines
        assert got == text[:shown], (len(got), errors)
        if size == shown:
            assert errors == [], lines
        else:
            key = "its event's type" if api == "responses" else "its choice's index"
            assert errors == [
                (f"agent: text cut: a piece of the answer came before {key} and exceeds the"
                 f" {PRETYPE}-byte buffer; not shown: {size - shown} of {size} bytes")], errors


def test_chat_offers_tools_with_parallel_tool_calls_false(sims) -> None:
    """Every Chat endpoint that is offered tools is asked for one call per turn, as Responses
    is; the test server checks the field against the openai SDK's request types."""
    with TestServer(Script.repeat(text_reply("chat", "Hi."))) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        ask(dut, "hello")
        body = srv.wait_for_requests(1)[0].json
        assert isinstance(body, dict)
        assert body["tools"] and body["parallel_tool_calls"] is False
        srv.check()
        assert dut.exec_command("agent config tools off")[0].startswith("tools")
        ask(dut, "hello")
        body = srv.wait_for_requests(2)[1].json
        assert isinstance(body, dict)
        assert "tools" not in body and "parallel_tool_calls" not in body
        srv.check()


def chat_cut(text: str, reason: str) -> Reply:
    """A Chat turn with @text (none when empty) that ends for @reason, with usage."""
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    if text:
        chunks.append(chat_chunk({"content": text}))
    chunks += [chat_chunk({}, finish=reason), chat_chunk(choices=[], usage=chat_usage(9, 4))]
    return Reply.sse(chat_stream(chunks), api="chat")


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_chat_length_and_content_filter_are_incomplete(sims, reason: str) -> None:
    """As Responses' response.incomplete: the partial answer, then the line that says it is
    incomplete; an empty turn cut so is reported once, not asked again as an empty one."""
    with TestServer(Script([chat_cut("The first half", reason), chat_cut("", reason)])) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        lines = ask(dut, "hello")
        assert [x for x in lines if x] == [
            "The first half", f"agent: the response is incomplete: {reason}"], lines
        lines = ask(dut, "hello")
        assert [x for x in lines if x] == [f"agent: the response is incomplete: {reason}"]
        assert len(srv.requests) == 2
        srv.check()


def responses_empty(response_id: str) -> Reply:
    """A Responses turn with neither text nor a call (LM Studio, llama.cpp)."""
    ev = ResponsesEvents(response_id).start()
    return Reply.sse(responses_stream(ev.finish()), api="responses")


def test_empty_responses_turn_is_retried_once(sims) -> None:
    with TestServer(Script([responses_empty("resp_e1"), text_reply("responses", "Here.")])) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/responses"))
        lines = ask(dut, "hello")
        assert answer_text(lines) == "Here." and not [x for x in lines if x.startswith("agent:")]
        reqs = srv.wait_for_requests(2)
        assert reqs[0].body == reqs[1].body  # the same request again, built anew
        srv.check()
    with TestServer(Script.repeat(responses_empty("resp_e2"))) as srv:
        dut.exec_command(f"agent config endpoint {srv.url('/v1/responses')}")
        lines = ask(dut, "hello")
        assert "agent: invalid response: the provider returned an empty turn twice" in lines
        assert len(srv.requests) == 2


def with_reasoning(reply: Reply, api: Api, usage: dict[str, int]) -> Reply:
    """@reply with its usage replaced by @usage (input, output, total, reasoning)."""
    frames = []
    for seg in reply.segments:
        text = seg.decode()
        if api == "chat" and '"usage":{' in text:
            obj = json.loads(text.removeprefix("data: "))
            obj["usage"] = {"prompt_tokens": usage["input"], "completion_tokens": usage["output"],
                            "total_tokens": usage["total"],
                            "completion_tokens_details": {"reasoning_tokens": usage["reasoning"]}}
            seg = data_frame(obj)
        elif api == "responses" and '"type":"response.completed"' in text:
            etype, _, data = text.partition("\ndata: ")
            obj = json.loads(data)
            obj["response"]["usage"] = {
                "input_tokens": usage["input"], "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": usage["output"], "total_tokens": usage["total"],
                "output_tokens_details": {"reasoning_tokens": usage["reasoning"]}}
            seg = data_frame(obj, event=etype.removeprefix("event: "))
        frames.append(seg)
    return Reply.sse(frames, api=reply.api)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_reasoning_tokens_in_the_token_line(sims, api: Api) -> None:
    """Reasoning tokens are shown as part of the output, so that input + output = total: as
    OpenAI counts them (in the output), and folded in from a server that counts them apart."""
    included = {"input": 10, "output": 520, "total": 530, "reasoning": 500}
    apart = {"input": 10, "output": 20, "total": 530, "reasoning": 500}
    none = {"input": 10, "output": 20, "total": 30, "reasoning": 0}
    base = text_reply(api, "Hi.")
    script = Script([with_reasoning(base, api, u) for u in (included, apart, none)])
    with_500 = "tokens: input 10, output 520 (reasoning 500), total 530"
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        assert token_lines(ask(dut, "a")) == [with_500]
        assert token_lines(ask(dut, "b")) == [with_500]
        assert token_lines(ask(dut, "c")) == ["tokens: input 10, output 20, total 30"]
        srv.check()


def token_lines(lines: list[str]) -> list[str]:
    return [x for x in lines if x.startswith("tokens: ")]
