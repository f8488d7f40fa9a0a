#!/usr/bin/env python3
"""Benchmark of the device's stream path (HTTP -> SSE -> streaming JSON -> adapter).

For each recorded stream (host/agent_host/testserver/recorded/, or $AGENT_OPENAI_FIXTURES)
and synthetic ones (a single 1 MiB `response.completed` event, a 4 KB tool call on both
protocols, keys out of order on both protocols), served by the test server on loopback:

* tests/bench/stream_bench runs one provider turn and prints key=value figures (text, calls,
  the stream path's memory); every figure it prints becomes a column of the table;
* tests/bench/stream_ref_bench runs, under `valgrind --tool=callgrind`, the core's stream path
  (mode `core`) and a reference pipeline of the spec's design (mode `ref`: a 24 KiB line buffer
  and cJSON per event) on the same stream over the same HTTP client. Instructions are counted
  inside http_post() only (--toggle-collect), so both sides pay the same socket reads and
  de-chunking and differ only in the stream parsing; request building and start-up are not
  counted. One turn's instructions are the difference between a run of 1 + N turns and a run
  of 1 turn, divided by N, so first-call costs (lazy binding) are not counted either.

Both modes print what the turn produced (text and reasoning bytes and hashes, tool calls,
usage, response id); the benchmark fails unless they agree for every stream, so the two sides
do equal work. Prints a Markdown table (instructions per KiB of each side and the ratio core /
reference), the size-weighted ratio of the recorded corpus, and fails (exit 1) when that ratio
exceeds --max-ratio. Needs valgrind and cJSON (Debian: valgrind, libcjson-dev).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
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
TOOL_ARGS_BYTES = 4000  # the 4 KB tool call (the spec's bound is 4095)
QUICK_FIXTURES = ("openai_gpt4o_text_usage.sse", "openai_gpt4o_function_call_wire.sse")
# What the two pipelines must agree on (the rest of their line is their own figures).
OUTPUT_KEYS = ("text_bytes", "text_hash", "reasoning_bytes", "reasoning_hash", "calls",
               "calls_hash", "usage", "response_id", "finish", "errors")
# The function inside which instructions are counted, the same in both pipelines.
COUNTED = "http_post"


def sse_frames(frames: list[dict[str, Any]], api: str, done: bool = False) -> list[bytes]:
    """LF-form SSE frames: Responses events carry an event line, Chat chunks do not."""
    out = [(f"event: {f['type']}\n" if api == "responses" else "") + f"data: {json.dumps(f)}\n\n"
           for f in frames]
    return [x.encode() for x in out] + ([b"data: [DONE]\n\n"] if done else [])


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
    return Reply.sse(sse_frames(frames, "responses"), api="responses",
                     label="synthetic 1 MiB event")


def tool_arguments() -> str:
    """JSON arguments of TOOL_ARGS_BYTES bytes: a file write with quotes and new lines."""
    content = 'print("hello, world")\n' * (TOOL_ARGS_BYTES // 20)
    while len(json.dumps({"path": "/lfs/main.py", "content": content})) > TOOL_ARGS_BYTES:
        content = content[:-1]
    while len(json.dumps({"path": "/lfs/main.py", "content": content})) < TOOL_ARGS_BYTES:
        content += "#"
    return json.dumps({"path": "/lfs/main.py", "content": content})


def pieces(text: str, size: int = 64) -> list[str]:
    """The text in deltas of `size` characters, as servers stream arguments."""
    return [text[i:i + size] for i in range(0, len(text), size)]


def tool_call_reply(api: str) -> Reply:
    """One tool call whose arguments are TOOL_ARGS_BYTES bytes, streamed in small deltas."""
    args = tool_arguments()
    assert len(args.encode()) == TOOL_ARGS_BYTES
    if api == "chat":
        base = {"id": "chatcmpl-4k", "object": "chat.completion.chunk", "created": 1,
                "model": "bench"}
        first = {"index": 0, "id": "call_4k", "type": "function",
                 "function": {"name": "storage_write", "arguments": ""}}
        chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                              "tool_calls": [first]},
                                        "finish_reason": None}]}]
        chunks += [{**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": p}}]}, "finish_reason": None}]}
            for p in pieces(args)]
        chunks.append({**base, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls"}]})
        chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 10,
                                                        "completion_tokens": 1000,
                                                        "total_tokens": 1010}})
        return Reply.sse(sse_frames(chunks, "chat", done=True), api="chat",
                         label="synthetic: 4 KB tool call (chat)")
    item = {"type": "function_call", "id": "fc_4k", "call_id": "call_4k",
            "name": "storage_write", "arguments": "", "status": "in_progress"}
    frames: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_4k", "status": "in_progress",
                                                  "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": item}]
    frames += [{"type": "response.function_call_arguments.delta", "item_id": "fc_4k",
                "output_index": 0, "delta": p} for p in pieces(args)]
    done_item = {**item, "arguments": args, "status": "completed"}
    frames += [{"type": "response.function_call_arguments.done", "item_id": "fc_4k",
                "output_index": 0, "arguments": args},
               {"type": "response.output_item.done", "output_index": 0, "item": done_item},
               {"type": "response.completed",
                "response": {"id": "resp_4k", "status": "completed", "output": [done_item],
                             "usage": {"input_tokens": 10, "output_tokens": 1000,
                                       "total_tokens": 1010}}}]
    return Reply.sse(sse_frames(frames, "responses"), api="responses",
                     label="synthetic: 4 KB tool call (responses)")


def type_last(value: Any) -> Any:
    """The value with every object's "type" key moved to the end (some servers do that)."""
    if isinstance(value, dict):
        out = {k: type_last(v) for k, v in value.items() if k != "type"}
        if "type" in value:
            out["type"] = type_last(value["type"])
        return out
    if isinstance(value, list):
        return [type_last(v) for v in value]
    return value


def reordered(reply: Reply, order: Callable[[Any], Any], label: str) -> Reply:
    """The reply with each data line's JSON rewritten by `order` (same content, new order)."""
    segments = []
    for frame in reply.segments:
        lines = []
        for line in frame.decode().split("\n"):
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                line = "data: " + json.dumps(order(json.loads(line[5:])), sort_keys=False)
            lines.append(line)
        segments.append("\n".join(lines).encode())
    return Reply.sse(segments, api=reply.api, label=label)


def out_of_order_replies() -> list[tuple[str, Reply]]:
    """A recorded stream of each protocol with its keys in another order."""
    chat = fixture_replies("chat/openai_gpt4o_text_usage.sse")[0]
    resp = fixture_replies("responses/openai_gpt4o_function_call_wire.sse")[0]
    return [("chat", reordered(chat, lambda v: json.loads(json.dumps(v, sort_keys=True)),
                               "synthetic: chat/openai_gpt4o_text_usage.sse, keys sorted")),
            ("responses", reordered(resp, type_last, "synthetic: responses/"
                                    "openai_gpt4o_function_call_wire.sse, type keys last"))]


def instructions(exe: Path, mode: str, url: str, reps: int, expect: dict[str, str],
                 without: str | None = None) -> tuple[int, int]:
    """Instructions (Ir) callgrind counted inside COUNTED for a run of `reps` turns, and of
    them those spent in the function `without` (inclusive; 0 when not given)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             f"--toggle-collect={COUNTED}", str(exe), mode, url, str(reps)],
            capture_output=True, text=True, check=False, timeout=600)
        match = re.search(r"Collected : (\d+)", result.stderr)
        if result.returncode != 0 or match is None:
            raise SystemExit(f"callgrind run failed:\n{result.stdout}\n{result.stderr}")
        got = key_values(result.stdout)
        if any(got.get(k) != expect.get(k) for k in OUTPUT_KEYS):
            raise SystemExit(f"the {mode} pipeline's turn differs under callgrind:\n"
                             f"{result.stdout}")
        spent = 0
        if without:
            text = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                  capture_output=True, text=True, check=True).stdout
            hit = re.search(rf"^\s*([\d,]+) \([^)]*\)\s+\S*:{re.escape(without)} ", text,
                            re.MULTILINE)
            spent = int(hit.group(1).replace(",", "")) if hit else 0
    return int(match.group(1)), spent


def key_values(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def run_driver(args: list[str]) -> dict[str, str]:
    return key_values(subprocess.run(args, capture_output=True, text=True, check=True,
                                     timeout=60).stdout)


def check_same(label: str, core: dict[str, str], ref: dict[str, str]) -> None:
    """Exit unless both pipelines produced the same turn (so they did equal work)."""
    differ = [k for k in OUTPUT_KEYS if core.get(k) != ref.get(k)]
    if differ:
        raise SystemExit(f"{label}: the pipelines do not produce the same turn "
                         f"({', '.join(differ)}):\n  core: {core}\n  ref:  {ref}")


def measure(build: Path, label: str, api: str, reply: Reply, reps: int,
            without: str | None = None) -> dict[str, Any]:
    """One stream: the memory driver's figures, each pipeline's instructions per turn."""
    side = build / "stream_ref_bench"
    with TestServer(Script.repeat(reply), validate=False) as srv:
        url = srv.url(API_PATH[api])
        # Every figure the driver prints is a column; its error text is not a figure.
        figures = {k: v for k, v in run_driver([str(build / "stream_bench"), url, "1"]).items()
                   if k != "last_error"}
        outputs = {mode: run_driver([str(side), mode, url, "1"]) for mode in ("core", "ref")}
        check_same(label, outputs["core"], outputs["ref"])
        expect = outputs["core"]
        per_turn: dict[str, float] = {}
        spent = 0.0
        for mode in ("core", "ref"):
            many, spent_many = instructions(side, mode, url, 1 + reps, expect, without)
            one, spent_one = instructions(side, mode, url, 1, expect, without)
            per_turn[mode] = (many - one) / reps
            if mode == "core":
                spent = (spent_many - spent_one) / reps
    kib = len(reply.body) / 1024
    figures["ref_line_peak"] = outputs["ref"]["ref_line_peak"]
    if without:
        figures[f"ratio_without_{without}"] = f"{(per_turn['core'] - spent) / per_turn['ref']:.3f}"
    return {"stream": label, "bytes": len(reply.body), "recorded": not label.startswith("synth"),
            "core": per_turn["core"] / kib, "ref": per_turn["ref"] / kib,
            "ratio": per_turn["core"] / per_turn["ref"], "figures": figures,
            "core_without": (per_turn["core"] - spent) / kib}


def streams(quick: bool) -> list[tuple[str, str, Reply]]:
    """(label, api, reply) of every stream measured."""
    out = []
    files = fixture_files()
    if quick:
        files = [f for f in files if f.name in QUICK_FIXTURES]
    for path in files:
        replies = fixture_replies(path)
        turns = expected_outcome(path)["turns"]
        if path.suffix == ".json" or len(replies) != 1 or not isinstance(turns, list) or any(
                isinstance(t, dict) and t.get("error") for t in turns):
            continue  # error bodies, multi-stream files and failing turns are not measured
        out.append((f"{path.parent.name}/{path.name}", path.parent.name, replies[0]))
    out.append(("synthetic: one 1 MiB response.completed", "responses", big_event_reply()))
    for api in ("chat", "responses") if not quick else ("chat",):
        out.append((str(tool_call_reply(api).label), api, tool_call_reply(api)))
    for api, reply in out_of_order_replies():
        if not quick or api == "responses":
            out.append((reply.label, api, reply))
    return out


def weighted_ratio(rows: list[dict[str, Any]]) -> float:
    """Core / reference instructions over the rows, each weighted by its size."""
    core = sum(float(r["core"]) * int(r["bytes"]) for r in rows)
    ref = sum(float(r["ref"]) * int(r["bytes"]) for r in rows)
    return core / ref


def print_table(rows: list[dict[str, Any]]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r["figures"] if k not in keys]
    print("| stream | bytes | core instructions per KiB | reference instructions per KiB "
          "| core / reference | " + " | ".join(keys) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(keys))
    for r in rows:
        cells = [r["figures"].get(k, "") for k in keys]
        print(f"| {r['stream']} | {r['bytes']} | {r['core']:.0f} | {r['ref']:.0f} "
              f"| {r['ratio']:.3f} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "bench",
                        help="CMake build directory (a Release build without sanitizers)")
    parser.add_argument("--reps", type=int, default=5, help="turns per measured run")
    parser.add_argument("--quick", action="store_true",
                        help="two fixtures, the 1 MiB event, the chat 4 KB tool call and the "
                             "responses stream with type keys last")
    parser.add_argument("--without", metavar="FUNCTION",
                        help="also give the core's ratio without the instructions spent in "
                             "FUNCTION (e.g. agent_pool_book_free): where the cost lies")
    parser.add_argument("--max-ratio", type=float, default=None,
                        help="fail (exit 1) when the corpus's core / reference ratio exceeds this")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    build_sim(args.build_dir, sanitize=False, quiet=True, build_type="Release",
              targets=("stream_bench", "stream_ref_bench"))
    if not (args.build_dir / "stream_ref_bench").is_file():
        raise SystemExit("stream_ref_bench was not built: cJSON is missing "
                         "(Debian: apt-get install libcjson-dev)")
    # The 1 MiB event is measured with one turn beyond the first: it is long enough.
    rows = [measure(args.build_dir, label, api, reply,
                    args.reps if len(reply.body) < BIG_EVENT_BYTES else 1, args.without)
            for label, api, reply in streams(args.quick)]
    print_table(rows)
    recorded = [r for r in rows if r["recorded"]]
    ratio = weighted_ratio(recorded)
    total = sum(r["bytes"] for r in recorded)
    print(f"\nrecorded corpus: {len(recorded)} streams, {total} bytes: core "
          f"{sum(r['core'] * r['bytes'] for r in recorded) / total:.0f}, reference "
          f"{sum(r['ref'] * r['bytes'] for r in recorded) / total:.0f} instructions per KiB "
          f"(weighted by size); ratio core / reference {ratio:.3f}")
    if args.without:
        core_without = sum(float(r["core_without"]) * int(r["bytes"]) for r in recorded)
        ref_total = sum(float(r["ref"]) * int(r["bytes"]) for r in recorded)
        print(f"recorded corpus without {args.without}: ratio core / reference "
              f"{core_without / ref_total:.3f} (not the goal's figure)")
    print(f"all streams: ratio core / reference {weighted_ratio(rows):.3f} (weighted by size); "
          f"worst stream {max(r['ratio'] for r in rows):.3f}")
    print("the pipelines produced the same text, reasoning, tool calls, usage and response id "
          "on every stream")
    # Memory (docs/providers.md "Memory of the stream path"): blocks held while streaming and
    # what was written into them, besides the parse state (sizeof the turn, this host's ABI).
    held = max(int(r["figures"].get("stream_held", 0)) for r in rows)
    written = max(int(r["figures"].get("stream_written", 0)) for r in rows)
    parse = max(int(r["figures"].get("parse_state", 0)) for r in rows)
    print(f"stream path: parse state {parse} B; stream blocks held at most {held} B, written at "
          f"most {written} B; at most {parse + held} B of stream state on any stream")
    if args.max_ratio is not None and ratio > args.max_ratio:
        print(f"FAIL: the corpus ratio {ratio:.3f} exceeds the goal of {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
