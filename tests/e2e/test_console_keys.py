"""Keys at the console that used to hold or eat input (docs/chat.md "Keys", docs/mgmt-group.md
"Transport"): the SMP frame markers typed by hand, the Esc key at the shell prompt, and an Esc
key or a cursor key whose bytes come in separate reads at `agent ask` and at the hidden key
prompt (agent_keys.h: ESC followed by more within 100 ms is one key, ESC alone is Esc)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply
from chat_term import stall_before_end

REPO_DIR = Path(__file__).resolve().parents[2]
ESC = b"\x1b"
#: AGENT_KEY_ESC_TIMEOUT_MS: the rest of a key comes within it; an Esc waits longer.
ESC_TIMEOUT_S = 0.1
#: MGMT_SERIAL_INPUT_TIMEOUT_MS and the firmware's CONFIG_MCUMGR_TRANSPORT_SHELL_INPUT_TIMEOUT_TIME.
SMP_LINE_TIMEOUT_S = 1.0
CANCELLED = b"agent: cancelled\r\n"
#: A gap well inside the Esc timeout, as a UART hands over the bytes of one key.
SPLIT_S = 0.02


def test_the_two_smp_line_timeouts_agree() -> None:
    """The simulator's bound and the firmware's are the same number."""
    header = (REPO_DIR / "app/src/agent/mgmt/mgmt_serial.h").read_text()
    conf = (REPO_DIR / "app/prj.conf").read_text()
    sim = re.search(r"#define MGMT_SERIAL_INPUT_TIMEOUT_MS (\d+)", header)
    fw = re.search(r"^CONFIG_MCUMGR_TRANSPORT_SHELL_INPUT_TIMEOUT_TIME=(\d+)$", conf,
                   re.MULTILINE)
    assert sim and fw and "CONFIG_MCUMGR_TRANSPORT_SHELL_INPUT_TIMEOUT=y" in conf
    assert int(sim[1]) == int(fw[1]) == SMP_LINE_TIMEOUT_S * 1000


@pytest.mark.parametrize("markers", [b"\x06\x09", b"\x04\x14"], ids=["ctrl-f-tab", "ctrl-d-ctrl-t"])
def test_smp_markers_typed_by_hand_do_not_hold_the_console(dut: SimDevice, markers: bytes
                                                           ) -> None:
    """Ctrl-F Tab and Ctrl-D Ctrl-T start an SMP frame line; one that never ends is dropped
    after the line timeout and the next command runs (it used to wait for a Ctrl-J).

    On native_sim the shell's UART is polled and Zephyr's SMP transport reads no frames from
    it (subsys/shell/backends/shell_uart.c), so the keys are the shell's there; QEMU's UART
    and a board's carry frames, as the simulator's console does."""
    dut.write(markers)
    dut.drain(SMP_LINE_TIMEOUT_S + 1.0)  # the shell's echo of the keys, where it has them
    assert dut.exec_command("agent config user kept") == ["user set to kept"]
    assert "user:      kept" in dut.exec_command("agent status")


@pytest.mark.sim_only("Zephyr's shell takes ESC and the next key as Alt with that key, however "
                      "late the key comes (docs/zephyr-port.md, 'Console')")
def test_esc_at_the_shell_prompt_does_not_eat_the_next_key(dut: SimDevice) -> None:
    dut.write(ESC)
    time.sleep(ESC_TIMEOUT_S + 0.1)
    assert dut.exec_command("help")[0] == "Available commands:"
    # Within the timeout ESC and a letter are one key (Alt with it), and cursor keys split
    # over two reads are still keys: neither types anything.
    dut.write(ESC)
    time.sleep(SPLIT_S)
    dut.write(b"[A")
    dut.write(b"\x1bx")
    assert dut.exec_command("help")[0] == "Available commands:"


def configure(dut: SimDevice, url: str) -> None:
    for command in (f"agent config endpoint {url}", "agent config model test-model",
                    "agent config key clear"):
        dut.exec_command(command)


@pytest.mark.needs_raw_console("waits for the text of a request that has not ended")
def test_split_cursor_key_does_not_leave_agent_ask(sims) -> None:
    """ESC, then "[A" 20 ms later: a cursor key, not Esc; `agent ask` goes on. Esc alone then
    cancels it and returns to the shell without waiting for another key."""
    reply = stall_before_end(text_reply("chat", "Partial answer", response_id="r"), "chat")
    with TestServer(Script([reply])) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        mark = len(dut.transcript)
        dut.write(b"agent ask hello\r")
        dut.read_until(b"Partial answer", 20, start=mark)
        dut.write(ESC)
        time.sleep(SPLIT_S)
        dut.write(b"[A")
        dut.drain(ESC_TIMEOUT_S * 5)
        assert CANCELLED not in dut.transcript[mark:], bytes(dut.transcript[mark:])
        began = time.monotonic()
        dut.write(ESC)
        dut.read_until(CANCELLED, 5, start=mark)
        dut.read_until(PROMPT, 5, start=dut.transcript.index(CANCELLED, mark) + len(CANCELLED))
        assert time.monotonic() - began < 1.5
    assert dut.exec_command("agent config user back") == ["user set to back"]


@pytest.mark.needs_raw_console("waits for the hidden prompt, which does not end its line")
def test_hidden_key_prompt_keys_split_over_reads(dut: SimDevice) -> None:
    """At the hidden key prompt a lone Esc cancels without another key, and so does a cursor
    key whose ESC comes in a read of its own: the rest of that key does not reach the shell
    (it used to be typed there, in front of the next command)."""
    for after_esc in (b"", b"[A"):
        mark = len(dut.transcript)
        dut.write(b"agent config key\r")
        dut.read_until(b"Esc cancels): ", start=mark)
        dut.write(b"sk-abc" + ESC)
        if after_esc:
            time.sleep(SPLIT_S)
            dut.write(after_esc)
        dut.read_until(b"cancelled; key unchanged", 5, start=mark)
        dut.read_until(PROMPT, 5, start=mark)
        assert "key:       not set" in dut.exec_command("agent status")
