"""The memory figures of `agent status` and system_status after streamed requests (docs/jobs.md,
"Memory figures"): internal free memory and its largest block, the lowest internal free memory
seen while a response streamed in, PSRAM before and at the completion of the last request, the
request count, and the run-time heap of each class, all checked against one another and against
the pool lines, never against constants."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Reply, Script, TestServer, Turn, text_reply
from agent_host.testserver.dialogue import tool_call_reply
from test_ask import ask, configure
from tool_checks import last_result

CLASSES = ("internal", "psram")
_POOL = re.compile(r"pool:\s+(\S+)\s+(\d+)/(\d+) free \(lowest (\d+)\), (\d+) B blocks, (\w+); "
                   r"peak (\d+) B held, (\d+) B written$")
_HEAP = re.compile(r"heap:\s+(\w+) (\d+) of (\d+) B free, largest block (\d+) B, (\d+) B "
                   r"allocated \(peak (\d+) B\)$")
_FREE = re.compile(r"(\w+):\s+(\d+) B free, largest block (\d+) B; (.*)$")


@dataclass
class Pool:
    free_blocks: int
    blocks: int
    lowest: int
    block_bytes: int
    mem_class: str
    held_peak: int
    written_peak: int


@dataclass
class Heap:
    free: int
    total: int
    largest: int
    allocated: int
    peak: int


@dataclass
class Memory:
    """What `agent status` says about memory."""

    requests: int
    free: dict[str, int]
    largest: dict[str, int]
    lowest_streaming: int | None
    psram_before: int | None
    psram_at_completion: int | None
    heaps: dict[str, Heap | None]
    pools: dict[str, Pool]

    def pool_free(self, mem_class: str) -> int:
        return sum(p.free_blocks * p.block_bytes for p in self.pools.values()
                   if p.mem_class == mem_class)


def memory(dut: SimDevice) -> Memory:
    lines = dut.exec_command("agent status")
    requests = [int(m.group(1)) for x in lines
                if (m := re.fullmatch(r"requests:\s+(\d+) to the provider", x))]
    assert len(requests) == 1, lines
    free: dict[str, int] = {}
    largest: dict[str, int] = {}
    rest: dict[str, str] = {}
    heaps: dict[str, Heap | None] = {}
    pools: dict[str, Pool] = {}
    for line in lines:
        if (m := _FREE.fullmatch(line)) and m.group(1) in CLASSES:
            free[m.group(1)], largest[m.group(1)] = int(m.group(2)), int(m.group(3))
            rest[m.group(1)] = m.group(4)
        elif m := _HEAP.fullmatch(line):
            heaps[m.group(1)] = Heap(*(int(x) for x in m.groups()[1:]))
        elif m := re.fullmatch(r"heap:\s+(\w+) none", line):
            heaps[m.group(1)] = None
        elif m := _POOL.fullmatch(line):
            pools[m.group(1)] = Pool(int(m.group(2)), int(m.group(3)), int(m.group(4)),
                                     int(m.group(5)), m.group(6), int(m.group(7)),
                                     int(m.group(8)))
    assert set(free) == set(heaps) == set(CLASSES), lines
    lowest = re.fullmatch(r"lowest while streaming: (?:none yet|(\d+) B)", rest["internal"])
    last = re.fullmatch(r"last request: (?:none yet|(\d+) B before, (\d+) B at completion)",
                        rest["psram"])
    assert lowest and last, lines
    return Memory(requests[0], free, largest,
                  int(lowest.group(1)) if lowest.group(1) else None,
                  int(last.group(1)) if last.group(1) else None,
                  int(last.group(2)) if last.group(2) else None, heaps, pools)


def check_consistent(mem: Memory) -> None:
    """Each class: free memory is its heap's free bytes plus its pools' free blocks; the largest
    block is the heap's or a pool's; a heap's free and allocated bytes fit its size."""
    for c in CLASSES:
        heap = mem.heaps[c]
        heap_free = heap.free if heap is not None else 0
        assert mem.free[c] == heap_free + mem.pool_free(c), (c, mem)
        pool_largest = max((p.block_bytes for p in mem.pools.values()
                            if p.mem_class == c and p.free_blocks > 0), default=0)
        assert mem.largest[c] == max(heap.largest if heap else 0, pool_largest), (c, mem)
        if heap is not None:
            assert 0 < heap.free + heap.allocated <= heap.total, (c, heap)
            assert heap.largest <= heap.free and heap.allocated <= heap.peak, (c, heap)


def check_after_request(mem: Memory, requests: int) -> None:
    """After @requests streamed requests, the device idle again."""
    check_consistent(mem)
    assert mem.requests == requests
    assert mem.lowest_streaming is not None and mem.lowest_streaming <= mem.free["internal"]
    # The request gave every block back when it ended (docs/jobs.md): at completion, before
    # it and now the PSRAM pools are as free.
    assert mem.psram_before == mem.free["psram"]
    assert mem.psram_at_completion == mem.psram_before


def test_status_memory_before_any_request(dut: SimDevice) -> None:
    mem = memory(dut)
    check_consistent(mem)
    assert mem.requests == 0
    assert mem.lowest_streaming is None and mem.psram_before is None
    assert mem.heaps["internal"] is not None  # every image has a system heap


def test_status_memory_after_streamed_requests(sims) -> None:
    script = Script([text_reply("chat", "first"),
                     tool_call_reply("chat", "system_status", {}, "call_1"),
                     text_reply("chat", "second")])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        assert ask(dut, "hello")[0] == "first"
        one = memory(dut)
        check_after_request(one, 1)

        # A request with a system_status call: two HTTP requests; the tool reads the figures
        # after the first of them completed.
        assert "second" in ask(dut, "status")
        two = memory(dut)
        check_after_request(two, 3)
        # Held against written (providers.md "Memory of the stream path"): the text and the
        # call's arguments went straight out, into no block of the stream pool; the body's
        # block was taken for each request and only partly written.
        stream, body = two.pools["stream"], two.pools["request"]
        assert (stream.held_peak, stream.written_peak) == (0, 0), stream
        assert body.held_peak == body.block_bytes and 0 < body.written_peak < body.held_peak
        assert two.lowest_streaming is not None and one.lowest_streaming is not None
        assert two.lowest_streaming <= one.lowest_streaming
        status = last_result(srv.wait_for_requests(3)[2], "chat")
        assert isinstance(status, dict)
        assert status["requests"] == 2
        assert status["psram_free_bytes_before_last_request"] == two.psram_before
        assert status["psram_free_bytes_at_last_completion"] == two.psram_at_completion
        assert status["psram_free_bytes"] == two.free["psram"]
        lowest = status["internal_lowest_free_bytes_streaming"]
        assert isinstance(lowest, int) and two.lowest_streaming <= lowest <= one.lowest_streaming
        assert status["internal_free_bytes"] == status["memory"]["internal"]["free_bytes"]
        for c in CLASSES:
            block = status["memory"][c]
            assert block["free_bytes"] == (block["heap"] or {}).get("free_bytes", 0) + \
                block["pool_free_bytes"]
            assert (block["heap"] is None) == (two.heaps[c] is None)
            if block["heap"] is not None:
                assert block["heap"]["total_bytes"] == two.heaps[c].total


def test_each_http_request_is_counted(sims) -> None:
    """An empty turn is asked once more: one `agent ask`, one turn, two HTTP requests, and
    the count says 2 (test_ask.py test_empty_stateless_turn_is_retried_once)."""
    empty = Reply.sse([
        (b'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"},'
         b'"finish_reason":null}]}\n\n'),
        b'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ], api="chat")
    with TestServer(Script([Turn(empty), Turn(text_reply("chat", "counted"))])) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        assert ask(dut, "count")[0] == "counted"
        assert len(srv.requests) == 2
        mem = memory(dut)
        assert mem.requests == 2
        check_after_request(mem, 2)


@pytest.mark.sim_only("the simulator's heap: a plain TCP connection takes nothing from it "
                      "(docs/simulator.md)")
def test_plain_http_leaves_the_simulated_heap_alone(sims) -> None:
    with TestServer(Script.repeat(text_reply("chat", "plain"))) as srv:
        dut = sims.start()
        configure(dut, srv.url("/v1/chat/completions"))
        assert ask(dut, "hello")[0] == "plain"
        mem = memory(dut)
        heap = mem.heaps["internal"]
        assert heap is not None and heap.allocated == 0 and heap.peak == 0, heap
        assert mem.lowest_streaming == mem.free["internal"]


@pytest.mark.tls
@pytest.mark.sim_only("the simulator's heap: OpenSSL allocates a TLS connection's memory from "
                      "it (docs/simulator.md)")
def test_tls_request_memory_is_in_the_simulated_heap(sims) -> None:
    """Over TLS the heap holds what OpenSSL really allocates: while the response streams in,
    at least its two record buffers; more during the handshake; after the request the
    connection's memory is back, the first connection leaving OpenSSL's caches, and every
    later request returns the heap to that idle figure."""
    with TestServer(Script.repeat(text_reply("chat", "over tls")), tls="valid") as srv:
        dut = sims.start(["--ca", str(srv.ca_pem)])
        configure(dut, srv.url("/v1/chat/completions", host="localhost"))
        idle = memory(dut)
        assert idle.heaps["internal"] is not None and idle.heaps["internal"].allocated == 0
        assert ask(dut, "hello")[0] == "over tls"
        one = memory(dut)
        heap = one.heaps["internal"]
        assert heap is not None and one.lowest_streaming is not None
        held_streaming = idle.free["internal"] - one.lowest_streaming
        assert held_streaming >= 32 * 1024, one
        assert heap.peak > held_streaming, one
        assert 0 < heap.allocated < held_streaming, one  # the library's caches stay
        check_after_request(one, 1)
        for n in (2, 3):
            assert ask(dut, "again")[0] == "over tls"
            again = memory(dut)
            back = again.heaps["internal"]
            assert back is not None, again
            # Back at the idle figure, block for block (the peak moves by the few bytes a
            # handshake's sizes vary).
            assert (back.allocated, back.largest) == (heap.allocated, heap.largest), again
            assert again.free["internal"] == one.free["internal"]
            check_after_request(again, n)
