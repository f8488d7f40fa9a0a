#!/usr/bin/env python3
"""Benchmark of the device's stream path (HTTP -> SSE -> streaming JSON -> adapter).

For each recorded stream (host/agent_host/testserver/recorded/, or $AGENT_OPENAI_FIXTURES)
and a synthetic stream whose single `response.completed` event is 1 MiB, the benchmark driver
tests/bench/stream_bench runs provider turns against the test server on loopback, under
`valgrind --tool=callgrind`. The instructions of one turn are the difference between a run of
1 + N turns and a run of 1 turn, divided by N, so start-up is not counted. Prints a Markdown
table: bytes streamed, instructions per KiB, and the peak bytes the stream path's pools held.

This measures; it asserts nothing (tests/test_bench_stream.py checks that it runs).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "host"))

from agent_host.sim import build as build_sim
from agent_host.testserver import (
    Reply,
    Script,
    TestServer,
    expected_outcome,
    fixture_files,
    fixture_replies,
)

API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
BIG_EVENT_BYTES = 1 << 20


def big_event_reply() -> Reply:
    """A short text answer whose response.completed repeats a 1 MiB output item."""
    created = {"type": "response.created",
               "response": {"id": "resp_big", "status": "in_progress", "output": []}}
    frames: list[dict[str, Any]] = [created,
              {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
               "item_id": "msg_big", "delta": "Hello"},
              {"type": "response.completed",
               "response": {"id": "resp_big", "status": "completed",
                            "output": [{"type": "message", "id": "msg_big", "content": [
                                {"type": "output_text", "text": "x" * BIG_EVENT_BYTES}]}],
                            "usage": {"input_tokens": 1, "output_tokens": 1,
                                      "total_tokens": 2}}}]
    segments = [f"event: {f['type']}\ndata: {json.dumps(f)}\n\n".encode() for f in frames]
    return Reply.sse(segments, api="responses", label="synthetic 1 MiB event")


def instructions(exe: Path, url: str, reps: int) -> int:
    """Instructions (Ir) callgrind counted for a run of `reps` turns."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(exe), url,
         str(reps)], capture_output=True, text=True, check=False, timeout=600)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"callgrind run failed:\n{result.stdout}\n{result.stderr}")
    if "errors=0" not in result.stdout:
        raise SystemExit(f"the stream path reported an error:\n{result.stdout}")
    return int(match.group(1))


def run_driver(exe: Path, url: str) -> dict[str, str]:
    out = subprocess.run([str(exe), url, "1"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


def measure(exe: Path, label: str, api: str, reply: Reply, reps: int) -> dict[str, object]:
    with TestServer(Script.repeat(reply), validate=False) as srv:
        url = srv.url(API_PATH[api])
        stats = run_driver(exe, url)
        one = instructions(exe, url, 1)
        many = instructions(exe, url, 1 + reps)
    per_turn = (many - one) / reps
    body = len(reply.body)
    return {"stream": label, "bytes": body, "ir_per_kib": per_turn / (body / 1024),
            "peak_pool_bytes": int(stats["peak_pool_bytes"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "bench",
                        help="CMake build directory (a Release build without sanitizers)")
    parser.add_argument("--reps", type=int, default=5, help="turns per measured run")
    parser.add_argument("--quick", action="store_true", help="two fixtures and the 1 MiB event")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    build_sim(args.build_dir, sanitize=False, quiet=True, build_type="Release",
              targets=("stream_bench",))
    exe = args.build_dir / "stream_bench"
    rows = []
    files = fixture_files()
    if args.quick:
        files = [f for f in files if f.name in ("openai_gpt4o_text_usage.sse",
                                                "openai_gpt4o_function_call_wire.sse")]
    for path in files:
        replies = fixture_replies(path)
        turns = expected_outcome(path)["turns"]
        if path.suffix == ".json" or len(replies) != 1 or not isinstance(turns, list) or any(
                isinstance(t, dict) and t.get("error") for t in turns):
            continue  # error bodies, multi-stream files and failing turns are not measured
        rows.append(measure(exe, f"{path.parent.name}/{path.name}", path.parent.name,
                            replies[0], args.reps))
    rows.append(measure(exe, "synthetic: one 1 MiB response.completed", "responses",
                        big_event_reply(), 1))
    print("| stream | bytes | instructions per KiB | peak stream-path pool bytes |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['stream']} | {r['bytes']} | {r['ir_per_kib']:.0f} | {r['peak_pool_bytes']} |")
    total_bytes = sum(int(str(r["bytes"])) for r in rows[:-1])
    if total_bytes:
        weighted = sum(float(str(r["ir_per_kib"])) * int(str(r["bytes"])) for r in rows[:-1])
        print(f"\nfixture corpus: {total_bytes} bytes, {weighted / total_bytes:.0f} "
              "instructions per KiB (weighted by size)")
    peaks = {r["peak_pool_bytes"] for r in rows}
    print(f"peak stream-path pool bytes over all streams: {max(int(str(p)) for p in peaks)}"
          f" ({'the same for every stream' if len(peaks) == 1 else 'differs by stream'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
