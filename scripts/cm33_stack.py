"""Worst stack chains of scripts/cm33_footprint.py (docs/footprint.md, "Stack chains").

Reads the -fcallgraph-info=su graphs (.ci files: each function's -fstack-usage frame and its
direct calls), adds the C library's frames from the disassembly, resolves calls through
pointers with tests/cm33/indirect_calls.txt and finds the deepest chain from each thread's
entries (tests/cm33/threads.txt).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)" label: "([^"]*)"')
BYTES = re.compile(r"\\n(\d+) bytes \(([^)]*)\)")
INDIRECT = "__indirect_call"


def node_id(title: str) -> str:
    """A function's name in the graph: NAME for an external one, FILE.c:NAME for a static one."""
    if ":" in title:
        path, name = title.rsplit(":", 1)
        return f"{Path(path).name}:{name}"
    return title


@dataclass
class CallGraph:
    frame: dict[str, int] = field(default_factory=dict)
    dynamic: dict[str, str] = field(default_factory=dict)
    calls: dict[str, set[str]] = field(default_factory=dict)
    indirect: dict[str, list[str]] = field(default_factory=dict)  # caller -> call sites
    #: NAME -> FILE.c:NAME for a function defined with its file in the title although other
    #: files call it by name (a weak definition, such as zcbor's fallback strnlen)
    alias: dict[str, str] = field(default_factory=dict)


def read_callgraph(ci_files: list[Path]) -> CallGraph:
    graph = CallGraph()
    for ci in ci_files:
        for line in ci.read_text().splitlines():
            m = NODE.match(line)
            if m:
                b = BYTES.search(m.group(2))
                if b:
                    name = node_id(m.group(1))
                    graph.frame[name] = int(b.group(1))
                    if b.group(2) != "static":
                        graph.dynamic[name] = b.group(2)
                continue
            m = EDGE.match(line)
            if m:
                src, dst = node_id(m.group(1)), node_id(m.group(2))
                if dst == INDIRECT:
                    site = m.group(3)
                    graph.indirect.setdefault(src, []).append(
                        f"{Path(site.split(':')[0]).name}:{site.split(':')[1]}")
                else:
                    graph.calls.setdefault(src, set()).add(dst)
    by_plain: dict[str, list[str]] = {}
    for name in graph.frame:
        if ":" in name:
            by_plain.setdefault(name.rsplit(":", 1)[1], []).append(name)
    graph.alias = {plain: names[0] for plain, names in by_plain.items()
                   if len(names) == 1 and plain not in graph.frame}
    return graph


DIS_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
DIS_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
REGLIST = re.compile(r"\{([^}]*)\}")
SP_SUB = re.compile(r"^sp, (?:sp, )?#(\d+)")


@dataclass
class _DisFunc:
    frame: int = 0
    calls: set[int] = field(default_factory=set)
    indirect: bool = False
    insns: int = 0


def _disassembly(text: str) -> dict[int, _DisFunc]:
    """Each function of the ELF by address: its prologue's stack (push/stmdb of registers,
    sub sp), the addresses it branches to and whether it calls through a register."""
    funcs: dict[int, _DisFunc] = {}
    cur: _DisFunc | None = None
    for line in text.splitlines():
        m = DIS_FUNC.match(line)
        if m:
            cur = funcs.setdefault(int(m.group(1), 16), _DisFunc())
            continue
        m = DIS_INSN.match(line)
        if not m or cur is None:
            continue
        op, arg = m.group(2), m.group(3)
        cur.insns += 1
        prologue = cur.insns <= 8
        if prologue and (op == "push" or (op.startswith("stmdb") and arg.startswith("sp!"))):
            regs = REGLIST.search(arg)
            for r in regs.group(1).split(",") if regs else ():
                lo, _, hi = r.strip().partition("-")
                cur.frame += 4 * (int(hi.strip("r")) - int(lo.strip("r")) + 1 if hi else 1)
        elif prologue and op in ("sub", "sub.w", "subw") and SP_SUB.match(arg):
            cur.frame += int(SP_SUB.match(arg).group(1))  # type: ignore[union-attr]
        elif op == "blx" or (op == "bx" and arg.strip() != "lr"):
            cur.indirect = True
        elif op in ("bl", "b.w", "b", "b.n"):
            target = arg.split()[0] if arg else ""
            if re.fullmatch(r"[0-9a-f]+", target):
                cur.calls.add(int(target, 16))
    return funcs


def add_library_frames(graph: CallGraph, disassembly: str,
                       names_at: dict[int, list[str]]) -> set[str]:
    """Frames and calls of the linked C library functions (newlib-nano, libgcc; @p names_at:
    their names by address), which have no -fstack-usage figure, estimated from the ELF's
    disassembly (objdump -d --no-show-raw-insn); a branch to another function's start is a
    call. Returns the names so estimated."""
    funcs = _disassembly(disassembly)
    estimated: set[str] = set()
    for addr, fn in funcs.items():
        names = names_at.get(addr, [])
        if not names or any(n in graph.frame for n in names):
            continue
        callees = {names_at[t][0] for t in fn.calls if t != addr and t in funcs and t in names_at}
        for n in names:
            graph.frame[n] = fn.frame
            graph.calls[n] = set(callees)
            if fn.indirect:
                graph.indirect.setdefault(n, []).append(f"{n} (C library)")
            estimated.add(n)
    return estimated


def read_table(path: Path) -> dict[str, list[str]]:
    """NAME: WORD... lines (comments with #); a line may continue on indented lines."""
    table: dict[str, list[str]] = {}
    key = ""
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if line[0].isspace() and key:
            table[key].extend(line.split())
            continue
        key, _, rest = line.partition(": ")
        if not _ and line.endswith(":"):
            key, rest = line[:-1], ""
        table[key.strip()] = rest.split()
    return table


def indirect_table(path: Path) -> dict[str, list[str]]:
    """Callers and their possible callees, with @GROUP names expanded."""
    raw = read_table(path)
    groups = {k: v for k, v in raw.items() if k.startswith("@")}
    out: dict[str, list[str]] = {}

    def expand(words: list[str], seen: tuple[str, ...] = ()) -> list[str]:
        result: list[str] = []
        for w in words:
            if w.startswith("@"):
                if w not in groups or w in seen:
                    raise ValueError(f"{path.name}: unknown or recursive group {w}")
                result.extend(expand(groups[w], (*seen, w)))
            else:
                result.append(w)
        return result

    for k, v in raw.items():
        if not k.startswith("@"):
            out[k] = expand(v)
    return out


@dataclass
class Chain:
    thread: str
    total: int
    path: list[tuple[str, int]]
    recursion: list[str]
    unknown: list[str]  # callees without stack figures (the C library, helpers of libgcc)


class _Walk:
    """The deepest chain below each function, for one thread."""

    def __init__(self, graph: CallGraph, table: dict[str, list[str]],
                 depths: dict[str, int]) -> None:
        self.graph, self.table, self.depths = graph, table, depths
        self.memo: dict[str, tuple[int, list[str]]] = {}
        self.recursion: set[str] = set()
        self.unknown: set[str] = set()
        self.onstack: set[str] = set()

    def callees(self, fn: str) -> set[str]:
        out = set(self.graph.calls.get(fn, ()))
        if fn in self.graph.indirect:
            out.update(self.table.get(fn, ()))
        return out

    def worst(self, fn: str) -> tuple[int, list[str]]:
        graph = self.graph
        if fn in self.memo:
            return self.memo[fn]
        if fn not in graph.frame and fn in graph.alias:
            return self.worst(graph.alias[fn])
        if fn not in graph.frame:
            self.unknown.add(fn)
            return 0, [fn]
        self.onstack.add(fn)
        best: tuple[int, list[str]] = (0, [])
        for callee in sorted(self.callees(fn)):
            if callee == fn and fn in self.depths:
                continue
            if callee in self.onstack:
                self.recursion.add(f"{fn} -> {callee}")
                continue
            sub = self.worst(callee)
            if sub[0] > best[0] or not best[1]:
                best = sub
        self.onstack.discard(fn)
        depth = self.depths.get(fn, 1)
        result = (graph.frame[fn] * depth + best[0], [fn] * depth + best[1])
        self.memo[fn] = result
        return result


def worst_chains(graph: CallGraph, threads: dict[str, list[str]],
                 table: dict[str, list[str]], depths: dict[str, int]) -> list[Chain]:
    """The deepest chain from each thread's entries. A function that calls itself and has a
    depth in @p depths counts that many frames; any other cycle is cut where it closes (each
    function of it counted once) and reported."""
    chains: list[Chain] = []
    for thread, entries in threads.items():
        walk = _Walk(graph, table, depths)
        best: tuple[int, list[str]] = (-1, [])
        for entry in entries:
            got = walk.worst(entry)
            if got[0] > best[0]:
                best = got
        path = [(f, graph.frame.get(f, 0)) for f in best[1]]
        chains.append(Chain(thread, best[0], path, sorted(walk.recursion), sorted(walk.unknown)))
    return chains


def recursion_depths(table: dict[str, list[str]]) -> dict[str, int]:
    """The !recursion entry of the table: FUNCTION=DEPTH for each function that calls itself."""
    depths: dict[str, int] = {}
    for item in table.pop("!recursion", []):
        name, _, depth = item.partition("=")
        depths[name] = int(depth)
    return depths


def unresolved(graph: CallGraph, table: dict[str, list[str]], kept: set[str]) -> list[str]:
    """Callers with indirect calls, linked into the image, that the table does not cover."""
    out = []
    for caller, sites in sorted(graph.indirect.items()):
        plain = caller.rsplit(":", 1)[-1]
        if caller not in table and plain in kept:
            out.append(f"{caller} (calls through a pointer at {', '.join(sorted(set(sites)))})")
    return out


def stale_entries(graph: CallGraph, table: dict[str, list[str]]) -> list[str]:
    """Table entries naming a caller without indirect calls or a callee with no stack figure."""
    out = []
    for caller, targets in sorted(table.items()):
        if caller not in graph.indirect:
            out.append(f"{caller}: no indirect call in this caller any more")
        out.extend(f"{caller}: callee {t} is no function of the core" for t in targets
                   if t not in graph.frame)
    return out


