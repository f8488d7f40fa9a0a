"""The memory figures of `agent status` on a Cortex-M target, before and after streamed
requests (docs/jobs.md, "Memory figures"), as test_status_memory.py checks them on the
simulator and native_sim.

mps2/an385 under QEMU reaches no test server on the host: the Twister scenario
agent.e2e.qemu.stream builds the image with a test-only thread that serves recorded streams on
the image's own address (test_firmware_stream_stacks.py says how). Its text route answers
`agent ask` with a recorded Chat Completions stream.
"""

from __future__ import annotations

import pytest
from test_firmware_stream_stacks import BASE, ask
from test_status_memory import check_after_request, check_consistent, memory


@pytest.mark.firmware_only("the image's own stream server (QEMU image)")
def test_status_memory_through_the_stream_path(sims) -> None:  # type: ignore[no-untyped-def]
    dut = sims.start()
    before = memory(dut)
    check_consistent(before)
    assert before.requests == 0 and before.lowest_streaming is None
    assert before.psram_before is None and before.heaps["internal"] is not None
    dut.exec_command("agent config model test-model")
    dut.exec_command("agent config key sk-stream-test")
    assert dut.exec_command(f"agent config endpoint {BASE}/text/v1/chat/completions")[0] \
        .startswith("endpoint set")
    for number in (1, 2):
        assert ask(dut, f"status {number}"), "no answer"
        check_after_request(memory(dut), number)
