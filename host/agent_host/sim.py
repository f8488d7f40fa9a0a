"""Build and start the host simulator (the firmware's core over the POSIX port)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .errors import BuildError

REPO_DIR = Path(__file__).resolve().parents[2]
SIM_SOURCE_DIR = REPO_DIR / "app" / "sim"
DEFAULT_BUILD_DIR = REPO_DIR / "build" / "sim"
EXECUTABLE = "agent_sim"


def build(build_dir: Path = DEFAULT_BUILD_DIR, sanitize: bool = False, quiet: bool = False,
          build_type: str = "Debug", targets: tuple[str, ...] = (),
          extra_conf: tuple[Path, ...] = ()) -> Path:
    """Configure (once) and build the simulator; return the executable's path.

    Args:
        build_dir: CMake binary directory.
        sanitize: build with AddressSanitizer and UndefinedBehaviorSanitizer.
        quiet: capture the build output and show it only on failure.
        build_type: CMAKE_BUILD_TYPE ("Release" for benchmarks).
        targets: build only these targets (and the simulator); all when empty.
        extra_conf: Kconfig fragments applied after the simulator's (AGENT_EXTRA_CONF),
            e.g. tests/conf/data-only.conf.
    """
    if shutil.which("cmake") is None:
        raise BuildError("cmake is not installed (Debian: apt-get install cmake)")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = [
        "cmake", "-S", str(SIM_SOURCE_DIR), "-B", str(build_dir), *generator,
        f"-DAGENT_SANITIZE={'ON' if sanitize else 'OFF'}", f"-DCMAKE_BUILD_TYPE={build_type}",
        # The build's scripts run under this Python, which has the package's dependencies
        # (kconfiglib), not under whichever python3 comes first on PATH.
        f"-DPython3_EXECUTABLE={sys.executable}",
    ]
    if extra_conf:
        # Only when asked: an empty value would reset a build dir configured with fragments.
        configure.append(f"-DAGENT_EXTRA_CONF={';'.join(str(p) for p in extra_conf)}")
    jobs = str(os.cpu_count() or 2)
    compile_step = ["cmake", "--build", str(build_dir), "-j", jobs]
    if targets:
        compile_step += ["--target", EXECUTABLE, *targets]
    for step in (configure, compile_step):
        result = subprocess.run(step, capture_output=quiet, text=True, check=False)
        if result.returncode != 0:
            detail = (result.stdout or "") + (result.stderr or "") if quiet else ""
            raise BuildError(f"{' '.join(step[:2])} failed\n{detail}".rstrip())
    exe = build_dir / EXECUTABLE
    if not exe.is_file():
        raise BuildError(f"the build did not produce {exe}")
    return exe


def command(exe: Path, flash: Path, pty: bool = False, extra: list[str] | None = None) -> list[str]:
    """The simulator's command line."""
    args = [str(exe), f"--flash={flash}"]
    if pty:
        args.append("--pty")
    return args + list(extra or [])
