"""Stack use of the firmware's threads after a workload, measured on the device.

Zephyr paints every thread stack at creation (CONFIG_INIT_STACKS, implied by the kernel shell)
and `kernel thread stacks` reports how much of each is still unpainted. The agent's worker
is not listed once it has returned, so `agent status` reports its high-water mark from the
port's stack slots (`stack: worker peak N of M B`, app/src/port/zephyr/thread.c).

The workload covers the four threads the agent sizes (app/prj.conf, app/Kconfig):

- the shell thread: configuration commands, reference pages, the tool table, the status;
- the MCUmgr work queue: SMP requests of the agent group sent on the console (a settings
  write, the status, the conversation list), which run the group's handlers on its stack;
- the worker: an `agent ask` (on a target without a network it ends at the connection, so
  the TLS and streaming parts are measured by test_firmware_stream_stacks.py and
  test_firmware_tls_stacks.py: docs/zephyr-port.md, "Measured stacks and heaps");
- the system work queue: the Esc that closes that `agent ask`, alone in its read, ends the
  frontend from there (the console's wake-up, app/src/port/zephyr/console.c).

The figures go to build/zephyr/stacks-<platform>.json for the lane's summary and the docs.
Each measured stack must keep a quarter of its size unused (MARGIN). Only on a target whose
threads run on their Zephyr stacks (mps2/an385 under QEMU, a board): native_sim runs them on
host stacks, and the simulator has no kernel shell.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import smp.packet as smppacket
from agent_host.mgmt.messages import ConfigWrite, ConversationsRead, StatusRead

REPO_DIR = Path(__file__).resolve().parents[2]
MARGIN = 0.25
STACK = re.compile(r"^0x[0-9a-f]+ (?P<name>.+?)\s+\(real size\s+(?P<size>\d+)\):\s+unused\s+"
                   r"(?P<unused>\d+)\s+usage\s+(?P<used>\d+) /")
WORKER = re.compile(r"^stack:\s+worker peak (?P<used>\d+) of (?P<size>\d+) B$")
#: The threads whose stacks the project sizes: Zephyr's names for them. The system work queue
#: runs the console's wake-ups (an Esc that stayed alone ends a frontend there: app/prj.conf).
SIZED = ("shell_uart", "mcumgr smp", "sysworkq")


def send_smp(dut, request: object) -> None:  # type: ignore[no-untyped-def]
    """Write one SMP request on the console as the shell transport frames it."""
    for frame in smppacket.encode(bytes(request)):  # type: ignore[arg-type]
        dut.write(frame)
    time.sleep(0.5)


def parse_stacks(lines: list[str]) -> dict[str, dict[str, int]]:
    found = {}
    for line in lines:
        m = STACK.match(line.strip())
        if m:
            found[m["name"].strip()] = {"size": int(m["size"]), "used": int(m["used"])}
    return found


def measure_stacks(dut, sims, suffix: str) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    """Every thread's stack use (`kernel thread stacks`) and the worker's peak (`agent status`),
    written to build/zephyr/stacks-<platform><suffix>.json and printed; each stack the project
    sizes (SIZED and the worker) keeps MARGIN of its size unused."""
    stacks = parse_stacks(dut.exec_command("kernel thread stacks"))
    worker = [m for m in map(WORKER.match, dut.exec_command("agent status")) if m]
    assert worker, "agent status has no stack line: the port does not measure here"
    stacks["agent worker"] = {"size": int(worker[0]["size"]), "used": int(worker[0]["used"])}
    platform = str(getattr(sims, "platform", "") or "device").replace("/", "_")
    out = REPO_DIR / "build" / "zephyr" / f"stacks-{platform}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(stacks, indent=1, sort_keys=True) + "\n")
    print(json.dumps(stacks, indent=1, sort_keys=True))
    for name in (*SIZED, "agent worker"):
        assert name in stacks, (name, sorted(stacks))
        figure = stacks[name]
        assert 0 < figure["used"] <= (1 - MARGIN) * figure["size"], (name, figure)
    return stacks


@pytest.mark.firmware_only("Zephyr's kernel shell and painted stacks; the simulator has neither")
def test_stack_use_after_a_workload(sims) -> None:  # type: ignore[no-untyped-def]
    dut = sims.start()
    dut.exec_command("agent config endpoint http://127.0.0.1:9/v1/chat/completions")
    dut.exec_command("agent config model test-model")
    dut.exec_command("agent config key sk-stack-test")
    dut.exec_command("agent config user " + "u" * 40)
    for page in ("agent", "agent-config", "tls"):
        dut.exec_command(f"man {page}", timeout=20.0)
    dut.exec_command("man -k storage settings tls", timeout=20.0)
    dut.exec_command("agent tools", timeout=20.0)
    dut.exec_command("agent list")
    idle = parse_stacks(dut.exec_command("kernel thread stacks"))
    send_smp(dut, ConfigWrite(name="model", value="smp-model"))
    send_smp(dut, StatusRead())
    send_smp(dut, ConversationsRead())
    mark = len(dut.transcript)
    dut.write(b"agent ask how deep is the stack\r")
    dut.read_until(b"[Esc or Ctrl-X returns to the shell]", 30.0, start=mark)
    dut.write(b"\x1b")
    dut.drain()

    stacks = measure_stacks(dut, sims, "")
    # The SMP requests ran on the work queue (the model was set through them) and used more of
    # its stack than before them.
    assert stacks["mcumgr smp"]["used"] > idle["mcumgr smp"]["used"], (idle, stacks)
    assert any("smp-model" in x for x in dut.exec_command("agent status"))
