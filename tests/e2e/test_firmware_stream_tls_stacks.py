"""The agent worker's stack through HTTPS with tools, measured on a Cortex-M target.

agent.e2e.tls measures the worker through TLS on native_sim, whose frames are the host's
(x86-64) and whose name lookup is the host C library's. This file runs in the Twister
scenario agent.e2e.qemu.stream.tls (twister_tests/agent/testcase.yaml): mps2/an385 under QEMU
(Cortex-M3) with the product's overlay-tls.conf, and the image's test-only stream server
(twister_tests/agent/stream_server.c) answering over TLS on 192.0.2.1:8443 with a certificate
the build's test CA signed for that address (stream_cert.py); the agent trusts that CA
(AGENT_EXTRA_CA) and checks the address against the certificate. Mbed TLS takes its random
data from a test-only source that is not random (test_entropy.c): this image is for measuring,
nothing in it is secure.

Each `agent ask` runs Zephyr's TLS client in zsock_connect() (the handshake: ECDHE, the
server's ECDSA signature, the chain to the test CA), then the encrypted request and the
chunked SSE body, on the worker. The /tools/ dialogue (stream_dialogue.py) runs tool_search and
storage_list on the worker between three HTTPS requests, once per API. Then `agent status`
gives the worker's peak and `kernel thread stacks` the others'
(build/zephyr/stacks-<platform>-stream-tls.json), and `port_measure` the peak of Mbed TLS's
heap, which here holds both ends of every connection, the client's and the server's
(build/zephyr/tls-heap-<platform>-both-ends.json).

The worker must stay within issue 16's goal, 8 KiB with TLS, and every sized stack keeps a
quarter free. This scenario gives the worker 16 KiB (stream_tls.conf) so that a deeper
handshake shows as a figure, not as a fault.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_firmware_stacks import measure_stacks
from test_firmware_stream_stacks import ask
from test_firmware_tls_stacks import tls_heap

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "twister_tests" / "agent"))
from stream_dialogue import ANSWER, CALLS

REPO_DIR = Path(__file__).resolve().parents[2]
BASE = "https://192.0.2.1:8443"
#: Issue 16: the worker's stack, TLS included, measured on the firmware.
WORKER_GOAL = 8192


@pytest.mark.firmware_only("the image's own TLS stream server and painted stacks (QEMU image)")
def test_worker_stack_through_https_with_tools(sims) -> None:  # type: ignore[no-untyped-def]
    dut = sims.start()
    dut.exec_command("agent config model test-model")
    dut.exec_command("agent config key sk-stream-tls-test")
    want = []
    for name, args in CALLS:
        want += [f"[tool call] {name} {json.dumps(args, separators=(',', ':'))}",
                 f"[tool] {name}: done"]
    for api_path in ("/tools/v1/chat/completions", "/tools/v1/responses"):
        assert dut.exec_command(f"agent config endpoint {BASE}{api_path}")[0].startswith(
            "endpoint set")
        lines = ask(dut, "list the files", timeout=300.0)
        assert lines[: len(want)] == want, lines
        assert ANSWER in lines, lines
        print(api_path, lines)

    stacks = measure_stacks(dut, sims, "-stream-tls")
    worker = stacks["agent worker"]
    assert worker["used"] <= WORKER_GOAL, (
        f"the worker's stack through TLS is {worker['used']} B, above the {WORKER_GOAL} B goal")
    heap = tls_heap(dut.exec_command("port_measure"))
    assert 0 < heap["bound"] <= heap["size"], heap
    platform = str(getattr(sims, "platform", "") or "device").replace("/", "_")
    out = REPO_DIR / "build" / "zephyr" / f"tls-heap-{platform}-both-ends.json"
    out.write_text(json.dumps(heap, indent=1, sort_keys=True) + "\n")
    print(json.dumps(heap, indent=1, sort_keys=True))
