"""A short libFuzzer run of every target in tests/fuzz/: each fuzz_*.c for 10 seconds.

The targets are built by tests/fuzz/CMakeLists.txt with clang and
-fsanitize=fuzzer,address,undefined into build/fuzz (or $AGENT_FUZZ_BUILD_DIR). A crash, a
sanitizer report or a failed check in a target fails its test. Each run starts from the
target's seeds in tests/fuzz/corpus/<target>/ (if any) and uses tests/fuzz/<target>.dict
(if any); what it finds goes to a scratch corpus, and a crashing input is kept in the test's
temporary directory and named in the failure.

clang is required: without it these tests fail (never skip), saying how to install it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parents[1]
FUZZ_DIR = REPO_DIR / "tests" / "fuzz"
BUILD_DIR = Path(os.environ.get("AGENT_FUZZ_BUILD_DIR", REPO_DIR / "build" / "fuzz"))
FUZZ_SECONDS = 10
#: The script runtimes' targets (fuzz_script_NAME.c) are built only when the simulator's
#: configuration (app/sim/sim.conf) has the runtime on, as tests/fuzz/CMakeLists.txt decides.
SIM_CONF = (REPO_DIR / "app" / "sim" / "sim.conf").read_text().splitlines()
RUNTIME_CONFIG = {"fuzz_script_lua": "CONFIG_AGENT_SCRIPT_LUA",
                  "fuzz_script_python": "CONFIG_AGENT_SCRIPT_PYTHON"}
TARGETS = sorted(p.stem for p in FUZZ_DIR.glob("fuzz_*.c")
                 if p.stem not in RUNTIME_CONFIG or f"{RUNTIME_CONFIG[p.stem]}=y" in SIM_CONF)


@pytest.fixture(scope="session")
def fuzz_build() -> Path:
    clang = shutil.which("clang")
    if clang is None:
        pytest.fail("clang is not installed; the fuzz targets need it: apt-get install clang")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    steps = [
        ["cmake", "-S", str(FUZZ_DIR), "-B", str(BUILD_DIR), *generator,
         f"-DCMAKE_C_COMPILER={clang}"],
        ["cmake", "--build", str(BUILD_DIR), "-j", str(os.cpu_count() or 2)],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, check=False)
        assert result.returncode == 0, (
            f"{' '.join(step[:2])} failed (is clang's libFuzzer there? apt-get install clang)\n"
            f"{result.stdout}{result.stderr}"
        )
    return BUILD_DIR


def test_there_are_fuzz_targets() -> None:
    assert "fuzz_sse" in TARGETS, f"no tests/fuzz/fuzz_sse.c among {TARGETS}"
    assert "fuzz_memory_embed" in TARGETS, f"no tests/fuzz/fuzz_memory_embed.c among {TARGETS}"
    assert "fuzz_script_lua" in TARGETS, f"Lua is off in sim.conf or no target: {TARGETS}"


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_short(fuzz_build: Path, target: str, tmp_path: Path) -> None:
    exe = fuzz_build / target
    assert exe.is_file(), (
        f"{exe} was not built: add agent_fuzz_target({target} SOURCES ...) to "
        "tests/fuzz/CMakeLists.txt"
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    args = [
        str(exe),
        f"-max_total_time={FUZZ_SECONDS}",
        "-timeout=10",
        "-rss_limit_mb=2048",
        f"-artifact_prefix={tmp_path}/",
        "-print_final_stats=1",
    ]
    dictionary = FUZZ_DIR / f"{target}.dict"
    if dictionary.is_file():
        args.append(f"-dict={dictionary}")
    args.append(str(corpus))
    seeds = FUZZ_DIR / "corpus" / target
    if seeds.is_dir():
        args.append(str(seeds))
    result = subprocess.run(
        args, capture_output=True, text=True, errors="replace", check=False,
        timeout=FUZZ_SECONDS + 120, cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name != "corpus")
    assert result.returncode == 0, (
        f"{target} failed (exit {result.returncode}); inputs kept: {crashes} in {tmp_path}\n"
        f"{output[-6000:]}"
    )
    runs = [line for line in output.splitlines() if line.startswith("stat::number_of_executed_units:")]
    assert runs and int(runs[0].split(":")[-1]) > 1000, f"{target} hardly ran:\n{output[-3000:]}"
