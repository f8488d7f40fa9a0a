"""The agent worker's stack through the whole streaming path, measured on a Cortex-M target.

mps2/an385 under QEMU has no network, so test_firmware_stacks.py's `agent ask` ends at the
connection. The Twister scenario agent.e2e.qemu.stream (twister_tests/agent/testcase.yaml)
builds the image with Zephyr's IP stack and a test-only thread that serves recorded streams
on the image's own address, 192.0.2.1:8080 (twister_tests/agent/stream_server.c and
stream.conf; nothing of it is in the product image). Its routes
(twister_tests/agent/CMakeLists.txt) are ROUTES below: each `agent ask` here sends the HTTP
request, reads the chunked SSE body, parses the provider's JSON and handles the tool calls on
the worker's stack, and its output must be the plain reading of the recording
(test_ask.check_turn). The recorded tools are not the device's (the loop refuses them), so two
more `agent ask`s, one per API, play the /tools/ dialogue of twister_tests/agent/
stream_dialogue.py: tool_search and storage_list run on the worker between three streamed
requests. Then `agent status` gives the worker's
high-water mark and `kernel thread stacks` the others'; the figures go to
build/zephyr/stacks-<platform>-stream.json (scripts/zephyr_lane.py prints every
stacks-*.json), and each sized stack must keep a quarter free. No TLS in this image.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from agent_host.testserver import expected_outcome, fixtures_dir
from test_ask import check_turn
from test_firmware_stacks import measure_stacks

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "twister_tests" / "agent"))
from stream_dialogue import ANSWER, CALLS

END = b"[Esc or Ctrl-X returns to the shell]"
BASE = "http://192.0.2.1:8080"
#: Request path -> recording, as the image's stream server routes them.
ROUTES = {
    "/v1/chat/completions": "chat/openai_gpt4o_tool_single.sse",
    "/text/v1/chat/completions": "chat/openai_gpt4o_text_usage.sse",
    "/v1/responses": "responses/openai_gpt4o_function_call_wire.sse",
    "/text/v1/responses": "responses/openai_gpt4o_after_function_call_output_wire.sse",
}


def ask(dut, prompt: str, timeout: float = 120.0) -> list[str]:  # type: ignore[no-untyped-def]
    """`agent ask` on the line-based device: its output lines after the echo; Esc after."""
    mark = len(dut.transcript)
    dut.write(f"agent ask {prompt}\r".encode())
    out = dut.read_until(END, timeout, start=mark)
    dut.write(b"\x1b")
    dut.drain()
    lines = out[: out.rfind(END)].decode(errors="replace").split("\r\n")
    start = next(i for i, x in enumerate(lines) if f"agent ask {prompt}" in x)
    return [x for x in lines[start + 1:] if x]


@pytest.mark.firmware_only("the image's own stream server and painted stacks (QEMU image)")
def test_worker_stack_through_the_stream_path(sims) -> None:  # type: ignore[no-untyped-def]
    dut = sims.start()
    dut.exec_command("agent config model test-model")
    dut.exec_command("agent config key sk-stream-test")
    for number, (path, recording) in enumerate(ROUTES.items()):
        assert dut.exec_command(f"agent config endpoint {BASE}{path}")[0].startswith(
            "endpoint set")
        # A short prompt: the shell breaks a longer echo at 80 columns.
        lines = ask(dut, f"stream {number}")
        expected = expected_outcome(fixtures_dir() / recording)
        turns = expected["turns"]
        assert isinstance(turns, list) and len(turns) == 1
        check_turn(lines, expected, turns[0])
        print(path, recording, lines)
    # Device tools between streamed requests: the /tools/ dialogue (stream_dialogue.py) calls
    # tool_search, then storage_list, then answers; both tools run on the worker.
    for api_path in ("/tools/v1/chat/completions", "/tools/v1/responses"):
        assert dut.exec_command(f"agent config endpoint {BASE}{api_path}")[0].startswith(
            "endpoint set")
        lines = ask(dut, "list the files")
        want = []
        for name, args in CALLS:
            want += [f"[tool call] {name} {json.dumps(args, separators=(',', ':'))}",
                     f"[tool] {name}: done"]
        assert lines[: len(want)] == want, lines
        assert ANSWER in lines, lines
        print(api_path, lines)

    measure_stacks(dut, sims, "-stream")
