"""The worker's stack and Mbed TLS's heap through HTTPS requests with a tool call, measured.

Runs in the Twister scenario agent.e2e.tls (native_sim/native/64 with app/overlay-tls.conf, the
build's test CA, and CONFIG_MBEDTLS_MEMORY_DEBUG for the heap counters: twister_tests/agent/
testcase.yaml). For each API (Chat Completions, Responses) an `agent ask` over HTTPS to the test
server streams a tool_search call, runs it, streams a storage_list call, runs it and streams the
answer (the dialogue of twister_tests/agent/stream_dialogue.py, as on the QEMU image): the TLS
handshake (zsock_connect() on the worker, app/src/port/zephyr/net.c), the encrypted
request and the chunked SSE body all run on the worker thread. Then:

- `agent status` gives the worker's peak, after the same dialogue over plain HTTP first (the
  figure without TLS on the same image) and after the HTTPS ones (`stack: worker peak N of M B`). native_sim runs the
  worker on a host stack, which the port paints and reads (app/src/port/zephyr/thread.c), so
  the figure is the host ABI's (x86-64 frames and the host C library's socket calls through
  NSOS), not a Cortex-M one; test_firmware_stream_tls_stacks.py measures the same dialogue
  over TLS on mps2/an385 (docs/zephyr-port.md, "Measured stacks and heaps").
- `port_measure` (app/src/port/zephyr/port_measure.c, test builds only) gives the peak of Mbed
  TLS's heap (bytes and blocks handed out, and the header each block takes) and the deepest the
  worker's stack went inside a connect, plain and with TLS (the handshake runs in zsock_connect()),
  counted from the worker's entry: the TLS handshake's own stack.

The figures go to build/zephyr/stacks-<platform>-tls.json and tls-heap-<platform>.json (the
lane prints both). The worker's stack and the heap must each keep MARGIN of their size unused.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.twister_tls import CaFiles, image_test_ca
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from test_firmware_stacks import MARGIN, WORKER
from tool_checks import API_PATH, APIS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "twister_tests" / "agent"))
from stream_dialogue import ANSWER, CALLS

REPO_DIR = Path(__file__).resolve().parents[2]
CONNECT = re.compile(r"^connect stack: tcp (?P<tcp>\d+) B \((?P<tcp_own>\d+) B in the call\), "
                     r"tls (?P<tls>\d+) B \((?P<tls_own>\d+) B in the call\)$")
RESOLVE = re.compile(r"^resolve stack: (?P<resolve>\d+) B \((?P<resolve_own>\d+) B in the call\)$")
HEAP = re.compile(r"^tls heap: peak (?P<peak>\d+) B in (?P<blocks>\d+) blocks, now (?P<now>\d+) B "
                  r"in (?P<now_blocks>\d+) blocks, block header (?P<header>\d+) B, "
                  r"size (?P<size>\d+) B$")


def connect_stack(lines: list[str]) -> dict[str, int]:
    """The `connect stack` and `resolve stack` lines of `port_measure`: bytes below the
    worker's entry, and the call's own (`_own`)."""
    figures = {}
    for pattern in (CONNECT, RESOLVE):
        found = [m for m in (pattern.match(x.strip()) for x in lines) if m]
        assert found, lines
        figures.update({k: int(v) for k, v in found[0].groupdict().items()})
    return figures


def tls_heap(lines: list[str]) -> dict[str, int]:
    """The `tls heap` line of `port_measure`, with `bound`: peak bytes plus the peak blocks'
    headers, the most of the heap's array in use at once."""
    found = [m for m in (HEAP.match(x.strip()) for x in lines) if m]
    assert found, lines
    figures = {k: int(v) for k, v in found[0].groupdict().items()}
    figures["bound"] = figures["peak"] + figures["blocks"] * figures["header"]
    return figures


def worker_stack(lines: list[str]) -> dict[str, int]:
    found = [m for m in (WORKER.match(x.strip()) for x in lines) if m]
    assert found, "agent status has no stack line: the port does not measure here"
    return {"size": int(found[0]["size"]), "used": int(found[0]["used"])}


def within_margin(used: int, size: int) -> bool:
    return 0 < used <= (1 - MARGIN) * size


def test_margin_check_at_the_bound() -> None:
    assert within_margin(3072, 4096)  # exactly a quarter free
    assert not within_margin(3073, 4096)
    assert not within_margin(0, 4096)  # nothing measured is no figure


def dialogue(api: Api) -> tuple[Script, list[str]]:
    """The test server's turns for one `agent ask` that runs two device tools (the dialogue of
    the QEMU image's stream server, twister_tests/agent/stream_dialogue.py), and the lines the
    ask must print first."""
    replies = [tool_call_reply(api, name, args, f"call_{n}", response_id=f"resp_{n}",
                               usage=(100 + n, 7)) for n, (name, args) in enumerate(CALLS)]
    replies.append(text_reply(api, ANSWER, response_id="resp_answer", usage=(140, 11)))
    want = []
    for name, args in CALLS:
        want += [f"[tool call] {name} {json.dumps(args, separators=(',', ':'))}",
                 f"[tool] {name}: done"]
    return Script(replies), want


def ask_with_tools(dut, api: Api, ca: CaFiles | None) -> None:  # type: ignore[no-untyped-def]
    """One `agent ask` of dialogue(@api) against a test server: HTTPS signed by @ca, or plain
    HTTP when @ca is None."""
    script, want = dialogue(api)
    with TestServer(script, tls="valid" if ca else None, tls_ca=ca) as srv:
        configure(dut, srv.url(API_PATH[api], host="localhost"))
        run = ask(dut, f"list the files over {api}")
        reqs = srv.wait_for_requests(len(CALLS) + 1)
        srv.check()
    assert all(r.tls == (ca is not None) for r in reqs)
    assert run.lines[: len(want)] == want, run.text
    assert ANSWER in run.lines, run.text


@pytest.mark.tls
@pytest.mark.firmware_only("Mbed TLS's heap and the port's stack figure are the firmware's")
def test_worker_stack_and_tls_heap_through_https_with_tools(sims) -> None:  # type: ignore[no-untyped-def]
    ca = image_test_ca(sims.build_dir)
    dut = sims.start()
    # Plain HTTP first, on the same image: the worker's figure without the TLS layer.
    ask_with_tools(dut, "chat", None)
    plain = worker_stack(dut.exec_command("agent status"))
    for api in APIS:
        ask_with_tools(dut, api, ca)
    stack = worker_stack(dut.exec_command("agent status"))
    measured = dut.exec_command("port_measure")
    heap = tls_heap(measured)
    connect = connect_stack(measured)
    platform = str(getattr(sims, "platform", "") or "device").replace("/", "_")
    out = REPO_DIR / "build" / "zephyr"
    out.mkdir(parents=True, exist_ok=True)
    figures = {"agent worker, http": plain, "agent worker, https": stack,
               "agent worker, tcp connect": {"size": stack["size"], "used": connect["tcp"]},
               "agent worker, tls connect": {"size": stack["size"], "used": connect["tls"]},
               "tcp connect alone": {"size": stack["size"], "used": connect["tcp_own"]},
               "tls connect alone": {"size": stack["size"], "used": connect["tls_own"]},
               "agent worker, resolve": {"size": stack["size"], "used": connect["resolve"]},
               "resolve alone": {"size": stack["size"], "used": connect["resolve_own"]}}
    (out / f"stacks-{platform}-tls.json").write_text(json.dumps(figures, indent=1,
                                                                sort_keys=True) + "\n")
    (out / f"tls-heap-{platform}.json").write_text(json.dumps(heap, indent=1, sort_keys=True)
                                                  + "\n")
    print(json.dumps({**figures, "tls heap": heap}, indent=1, sort_keys=True))
    assert 0 < plain["used"] <= stack["used"], figures
    assert 0 < connect["tcp_own"] < connect["tls_own"], figures  # the handshake takes more
    assert max(connect["tcp"], connect["tls"], connect["resolve"]) <= stack["used"], figures
    assert within_margin(stack["used"], stack["size"]), stack
    assert within_margin(heap["bound"], heap["size"]), heap
    assert heap["now"] < heap["peak"]  # the connections' memory went back
