#!/usr/bin/env python3
"""The Zephyr lane of ``./dev test``: build the firmware and run Twister on it.

Finds a Zephyr tree, then, with warnings as errors:

1. builds ``app/`` with ``west build`` for every image of :data:`IMAGES` (native_sim 64- and
   32-bit, the TLS overlay, mps2/an385 for QEMU, mps2/an385 with Zephyr's minimal libc), and
   Zephyr's footprint reports of the mps2/an385 image;
2. runs Twister once over ``twister_tests/`` on native_sim/native/64 and mps2/an385 (the
   pytest-harness suites: the e2e files the simulator runs);
3. prints a summary per image (with the footprint report of rom_report/ram_report) and per
   suite (with the stack use and Mbed TLS heap the firmware tests measured), and writes it to
   ``build/zephyr/summary.txt``.

Where the tree comes from, first match wins (:func:`find_tree`):

- ``$ZEPHYR_BASE``, with the modules beside it as a west workspace lays them out
  (``<ZEPHYR_BASE>/../modules/...``);
- a west workspace around the checkout (``west topdir`` from the checkout's folder);
- ``../shared/zephyr-4.3`` beside the checkout (the trimmed 4.3.0 workspace CI has).

A tree that is not a west workspace gets one made for it in ``build/zephyr/ws`` (links to
the tree and a manifest naming its modules), so ``west build`` runs as it does for a user.

Exit status: 0 when everything passed, or when no tree was found and ``--require`` was not
given (one line says how to get a tree); 1 when a build or a test failed; 2 when ``--require``
was given and no tree was found.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "build" / "zephyr"

#: The modules the firmware uses, by their path in a west workspace (Zephyr's west.yml).
MODULES: tuple[tuple[str, str, str], ...] = (
    ("zcbor", "modules/lib/zcbor", "https://github.com/zephyrproject-rtos/zcbor"),
    ("littlefs", "modules/fs/littlefs", "https://github.com/zephyrproject-rtos/littlefs"),
    ("mbedtls", "modules/crypto/mbedtls", "https://github.com/zephyrproject-rtos/mbedtls"),
    ("cmsis_6", "modules/hal/cmsis_6", "https://github.com/zephyrproject-rtos/CMSIS_6"),
    ("picolibc", "modules/lib/picolibc", "https://github.com/zephyrproject-rtos/picolibc"),
)

GET_A_TREE = ("zephyr lane: no Zephyr tree found (ZEPHYR_BASE, a west workspace around the "
              "checkout, or ../shared/zephyr-4.3); to get one: west init -l . && west update "
              "(docs/zephyr-port.md, \"Building\")")


@dataclass(frozen=True)
class Image:
    """One firmware image the lane builds with ``west build``."""

    name: str
    board: str
    toolchain: str
    cmake_args: tuple[str, ...] = ()
    what: str = ""
    footprint: bool = False  # run Zephyr's rom_report and ram_report on it


IMAGES: tuple[Image, ...] = (
    Image("native_sim_64", "native_sim/native/64", "host", (),
          "native_sim/native/64, the Twister target"),
    Image("native_sim_32", "native_sim", "host", (), "native_sim (32-bit)"),
    Image("native_sim_64_tls", "native_sim/native/64", "host",
          ("-DEXTRA_CONF_FILE=overlay-tls.conf",), "native_sim/native/64 with overlay-tls.conf"),
    Image("mps2_an385", "mps2/an385", "gnuarmemb", (), "mps2/an385 (Cortex-M3, QEMU)",
          footprint=True),
    # The script runtimes (app/overlay-scripting.conf): their footprint is this image's
    # against mps2_an385's (docs/scripting.md, "Footprint").
    Image("mps2_an385_scripting", "mps2/an385", "gnuarmemb",
          ("-DEXTRA_CONF_FILE=overlay-scripting.conf",),
          "mps2/an385 with both script runtimes (overlay-scripting.conf)", footprint=True),
    # native_sim's minimal-libc build needs arch/posix/include/undef_system_defines.h, which
    # the trimmed 4.3 tree lacks; the Cortex-M build checks the same sources.
    Image("mps2_an385_minimal_libc", "mps2/an385", "gnuarmemb", ("-DCONFIG_MINIMAL_LIBC=y",),
          "mps2/an385 with Zephyr's minimal libc (build only)"),
)


@dataclass
class Tree:
    """A Zephyr tree and the west workspace the lane runs ``west`` in."""

    zephyr_base: Path
    workspace: Path
    origin: str
    made: bool = False  # the workspace was made by the lane


@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    detail: str = ""
    lines: list[str] = field(default_factory=list)


def say(text: str) -> None:
    print(f"zephyr lane: {text}", flush=True)


def west_topdir(start: Path) -> Path | None:
    """The west workspace that holds @start, or None."""
    try:
        from west.util import WestNotFound
        from west.util import west_topdir as topdir
    except ImportError:
        return None
    try:
        return Path(topdir(start=str(start)))
    except WestNotFound:
        return None


def find_tree(environ: dict[str, str] | None = None) -> Tree | None:
    """The Zephyr tree to build with (see the module's docstring), or None."""
    env = os.environ if environ is None else environ
    base = env.get("ZEPHYR_BASE")
    if base:
        zephyr = Path(base).resolve()
        top = west_topdir(zephyr)
        if top is not None:
            return Tree(zephyr, top, f"ZEPHYR_BASE={base} (west workspace {top})")
        return Tree(zephyr, OUT / "ws", f"ZEPHYR_BASE={base}", made=True)
    top = west_topdir(REPO)
    if top is not None and (top / "zephyr" / "VERSION").is_file():
        return Tree(top / "zephyr", top, f"west workspace {top}")
    kit = REPO.parent / "shared" / "zephyr-4.3"
    if (kit / "zephyr" / "VERSION").is_file():
        return Tree((kit / "zephyr").resolve(), OUT / "ws", f"{kit}", made=True)
    return None


def zephyr_version(zephyr: Path) -> str:
    fields: dict[str, str] = {}
    for line in (zephyr / "VERSION").read_text().splitlines():
        key, _, value = line.partition("=")
        fields[key.strip()] = value.strip()
    return ".".join(fields.get(k, "?") for k in ("VERSION_MAJOR", "VERSION_MINOR",
                                                   "PATCHLEVEL"))


def make_workspace(tree: Tree) -> None:
    """A west workspace at ``tree.workspace`` over a tree that has none: links and a manifest.

    The manifest names Zephyr (for its west commands: ``west build``, ``west twister``) and
    the modules of :data:`MODULES` that exist beside it; nothing is fetched from the URLs.
    """
    ws = tree.workspace
    source_top = tree.zephyr_base.parent
    (ws / ".west").mkdir(parents=True, exist_ok=True)
    (ws / "manifest").mkdir(exist_ok=True)
    links = {"zephyr": tree.zephyr_base}
    projects = [(
        "    - name: zephyr\n"
        "      url: https://github.com/zephyrproject-rtos/zephyr\n"
        f"      revision: v{zephyr_version(tree.zephyr_base)}\n"
        "      west-commands: scripts/west-commands.yml\n"
    )]
    for name, path, url in MODULES:
        if (source_top / path).is_dir():
            links[path] = source_top / path
            projects.append(f"    - name: {name}\n      url: {url}\n      path: {path}\n")
    for path, target in links.items():
        link = ws / path
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            if link.is_symlink() and link.resolve() == target.resolve():
                continue
            link.unlink()
        link.symlink_to(target)
    (ws / ".west" / "config").write_text(
        "# Made by scripts/zephyr_lane.py over a Zephyr tree that is not a west workspace.\n"
        "[manifest]\npath = manifest\nfile = west.yml\n[zephyr]\nbase = zephyr\n")
    (ws / "manifest" / "west.yml").write_text(
        "# Made by scripts/zephyr_lane.py: the tree's projects, already in place.\n"
        "manifest:\n  version: \"1.0\"\n  projects:\n" + "".join(projects)
        + "  self:\n    path: manifest\n")


def lane_env(tree: Tree, toolchain: str | None = None) -> dict[str, str]:
    """The environment of west and Twister: the workspace's Zephyr, the venv's Python first."""
    env = dict(os.environ)
    env["ZEPHYR_BASE"] = str(tree.workspace / "zephyr") if tree.made else str(tree.zephyr_base)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if toolchain:
        env["ZEPHYR_TOOLCHAIN_VARIANT"] = toolchain
    if toolchain == "gnuarmemb" or toolchain is None:
        gcc = shutil.which("arm-none-eabi-gcc")
        if gcc:
            env.setdefault("GNUARMEMB_TOOLCHAIN_PATH", str(Path(gcc).resolve().parents[1]))
    env.setdefault("CCACHE_DIR", str(REPO / "build" / "ccache"))
    return env


def build_image(tree: Tree, image: Image, log: Path) -> Result:
    """``west build`` of @image into build/zephyr/<name>; the log goes to @log."""
    build_dir = OUT / image.name
    cmd = [sys.executable, "-m", "west", "build", "-p", "auto", "-b", image.board, "-d", str(build_dir),
           str(REPO / "app"), "--", "-DCONFIG_COMPILER_WARNINGS_AS_ERRORS=y",
           f"-DPython3_EXECUTABLE={sys.executable}", *image.cmake_args]
    start = time.monotonic()
    with log.open("w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.run(cmd, cwd=tree.workspace, env=lane_env(tree, image.toolchain),
                              stdout=out, stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        return Result(image.name, False, seconds, f"west build failed ({log})", tail)
    result = Result(image.name, True, seconds, image_size(build_dir, log))
    if image.footprint:
        result.lines = footprint(tree, image, build_dir, log)
        result.ok = bool(result.lines) and not result.lines[0].startswith("footprint failed")
    return result


def footprint(tree: Tree, image: Image, build_dir: Path, log: Path) -> list[str]:
    """Zephyr's rom_report and ram_report of a built image, grouped by scripts/
    footprint_report.py."""
    for target in ("rom_report", "ram_report"):
        cmd = [sys.executable, "-m", "west", "build", "-d", str(build_dir), "-t", target]
        with log.open("a") as out:
            proc = subprocess.run(cmd, cwd=tree.workspace, env=lane_env(tree, image.toolchain),
                                  stdout=out, stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            return [f"footprint failed: west build -t {target} ({log})"]
    sys.path.insert(0, str(REPO / "scripts"))
    import footprint_report

    return list(footprint_report.table(build_dir))


def image_size(build_dir: Path, log: Path) -> str:
    """FLASH and RAM from the linker's memory report in the build log (Cortex-M), else the
    size of native_sim's executable."""
    used = []
    for line in log.read_text(errors="replace").splitlines():
        name, _, rest = line.strip().partition(":")
        if name in ("FLASH", "RAM") and rest.split():
            used.append(f"{name} {rest.split()[0]} B")
    if used:
        return ", ".join(used)
    exe = build_dir / "zephyr" / "zephyr.exe"
    return f"zephyr.exe {exe.stat().st_size} B" if exe.exists() else ""


#: The Twister platforms and the scenarios' folder.
TWISTER_PLATFORMS = ("native_sim/native/64", "mps2/an385")


def twister_command(tree: Tree, outdir: Path, scenarios: list[str] | None = None) -> list[str]:
    """Twister over twister_tests/ on :data:`TWISTER_PLATFORMS`: every scenario, or only
    @scenarios (their names in testcase.yaml)."""
    cmd = [sys.executable, str(tree.zephyr_base / "scripts" / "twister"),
           "-T", str(REPO / "twister_tests"), "--outdir", str(outdir),
           "--inline-logs", "-j", "2", "--no-detailed-test-id"]
    for platform in TWISTER_PLATFORMS:
        cmd += ["-p", platform]
    for scenario in scenarios or ():
        cmd += ["-s", scenario]
    return cmd


def run_twister(tree: Tree, log: Path, scenarios: list[str] | None = None) -> Result:
    """One Twister invocation (:func:`twister_command`)."""
    outdir = OUT / "twister"
    cmd = twister_command(tree, outdir, scenarios)
    start = time.monotonic()
    with log.open("w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.run(cmd, cwd=tree.workspace, env=lane_env(tree, "gnuarmemb"),
                              stdout=out, stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - start
    lines = twister_summary(outdir)
    return Result("twister", proc.returncode == 0, seconds, f"log {log}", lines)


def twister_summary(outdir: Path) -> list[str]:
    """One line per Twister scenario and platform, then one per pytest file inside it.

    The counts come from the pytest harness's JUnit report (``report.xml`` in each
    scenario's build folder); the tests deselected as ``sim_only`` from pytest's last line
    in ``twister_harness.log``; the scenario's status and reason from ``twister.json``.
    """
    report = outdir / "twister.json"
    if not report.exists():
        return [f"no Twister report at {report}"]
    data = json.loads(report.read_text())
    lines: list[str] = []
    for suite in data.get("testsuites", []):
        head = (f"{suite.get('name')} on {suite.get('platform')}: {suite.get('status')}"
                f" in {float(suite.get('execution_time') or 0):.0f} s")
        if suite.get("reason"):
            head += f" ({suite.get('reason')})"
        lines.append(head)
        platform_dir = outdir / str(suite.get("platform", "")).replace("/", "_")
        builds = sorted(platform_dir.glob(f"**/{suite.get('name')}/build_info.yml"))
        lines += (pytest_file_counts(builds[0].parent) if builds
                  else ["  (no build folder)"])
    return lines


def pytest_file_counts(build: Path) -> list[str]:
    """Per pytest file of one scenario: passed, failed, skipped; and pytest's deselected."""
    junit = build / "report.xml"
    if not junit.exists():
        return ["  (no pytest report)"]
    counts: dict[str, dict[str, int]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": "failed", "error": "error"}.get(child.tag, "skipped")
        module = case.get("classname", "?").rsplit(".", 1)[-1]
        bucket = counts.setdefault(module, {})
        bucket[status] = bucket.get(status, 0) + 1
    lines = [f"  {module}: " + ", ".join(f"{n} {k}" for k, n in sorted(bucket.items()))
             for module, bucket in sorted(counts.items())]
    log = build / "twister_harness.log"
    if log.exists():
        last = [x for x in log.read_text(errors="replace").splitlines()
                if x.startswith("=") and " in " in x and ("passed" in x or "failed" in x)]
        if last:
            lines.append("  pytest: " + last[-1].strip("= "))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--require", action="store_true",
                        help="a missing Zephyr tree is a failure (CI)")
    parser.add_argument("--images", nargs="*", default=None,
                        help="build only these images (names of IMAGES)")
    parser.add_argument("--no-twister", action="store_true", help="build only")
    parser.add_argument("--scenarios", nargs="+", default=None,
                        help="run only these Twister scenarios (e.g. the measuring ones: "
                             "agent.e2e.qemu agent.e2e.qemu.stream agent.e2e.tls)")
    parser.add_argument("--find", action="store_true",
                        help="only say which tree the lane would use; exit 0 if there is one")
    args = parser.parse_args(argv)

    tree = find_tree()
    if tree is None:
        print(GET_A_TREE, flush=True)
        return 2 if args.require or args.find else 0
    say(f"Zephyr {zephyr_version(tree.zephyr_base)} from {tree.origin}")
    if args.find:
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    if tree.made:
        make_workspace(tree)
    logs = OUT / "logs"
    logs.mkdir(exist_ok=True)
    results: list[Result] = []
    for image in IMAGES:
        if args.images is not None and image.name not in args.images:
            continue
        say(f"west build {image.name}: {image.what}")
        result = build_image(tree, image, logs / f"build-{image.name}.log")
        results.append(result)
        say(f"  {'ok' if result.ok else 'FAILED'} in {result.seconds:.0f} s: {result.detail}")
        for line in result.lines:
            print("    " + line)
    if not args.no_twister:
        for pattern in ("stacks-*.json", "tls-heap-*.json"):
            for stale in OUT.glob(pattern):
                stale.unlink()
        say("twister: " + ", ".join(TWISTER_PLATFORMS))
        result = run_twister(tree, logs / "twister.log", args.scenarios)
        result.lines += stack_summary()
        results.append(result)
        say(f"  {'ok' if result.ok else 'FAILED'} in {result.seconds:.0f} s: {result.detail}")
        for line in result.lines:
            print("    " + line)
    ok = all(r.ok for r in results)
    write_summary(tree, results, ok)
    return 0 if ok else 1


def stack_summary(out: Path = OUT) -> list[str]:
    """The stack use the firmware tests measured on each platform and workload (used of size,
    bytes: test_firmware_stacks, test_firmware_stream_stacks, test_firmware_tls_stacks), and
    the peak of Mbed TLS's heap (test_firmware_tls_stacks)."""
    lines = []
    for path in sorted(out.glob("stacks-*.json")):
        figures = json.loads(path.read_text())
        parts = [f"{name} {f['used']}/{f['size']}" for name, f in sorted(figures.items())]
        lines.append(f"stacks on {path.stem.removeprefix('stacks-')}: " + ", ".join(parts))
    for path in sorted(out.glob("tls-heap-*.json")):
        heap = json.loads(path.read_text())
        lines.append(f"Mbed TLS heap on {path.stem.removeprefix('tls-heap-')}: peak "
                     f"{heap['peak']} B in {heap['blocks']} blocks, with their "
                     f"{heap['header']} B headers {heap['bound']} of {heap['size']} B")
    return lines


def write_summary(tree: Tree, results: list[Result], ok: bool) -> None:
    """The summary block, printed and kept in build/zephyr/summary.txt."""
    lines = [f"Zephyr lane: Zephyr {zephyr_version(tree.zephyr_base)} from {tree.origin}"]
    for r in results:
        lines.append(f"{'ok    ' if r.ok else 'FAILED'} {r.name} ({r.seconds:.0f} s): {r.detail}")
        lines += ["       " + x for x in r.lines]
    lines.append("Zephyr lane: " + ("passed" if ok else "FAILED"))
    text = "\n".join(lines) + "\n"
    (OUT / "summary.txt").write_text(text)
    print("== Zephyr lane summary\n" + text, end="", flush=True)


if __name__ == "__main__":
    sys.exit(main())
