"""The test server by hand: `python -m agent_host.testserver`, `agent-host serve`, script files."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_host import cli
from agent_host.errors import TestServerError
from agent_host.testserver import TestServer, resolve_fixture
from agent_host.testserver.command import add_arguments, build_script
from agent_host.testserver.scriptfile import load_script, script_from_data

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "stream": True}).encode()


def post(path: str, body: bytes = BODY) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def read_until_eof(sock: socket.socket) -> bytes:
    data = b""
    while True:
        part = sock.recv(65536)
        if not part:
            return data
        data += part


class Served:
    """A server process started by hand; its first stdout lines give the URL and CA."""

    def __init__(self, args: list[str], tmp: Path) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_host.testserver", "--duration", "60", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert self.proc.stdout is not None
        self.first = self.proc.stdout.readline()
        match = re.match(r"serving (https?)://127\.0\.0\.1:(\d+)/v1 ", self.first)
        assert match, self.first + self.stop()[1]
        self.scheme, self.port = match.group(1), int(match.group(2))

    def stop(self) -> tuple[str, str]:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=20)
        return out, err


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for srv in started:
        if srv.proc.poll() is None:
            srv.stop()


def test_module_help_works() -> None:
    out = subprocess.run([sys.executable, "-m", "agent_host.testserver", "--help"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "--fixture" in out and "--fault" in out and "--tls" in out


def test_agent_host_serve_subcommand_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["serve", "--help"])
    assert info.value.code == 0
    assert "--script" in capsys.readouterr().out
    assert cli.main(["serve", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "chat/openai_gpt4o_text_usage.sse" in listing and "http503_retry_after" in listing


def test_serve_without_anything_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve"]) == 1
    assert "nothing to serve" in capsys.readouterr().err


def test_serving_a_fixture_by_hand(served: list[Served], tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    fixture = "chat/openai_gpt4o_text_usage.sse"
    srv = Served(["--fixture", fixture, "--fault", "content-length", "--fault", "crlf",
                  "--record", str(record)], tmp_path)
    served.append(srv)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
        sock.sendall(post("/v1/chat/completions"))
        reply = read_until_eof(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert body == resolve_fixture(fixture).read_bytes().replace(b"\n", b"\r\n")
    _out, err = srv.stop()
    assert srv.proc.returncode == 0, err
    assert "POST /v1/chat/completions -> 200" in err
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    assert len(lines) == 1 and json.loads(lines[0]["body"]) == json.loads(BODY)


def test_serving_https_by_hand_with_ca_out(served: list[Served], tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    srv = Served(["--synth", "http503_retry_after", "--tls", "--ca-out", str(ca)], tmp_path)
    served.append(srv)
    assert srv.scheme == "https"
    assert srv.proc.stdout is not None
    assert srv.proc.stdout.readline() == f"CA certificate: {ca} (TLS mode valid)\n"
    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw, \
            ctx.wrap_socket(raw, server_hostname="localhost") as sock:
        sock.sendall(post("/v1/responses", b'{"model":"m","input":"hi","stream":true}'))
        reply = read_until_eof(sock)
    assert reply.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"\r\nRetry-After: 2\r\n" in reply
    srv.stop()
    assert srv.proc.returncode == 0


def test_script_file_dialogue(tmp_path: Path) -> None:
    script_file = tmp_path / "dialogue.json"
    script_file.write_text(json.dumps({
        "faults": ["content-length"],
        "turns": [
            {"fixture": "responses/openai_gpt4o_function_call_wire.sse",
             "expect": {"json": {"model": "gpt-4o"}, "headers": {"X-Test": "1"}}},
            {"synth": "http429_rate_limit", "faults": ["crlf"]},
            {"status": 200, "json": {"ok": True}, "headers": {"X-Extra": "yes"}},
            {"chat_chunks": [{"choices": [{"index": 0, "delta": {"content": "Hi"}}]}]},
            {"responses_events": [{"type": "response.created", "response": {"id": "r"}}]},
        ],
    }))
    script = load_script(script_file)
    assert len(script.turns) == 5 and not script.repeat_last
    replies = [t.reply for t in script.turns]
    assert replies[0].faults.framing == "content-length"
    assert replies[1].faults.eol == "crlf" and replies[1].status == 429
    assert ("X-Extra", "yes") in replies[2].headers
    assert replies[3].body.endswith(b"data: [DONE]\n\n")
    assert replies[4].body == (b'event: response.created\ndata: {"type":"response.created",'
                               b'"response":{"id":"r"}}\n\n')
    with TestServer(script) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
            sock.sendall(post("/v1/responses", b'{"model":"gpt-4o","input":"x","stream":true}'))
            first = read_until_eof(sock)
        assert first.startswith(b"HTTP/1.1 400 ")  # the X-Test header was missing
        assert "header X-Test: expected '1', got None" in srv.failures[0]


@pytest.mark.parametrize("data,message", [
    ({"turns": [{}]}, "needs exactly one of"),
    ({"turns": [{"synth": "nope"}]}, "no synthesized reply"),
    ({"turns": [{"fixture": "no_such_file.sse"}]}, "no fixture"),
    ({"turns": [{"json": {}, "status": "200"}]}, "status must be an integer"),
    ({"turns": [{"json": {}, "expect": {"body": 1}}]}, "expect must be an object"),
    ({"turns": [], "extra": 1}, "unknown keys"),
    ({"turns": [{"json": {}, "faults": ["bogus"]}]}, "bad fault"),
    ([], "expected an object"),
])
def test_script_errors(data: object, message: str, tmp_path: Path) -> None:
    with pytest.raises(TestServerError, match=message):
        script_from_data(data, tmp_path)


def test_command_line_dialogue_from_fixtures_and_synths() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([
        "--fixture", "openai_codexmax_reasoning_encrypted_tool_loop_4streams.jsonl",
        "--synth", "responses_incomplete", "--fault", "cr", "--no-repeat"])
    script = build_script(args)
    assert [t.reply.label for t in script.turns][-1] == "responses_incomplete"
    assert len(script.turns) == 5 and not script.repeat_last
    assert all(t.reply.faults.eol == "cr" for t in script.turns)
    with pytest.raises(TestServerError, match="either --script"):
        build_script(parser.parse_args(["--script", "x.json", "--synth", "http500_server_error"]))
