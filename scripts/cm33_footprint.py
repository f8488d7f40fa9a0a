#!/usr/bin/env python3
"""Flash, static RAM and worst stack chains of the portable core on a Cortex-M33, against the
budgets in tests/cm33/budgets.json (docs/footprint.md).

Cross-compiles every source of the portable core (AGENT_CORE_SOURCES of app/src/core.cmake:
app/src/agent/*, tools, script, modules) plus the generated reference pages with Debian's
arm-none-eabi-gcc (-mcpu=cortex-m33 -mthumb -Os, newlib-nano), links it against a stub of
the port (tests/cm33/port_stub.c) and the portable port code (pools, cancellation flags) with
--gc-sections, the thread entries of tests/cm33/threads.txt kept as roots, and prints:

* flash (text, rodata and data) by part and its largest symbols;
* static RAM: internal and PSRAM-placed (AGENT_PSRAM_ATTR, here the section .ext_ram.bss as
  on the ESP32-S3), the pools' buffers apart from the other statics, and the largest symbols;
* the worst stack chain from each thread entry, from -fcallgraph-info=su, with the indirect
  calls resolved by tests/cm33/indirect_calls.txt; indirect calls the table does not cover and
  recursion are listed.

Exits 1 when a budget is exceeded or an indirect call is not covered, naming it; 2 when the
build fails.

    .venv/bin/python scripts/cm33_footprint.py [--budget NAME=VALUE ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cm33_stack import (
    add_library_frames,
    indirect_table,
    read_callgraph,
    read_table,
    recursion_depths,
    stale_entries,
    unresolved,
    worst_chains,
)

REPO = Path(__file__).resolve().parent.parent
APP_SRC = REPO / "app" / "src"
CM33_DIR = REPO / "tests" / "cm33"
DEFAULT_BUILD = REPO / "build" / "cm33"
BUDGETS_FILE = CM33_DIR / "budgets.json"
#: The roots of the "core + tools" figure (budget flash_core_tools): agent_init() alone.
CORE_TOOLS_ROOTS = CM33_DIR / "roots-agent-init.txt"
THREADS_FILE = CM33_DIR / "threads.txt"
INDIRECT_FILE = CM33_DIR / "indirect_calls.txt"

CC = "arm-none-eabi-gcc"
NM = "arm-none-eabi-nm"
ARCH_FLAGS = ("-mcpu=cortex-m33", "-mthumb")
CFLAGS = (*ARCH_FLAGS, "-std=c11", "-Os", "-ffunction-sections", "-fdata-sections",
          "--specs=nano.specs", "-fstack-usage", "-fcallgraph-info=su", "-Wall", "-Wextra")
LDFLAGS = (*ARCH_FLAGS, "--specs=nano.specs", "--specs=nosys.specs", "-nostartfiles",
           "-Wl,--gc-sections")
#: The folders of AGENT_CORE_DIRS (app/src/core.cmake), the port's portable files.
CORE_DIRS = ("agent/state", "agent/wire", "tools", "script", "modules", "agent/store",
             "agent/provider", "agent/request", "agent/shell", "agent/mgmt")
PORT_SOURCES = ("pool_book.c", "pool_table.c", "cancel.c", "settings_names.c")
PSRAM_SECTION = ".ext_ram.bss"
TOP = 15

#: Parts of the image, in the order printed; "project" parts make the flash budget.
PARTS = ("core", "tools", "modules", "script", "reference pages", "packed texts",
         "port (pools)", "zcbor", "libc", "port stub")
PROJECT_PARTS = PARTS[:7]


class BuildError(Exception):
    """The cross-compile or the link failed; the message has the compiler's output."""


def part_of(path: str) -> str:
    """The part of the image an object file (or library member) belongs to."""
    name = Path(path.split("(")[0]).name
    if path.endswith(")") or name.endswith(".a") or "/lib/" in path or "/libc" in path:
        return "libc"
    if name == "port_stub.o":
        return "port stub"
    if name == "reference_pages.o":
        return "reference pages"
    if name == "packed_texts.o":
        return "packed texts"  # the dictionary (shared with the pages) and the tool texts
    if name.startswith("zcbor_"):
        return "zcbor"
    if "/port/" in path:
        return "port (pools)"
    for folder, part in (("/tools/", "tools"), ("/modules/", "modules"),
                         ("/script/", "script")):
        if folder in path:
            return part
    return "core"


# ---- Build ---------------------------------------------------------------------------------


def run(cmd: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{Path(cmd[0]).name} ... {cmd[-1]}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


@dataclass
class Source:
    path: Path
    obj: Path
    extra: tuple[str, ...] = ()


def sources(build: Path, zcbor: Path) -> list[Source]:
    """Every source of the image with the object it compiles to (objects mirror the tree)."""
    out: list[Source] = []
    for folder in CORE_DIRS:
        for src in sorted((APP_SRC / folder).glob("*.c")):
            out.append(Source(src, build / "obj" / folder / (src.stem + ".o")))
    for name in ("reference_pages", "packed_texts"):
        out.append(Source(build / "gen" / "reference" / f"{name}.c",
                          build / "obj" / "reference" / f"{name}.o"))
    for name in PORT_SOURCES:
        out.append(Source(APP_SRC / "port" / name, build / "obj" / "port" / (name[:-2] + ".o")))
    out.append(Source(CM33_DIR / "port_stub.c", build / "obj" / "stub" / "port_stub.o"))
    for name in ("zcbor_common.c", "zcbor_decode.c", "zcbor_encode.c"):
        out.append(Source(zcbor / "src" / name, build / "obj" / "zcbor" / (name[:-2] + ".o"),
                          ("-w",)))
    return out


def configure(build: Path) -> Path:
    """The configuration header, reference pages and zcbor sources; returns zcbor's folder."""
    gen = build / "gen"
    py = sys.executable
    run([py, str(REPO / "scripts" / "gen_config.py"), "--kconfig", str(REPO / "app" / "Kconfig"),
         "--conf", str(CM33_DIR / "cm33.conf"), "--out", str(gen / "agent_autoconf.h"),
         "--dotconfig", str(gen / ".config")])
    texts_from = [arg for d in CORE_DIRS for arg in ("--texts-from", str(APP_SRC / d))]
    run([py, str(REPO / "scripts" / "gen_reference.py"), "--pages", str(REPO / "docs" / "reference"),
         "--dotconfig", str(gen / ".config"),
         "--out-c", str(gen / "reference" / "reference_pages.c"),
         "--out-h", str(gen / "reference" / "reference_pages.h"), *texts_from,
         "--texts-c", str(gen / "reference" / "packed_texts.c"),
         "--texts-h", str(gen / "reference" / "packed_texts.h")])
    out = run([py, str(REPO / "scripts" / "fetch_zcbor.py")])
    return Path(out.strip().splitlines()[-1])


def build_image(build: Path, roots: list[str], jobs: int) -> tuple[Path, Path, list[Source]]:
    """Compile and link; returns the ELF, the map file and the sources."""
    zcbor = configure(build)
    gen = build / "gen"
    includes = [f"-I{APP_SRC / 'port'}", *(f"-I{APP_SRC / d}" for d in CORE_DIRS),
                f"-I{gen / 'reference'}", f"-I{zcbor / 'include'}"]
    defines = ["-imacros", str(gen / "agent_autoconf.h"),
               f'-DAGENT_PORT_PSRAM_SECTION="{PSRAM_SECTION}"']
    srcs = sources(build, zcbor)

    def compile_one(src: Source) -> None:
        src.obj.parent.mkdir(parents=True, exist_ok=True)
        run([CC, *CFLAGS, *defines, *includes, *src.extra, "-c", str(src.path),
             "-o", str(src.obj)])

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(compile_one, srcs))
    elf, map_file = link(build, "cm33_core", roots, srcs)
    return elf, map_file, srcs


def link(build: Path, name: str, roots: list[str], srcs: list[Source]) -> tuple[Path, Path]:
    """Link the compiled objects with @roots kept (-Wl,--undefined); the ELF and its map."""
    elf = build / f"{name}.elf"
    map_file = build / f"{name}.map"
    undefined = [f"-Wl,--undefined={r}" for r in roots]
    run([CC, *LDFLAGS, "-T", str(CM33_DIR / "cm33.ld"), f"-Wl,-Map={map_file}", *undefined,
         *(str(s.obj) for s in srcs), "-o", str(elf)])
    return elf, map_file


def table_roots(threads: dict[str, list[str]]) -> list[str]:
    """The global entries of a thread table: the roots of its link."""
    return sorted({e for entries in threads.values() for e in entries if ":" not in e})


# ---- Map file and symbols ------------------------------------------------------------------


@dataclass
class InputSection:
    out: str  # output section: .text, .rodata, .data, .bss, .ext_ram.bss, ...
    name: str
    addr: int
    size: int
    obj: str


MAP_LINE = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
OUT_LINE = re.compile(r"^(\.\S+)")


def read_map(map_file: Path) -> list[InputSection]:
    """The input sections the link kept, with their output section and object."""
    sections: list[InputSection] = []
    in_map = False
    out = ""
    pending = ""
    for line in map_file.read_text().splitlines():
        if line.startswith("Linker script and memory map"):
            in_map = True
            continue
        if not in_map:
            continue
        m = OUT_LINE.match(line)
        if m:
            out = m.group(1)
            continue
        if line.startswith(" ") and not line.startswith("  ") and len(line.split()) == 1:
            pending = line.strip()  # a long input section name; address on the next line
            continue
        m = MAP_LINE.match(line)
        if m and (m.group(1) or pending) and not m.group(4).startswith(("=", "PROVIDE")):
            name = m.group(1) or pending
            pending = ""
            size = int(m.group(3), 16)
            if size and name.startswith(".") and name != "*fill*":
                sections.append(InputSection(out, name, int(m.group(2), 16), size,
                                             m.group(4).strip()))
        else:
            pending = ""
    return sections


@dataclass
class Symbol:
    name: str
    addr: int
    size: int
    part: str
    out: str
    obj: str


def read_symbols(elf: Path, sections: list[InputSection]) -> list[Symbol]:
    """The ELF's sized symbols, each tied to the input section (object) holding it."""
    ordered = sorted(sections, key=lambda s: s.addr)
    starts = [s.addr for s in ordered]
    syms: list[Symbol] = []
    for line in run([NM, "-S", "--defined-only", str(elf)]).splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        addr, size, name = int(fields[0], 16), int(fields[1], 16), fields[3]
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0 or size == 0:
            continue
        sec = ordered[i]
        if not sec.addr <= addr < sec.addr + sec.size:
            continue
        syms.append(Symbol(name, addr, size, part_of(sec.obj), sec.out,
                           Path(sec.obj.split("(")[0]).name))
    return syms


def pool_buffers() -> set[str]:
    """Names of the static buffers the core hands to agent_pool_init() (its third argument)."""
    call = re.compile(r"agent_pool_init\(\s*[^,]+,\s*[^,]+,\s*&?\s*(\w+)")
    names: set[str] = set()
    for folder in CORE_DIRS:
        for src in (APP_SRC / folder).glob("*.c"):
            names.update(call.findall(src.read_text()))
    return names


# ---- Figures -------------------------------------------------------------------------------


@dataclass
class Footprint:
    flash: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTS, 0))
    ram: dict[str, int] = field(default_factory=dict)  # internal, internal pools, psram, psram pools
    top_flash: list[Symbol] = field(default_factory=list)
    top_internal: list[Symbol] = field(default_factory=list)
    top_psram: list[Symbol] = field(default_factory=list)
    pools: list[Symbol] = field(default_factory=list)
    core_folders: dict[str, int] = field(default_factory=dict)  # flash of app/src/agent/*


FLASH_OUT = (".text", ".rodata", ".data", ".ARM.exidx")


def measure(sections: list[InputSection], syms: list[Symbol]) -> Footprint:
    fp = Footprint()
    ram = {"internal": 0, "internal pools": 0, "psram": 0, "psram pools": 0}
    pools = pool_buffers()
    pool_syms = [s for s in syms if s.name in pools and s.out in (".bss", ".data", PSRAM_SECTION)]
    fp.pools = pool_syms
    for sec in sections:
        part = part_of(sec.obj)
        if sec.out in FLASH_OUT:
            fp.flash[part] += sec.size
        if part == "port stub":
            continue
        if sec.out in (".data", ".bss"):
            ram["internal"] += sec.size
        elif sec.out == PSRAM_SECTION:
            ram["psram"] += sec.size
    for s in pool_syms:
        key = "psram" if s.out == PSRAM_SECTION else "internal"
        ram[key] -= s.size
        ram[key + " pools"] += s.size
    fp.ram = ram
    for sec in sections:
        m = re.search(r"/obj/agent/(\w+)/", sec.obj)
        if m and sec.out in FLASH_OUT:
            fp.core_folders[m.group(1)] = fp.core_folders.get(m.group(1), 0) + sec.size

    def top(outs: tuple[str, ...]) -> list[Symbol]:
        chosen = [s for s in syms if s.out in outs and s.part != "port stub"]
        return sorted(chosen, key=lambda s: (-s.size, s.name))[:TOP]

    fp.top_flash = top((".text", ".rodata", ".data"))
    fp.top_internal = top((".data", ".bss"))
    fp.top_psram = top((PSRAM_SECTION,))
    return fp


# ---- Report --------------------------------------------------------------------------------


def load_budgets(path: Path, overrides: list[str]) -> dict[str, dict[str, object]]:
    budgets: dict[str, dict[str, object]] = json.loads(path.read_text())["budgets"]
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or name not in budgets:
            raise SystemExit(f"cm33_footprint: --budget {item}: no budget named {name!r} "
                             f"(budgets: {', '.join(budgets)})")
        budgets[name] = {**budgets[name], "bytes": int(value, 0)}
    return budgets


def write_budgets(path: Path, figures: dict[str, int]) -> dict[str, dict[str, object]]:
    """Set each budget to its figure plus margin_percent, rounded up to 64 bytes, and no
    higher than its cap_bytes (a goal met is kept: the margin never lets a figure past it)."""
    doc = json.loads(path.read_text())
    for name, spec in doc["budgets"].items():
        got = figures[name]
        limit = got * (100 + int(spec["margin_percent"])) / 100
        spec["measured"] = got
        spec["bytes"] = (int(limit) + 63) // 64 * 64
        if "cap_bytes" in spec:
            spec["bytes"] = min(spec["bytes"], int(spec["cap_bytes"]))
    lines = ["{", f' "about": {json.dumps(doc["about"])},', ' "budgets": {']
    items = list(doc["budgets"].items())
    for i, (name, spec) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(name)}: {json.dumps(spec)}{comma}")
    lines += [" }", "}"]
    path.write_text("\n".join(lines) + "\n")
    budgets: dict[str, dict[str, object]] = doc["budgets"]
    return budgets


def kib(n: int) -> str:
    return f"{n:>9,} B ({n / 1024:6.1f} KiB)"


def core_tools_flash(build: Path, objs: list[Path], reuse: bool) -> int:
    """Flash of the narrower link of CORE_TOOLS_ROOTS (issue 16's "core + tools" figure),
    linked in all: the same objects as the image, other roots."""
    elf = build / "cm33_core_tools.elf"
    map_file = build / "cm33_core_tools.map"
    if not (reuse and elf.exists()):
        roots = table_roots(read_table(CORE_TOOLS_ROOTS))
        link(build, "cm33_core_tools", roots, [Source(o, o) for o in objs])
    return sum(s.size for s in read_map(map_file) if s.out in FLASH_OUT)


def print_top(title: str, syms: list[Symbol]) -> None:
    print(f"\n  top {TOP} {title}:")
    for s in syms:
        print(f"    {s.size:>7,}  {s.name:<40} {s.obj} [{s.part}]")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD)
    ap.add_argument("--jobs", type=int, default=2, help="parallel compiles (default 2)")
    ap.add_argument("--budget", action="append", default=[], metavar="NAME=VALUE",
                    help="override one budget of tests/cm33/budgets.json for this run")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    ap.add_argument("--reuse", action="store_true",
                    help="report on the image --build-dir already holds, without building")
    ap.add_argument("--indirect", type=Path, default=INDIRECT_FILE,
                    help="the indirect-call table (default tests/cm33/indirect_calls.txt)")
    ap.add_argument("--threads", type=Path, default=THREADS_FILE,
                    help="the thread entries, which are also the link's roots (default "
                         "tests/cm33/threads.txt); with another table the budgets, set for "
                         "the firmware's threads, are not checked")
    ap.add_argument("--write-budgets", action="store_true",
                    help="set every budget of tests/cm33/budgets.json to the measured value "
                         "plus its margin_percent (rounded up to 64 B), then check them")
    args = ap.parse_args(argv)
    other_roots = args.threads.resolve() != THREADS_FILE.resolve()
    if other_roots and args.write_budgets:
        ap.error("--write-budgets sets the budgets from the firmware's threads: not with --threads")

    for tool in (CC, NM):
        if shutil.which(tool) is None:
            print(f"cm33_footprint: {tool} not found (Debian: gcc-arm-none-eabi "
                  f"libnewlib-arm-none-eabi; ./dev installs them)", file=sys.stderr)
            return 2
    budgets = load_budgets(BUDGETS_FILE, args.budget)
    threads = read_table(args.threads)
    table = indirect_table(args.indirect)
    roots = table_roots(threads)

    build = args.build_dir.resolve()
    objects = build / "objects.txt"
    elf, map_file = build / "cm33_core.elf", build / "cm33_core.map"
    if args.reuse and elf.exists() and objects.exists():
        objs = [Path(line) for line in objects.read_text().splitlines()]
    else:
        if build.exists():
            shutil.rmtree(build)
        build.mkdir(parents=True)
        try:
            elf, map_file, srcs = build_image(build, roots, max(1, args.jobs))
        except BuildError as err:
            print(f"cm33_footprint: build failed:\n{err}", file=sys.stderr)
            return 2
        objs = [s.obj for s in srcs]
        objects.write_text("".join(f"{o}\n" for o in objs))

    sections = read_map(map_file)
    syms = read_symbols(elf, sections)
    fp = measure(sections, syms)
    graph = read_callgraph([o.with_suffix(".ci") for o in objs])
    libc_at: dict[int, list[str]] = {}
    for sym in syms:
        if sym.out == ".text" and sym.part == "libc":
            libc_at.setdefault(sym.addr & ~1, []).append(sym.name)
    estimated = add_library_frames(
        graph, run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(elf)]), libc_at)
    kept = {s.name for s in syms if s.out == ".text"}
    depths = recursion_depths(table)
    chains = worst_chains(graph, threads, table, depths)
    missing = unresolved(graph, table, kept)
    stale = stale_entries(graph, table)

    project_flash = sum(fp.flash[p] for p in PROJECT_PARTS)
    core_tools = None if other_roots else core_tools_flash(build, objs, args.reuse)
    figures = {
        "flash": project_flash,
        "flash_linked": sum(fp.flash.values()),
        **({} if core_tools is None else {"flash_core_tools": core_tools}),
        "ram_internal": fp.ram["internal"],
        "ram_all_internal": sum(fp.ram.values()),
        **{f"stack_{c.thread}": c.total for c in chains},
    }

    print(f"Cortex-M33 footprint of the portable core ({CC} {' '.join(CFLAGS[:6])}, "
          f"newlib-nano, --gc-sections; config tests/cm33/cm33.conf)")
    print("\nflash (text + rodata + data):")
    for part in PARTS:
        print(f"  {part:<18}{kib(fp.flash[part])}")
        if part == "core":
            for folder, size in sorted(fp.core_folders.items(), key=lambda i: -i[1]):
                print(f"    agent/{folder:<12}{kib(size)}")
    print(f"  {'flash (budget)':<18}{kib(project_flash)}   core to port (pools): the project's code")
    print(f"  {'linked in all':<18}{kib(sum(fp.flash.values()))}")
    if core_tools is not None:
        print(f"  {'core + tools':<18}{kib(core_tools)}   linked in all, from agent_init() "
              f"alone ({CORE_TOOLS_ROOTS.relative_to(REPO)})")
    print("\nstatic RAM (data + bss; the port stub's left out):")
    print(f"  internal, beyond the pools  {kib(fp.ram['internal'])}")
    print(f"  internal, pool buffers      {kib(fp.ram['internal pools'])}")
    print(f"  PSRAM-placed, beyond pools  {kib(fp.ram['psram'])}")
    print(f"  PSRAM-placed, pool buffers  {kib(fp.ram['psram pools'])}")
    print(f"  all of it internal (no PSRAM) {kib(figures['ram_all_internal'])}")
    print("\n  pool buffers: " + ", ".join(f"{s.name} {s.size:,} B"
                                          f" ({'PSRAM' if s.out == PSRAM_SECTION else 'internal'})"
                                          for s in sorted(fp.pools, key=lambda s: -s.size)))
    print_top("flash symbols", fp.top_flash)
    print_top("internal RAM symbols", fp.top_internal)
    print_top("PSRAM symbols", fp.top_psram)

    print("\nworst stack chain per thread entry (bytes of each frame, -fstack-usage;"
          " * the C library's, from its disassembly):")
    for c in chains:
        print(f"\n  {c.thread}: {c.total:,} B")
        for fn, size in c.path:
            print(f"    {size:>6}{'*' if fn in estimated else ' '} {fn}")
        if c.recursion:
            print(f"    cycles cut (each function counted once): {'; '.join(c.recursion)}")
        if c.unknown:
            print(f"    not counted (no stack figure: C library, libgcc): {' '.join(c.unknown)}")
    dynamic = sorted(graph.dynamic.items())
    if dynamic:
        print("\n  frames not of a fixed size: "
              + ", ".join(f"{fn} ({kind})" for fn, kind in dynamic))

    failures: list[str] = []
    if missing:
        print("\nindirect calls not in tests/cm33/indirect_calls.txt:")
        for m in missing:
            print(f"  {m}")
        failures.append(f"{len(missing)} caller(s) with indirect calls missing from "
                        "tests/cm33/indirect_calls.txt")
    cycles = sorted({r for c in chains for r in c.recursion})
    if cycles:
        print("\ncycles of the call graph without a depth in tests/cm33/indirect_calls.txt "
              "(!recursion):")
        for r in cycles:
            print(f"  {r}")
        failures.append(f"{len(cycles)} cycle(s) of the call graph without a stated depth")
    if stale:
        print("\nstale entries of tests/cm33/indirect_calls.txt:")
        for s in stale:
            print(f"  {s}")
        failures.append(f"{len(stale)} stale entr(y/ies) in tests/cm33/indirect_calls.txt")

    if args.write_budgets:
        budgets = write_budgets(BUDGETS_FILE, figures)
    if other_roots:
        print(f"\nbudgets not checked: the roots are those of {args.threads}, not of the "
              "firmware's threads (tests/cm33/threads.txt)")
        budgets = {}
    else:
        print("\nbudgets (tests/cm33/budgets.json):")
    for name, spec in budgets.items():
        limit = int(str(spec["bytes"]))
        got = figures.get(name)
        if got is None:
            failures.append(f"budget {name}: no such figure")
            continue
        verdict = "ok" if got <= limit else "OVER"
        print(f"  {name:<18} {got:>8,} of {limit:>8,} B  {verdict}   (goal: {spec.get('goal', '-')})")
        if got > limit:
            failures.append(f"budget {name} exceeded: {got:,} B measured, {limit:,} B allowed")

    if args.json:
        args.json.write_text(json.dumps({
            "figures": figures, "flash": fp.flash, "ram": fp.ram,
            "chains": {c.thread: {"bytes": c.total, "path": c.path, "recursion": c.recursion,
                                  "unknown": c.unknown} for c in chains},
            "unresolved": missing, "stale": stale, "cycles": cycles, "failures": failures,
            "pools": {p.name: p.size for p in fp.pools}}, indent=1))
    for f in failures:
        print(f"cm33_footprint: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    sys.exit(main())
