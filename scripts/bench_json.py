#!/usr/bin/env python3
"""Benchmark of the streaming JSON tokenizer against parsers packaged by Debian.

Builds tests/bench (json_bench: app/src/agent/wire/json_stream.c at -O2, cJSON from
libcjson-dev, jsmn from libjsmn-dev) and runs it once per parser under
`valgrind --tool=callgrind --toggle-collect=bench_run`, so that only the parsing of the
corpus is counted: every `data:` payload of the recorded streams' **/*.sse (but [DONE]),
every line of the .jsonl files and every .json file, each parsed N times (the corpus is
host/agent_host/testserver/recorded/, or $AGENT_OPENAI_FIXTURES). Prints a Markdown
table: bytes parsed, instructions per KiB, the peak memory each parser needs for one
payload, and whether it needs the whole payload in one buffer.

This measures; it asserts nothing (tests/test_bench_json.py checks that it runs).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "host"))

from agent_host.errors import AgentHostError
from agent_host.testserver import fixtures_dir

BENCH_SOURCE_DIR = REPO / "tests" / "bench"
DEFAULT_BUILD_DIR = REPO / "build" / "bench-json"

# json_bench's name for it, label, what it builds, Debian package, whole payload in memory?
PARSERS = [
    ("stream", "json_stream", "payload in one chunk", "", False),
    ("stream64", "json_stream", "64-byte chunks", "", False),
    ("cjson", "cJSON", "a tree", "libcjson-dev", True),
    ("jsmn", "jsmn", "tokens; strict, parent links", "libjsmn-dev", True),
]


class BenchError(Exception):
    """The benchmark could not be built or run."""


@dataclass
class Result:
    """One parser's numbers."""

    label: str
    bytes_parsed: int
    instructions: int
    peak_bytes: int
    whole_payload: bool
    largest_payload: int

    @property
    def per_kib(self) -> float:
        return self.instructions / (self.bytes_parsed / 1024)

    @property
    def with_buffer(self) -> int:
        """Peak memory plus the buffer the largest payload needs when it must be whole."""
        return self.peak_bytes + (self.largest_payload if self.whole_payload else 0)


def debian_version(package: str) -> str:
    if not package or shutil.which("dpkg-query") is None:
        return ""
    result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                            capture_output=True, text=True, check=False)
    return f" {result.stdout.strip()}" if result.returncode == 0 else " (version unknown)"


def locate_fixtures() -> Path:
    try:
        return fixtures_dir()
    except AgentHostError as err:
        raise BenchError(str(err)) from err


def autoconf_header(sim_build_dir: Path | None, scratch: Path) -> Path:
    """agent_autoconf.h of a configured simulator build, else generated from the Kconfig."""
    if sim_build_dir is not None:
        header = sim_build_dir / "generated" / "agent_autoconf.h"
        if header.is_file():
            return header
    header = scratch / "agent_autoconf.h"
    run([sys.executable, str(REPO / "scripts" / "gen_config.py"),
         "--kconfig", str(REPO / "app" / "Kconfig"),
         "--conf", str(REPO / "app" / "sim" / "sim.conf"),
         "--out", str(header), "--dotconfig", str(scratch / ".config")])
    return header


def run(cmd: list[str]) -> str:
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BenchError(f"{' '.join(cmd[:3])} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def build(build_dir: Path, sim_build_dir: Path | None) -> Path:
    build_dir.mkdir(parents=True, exist_ok=True)
    header = autoconf_header(sim_build_dir, build_dir)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(["cmake", "-S", str(BENCH_SOURCE_DIR), "-B", str(build_dir), *generator,
         f"-DAGENT_AUTOCONF={header}"])
    run(["cmake", "--build", str(build_dir)])
    return build_dir / "json_bench"


def measure(exe: Path, parser: str, iterations: int, fixtures: Path) -> tuple[int, dict[str, int]]:
    """Instructions callgrind counted in bench_run(), and the driver's own report."""
    if shutil.which("valgrind") is None:
        raise BenchError("valgrind is not installed (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp) / "callgrind.out"
        stdout = run(["valgrind", "--tool=callgrind", "--toggle-collect=bench_run",
                      f"--callgrind-out-file={out_file}", str(exe),
                      "--iterations", str(iterations), parser, str(fixtures)])
        match = re.search(r"^summary:\s+(\d+)", out_file.read_text(), re.MULTILINE)
    if match is None:
        raise BenchError(f"no summary in callgrind's output for {parser}")
    report = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", stdout)}
    if report.get("failures", 1) != 0:
        raise BenchError(f"{parser} rejected a payload: {stdout}")
    return int(match.group(1)), report


def table(results: list[Result], payloads: int, largest: int, iterations: int) -> str:
    header = ("| parser | bytes parsed | instructions per KiB | peak memory (bytes) "
              "| whole payload in memory | peak with the largest payload buffered (bytes) |")
    lines = [
        f"Corpus: {payloads} payloads, largest {largest} bytes, each parsed {iterations} times.",
        "",
        header,
        "|---|---:|---:|---:|---|---:|",
    ]
    for r in results:
        lines.append(f"| {r.label} | {r.bytes_parsed} | {r.per_kib:.0f} | {r.peak_bytes} "
                     f"| {'yes' if r.whole_payload else 'no'} | {r.with_buffer} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR)
    env_sim = os.environ.get("AGENT_SIM_BUILD_DIR")
    parser.add_argument("--sim-build-dir", type=Path,
                        default=Path(env_sim) if env_sim else REPO / "build" / "sim-asan",
                        help="configured simulator build whose agent_autoconf.h to use")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one iteration (for the tests)")
    args = parser.parse_args(argv)
    iterations = 1 if args.quick else args.iterations
    try:
        fixtures = locate_fixtures()
        exe = build(args.build_dir, args.sim_build_dir)
        results = []
        report: dict[str, int] = {}
        for name, label, kind, package, whole in PARSERS:
            instructions, report = measure(exe, name, iterations, fixtures)
            results.append(Result(f"{label}{debian_version(package)} ({kind})",
                                  report["bytes_parsed"],
                                  instructions, report["peak_bytes"], whole,
                                  report["largest_payload"]))
    except BenchError as err:
        print(f"bench_json: {err}", file=sys.stderr)
        return 1
    print(table(results, report["payloads"], report["largest_payload"], iterations))
    return 0


if __name__ == "__main__":
    sys.exit(main())
